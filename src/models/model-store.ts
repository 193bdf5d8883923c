import { createHash, randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { knownModel, knownModelNames, type KnownModel } from './known-models';

/**
 * Installed models on disk, one folder per model under `MODELS_DIR`:
 *
 *     MODELS_DIR/bge-small-en-v1.5/model.onnx
 *                                 /tokenizer.json
 *                                 /model.json      the manifest, written last
 *
 * A model is installed whole or not at all: its files are gathered in a hidden folder of
 * `MODELS_DIR` (`.incoming-…`, same file system), the manifest (sizes and SHA-256 of each
 * file) written last, and the folder renamed into place in one step. A folder without a
 * manifest, or whose files do not have the sizes the manifest gives, is not a model.
 */
export const MODEL_FILE = 'model.onnx';
export const TOKENIZER_FILE = 'tokenizer.json';
export const MANIFEST_FILE = 'model.json';
/** Bump when the manifest changes shape; older ones are read as not installed. */
const MANIFEST_FORMAT = 1;

export interface FileDigest {
  readonly bytes: number;
  readonly sha256: string;
}

export interface ModelManifest {
  readonly format: number;
  readonly name: string;
  readonly dimensions: number;
  readonly files: { readonly [MODEL_FILE]: FileDigest; readonly [TOKENIZER_FILE]: FileDigest };
  /** Where the files came from: a URL of the hub, or the path given to `models add`. */
  readonly source: string;
  readonly installed_at: string;
}

/** A model found complete under MODELS_DIR. */
export interface InstalledModel {
  readonly model: KnownModel;
  readonly dir: string;
  readonly manifest: ModelManifest;
  /** Bytes of its files. */
  readonly bytes: number;
}

/** A folder of MODELS_DIR and what is wrong with it, when something is. */
export interface ModelFolder {
  readonly name: string;
  readonly installed?: InstalledModel;
  readonly problem?: string;
}

/**
 * Something about a model that stops a command or the start: the message names what is
 * wrong and, where there is one, what to run to fix it.
 */
export class ModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ModelError';
  }
}

/** The model named `name` as installed under `modelsDir`; a ModelError naming the fix otherwise. */
export async function readInstalled(modelsDir: string, name: string): Promise<InstalledModel> {
  const model = knownModel(name);
  if (model === undefined) throw unknownModel(name);
  const folder = await inspectFolder(modelsDir, model.name);
  if (folder.installed) return folder.installed;
  throw new ModelError(
    `the model ${model.name} is ${folder.problem} in ${modelsDir}: run \`agent-data models pull ${model.name}\`, or \`agent-data models add ${model.name} PATH\` with its files`,
  );
}

/** Every folder of `modelsDir` (hidden ones aside), in name order; none when it does not exist. */
export async function listFolders(modelsDir: string): Promise<ModelFolder[]> {
  let names: string[];
  try {
    names = (await readdir(modelsDir, { withFileTypes: true }))
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.'))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return Promise.all(names.map((name) => inspectFolder(modelsDir, name)));
}

/** The folder of `name` under `modelsDir`, and whether it holds that model whole. */
async function inspectFolder(modelsDir: string, name: string): Promise<ModelFolder> {
  const model = knownModel(name);
  if (model === undefined || model.name !== name) {
    return { name, problem: `not a model this server knows (${name})` };
  }
  const dir = join(modelsDir, name);
  let manifest: ModelManifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as ModelManifest;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      name,
      problem:
        code === 'ENOENT' || code === 'ENOTDIR'
          ? 'not installed'
          : 'installed incompletely (its manifest cannot be read)',
    };
  }
  if (
    manifest?.format !== MANIFEST_FORMAT ||
    manifest.name !== name ||
    typeof manifest.files?.[MODEL_FILE]?.bytes !== 'number' ||
    typeof manifest.files?.[TOKENIZER_FILE]?.bytes !== 'number'
  ) {
    return { name, problem: 'installed incompletely (its manifest is not one this version reads)' };
  }
  let bytes = 0;
  for (const file of [MODEL_FILE, TOKENIZER_FILE] as const) {
    const size = await stat(join(dir, file)).then(
      (s) => s.size,
      () => undefined,
    );
    if (size === undefined) return { name, problem: `installed incompletely (${file} is missing)` };
    if (size !== manifest.files[file].bytes) {
      return {
        name,
        problem: `damaged (${file} has ${size} bytes, ${manifest.files[file].bytes} were installed)`,
      };
    }
    bytes += size;
  }
  return { name, installed: { model, dir, manifest, bytes } };
}

/**
 * Whether every file of `installed` still has the SHA-256 its manifest gives; the message of
 * a ModelError otherwise. Reads the files whole (a q8 model: some 50 ms).
 */
export async function verifyInstalled(installed: InstalledModel): Promise<void> {
  for (const file of [MODEL_FILE, TOKENIZER_FILE] as const) {
    const { sha256 } = await digestOf(join(installed.dir, file));
    if (sha256 !== installed.manifest.files[file].sha256) {
      throw new ModelError(
        `the model ${installed.model.name} is damaged (${file} is not the file installed): run \`agent-data models pull ${installed.model.name}\` or \`agent-data models add\` again`,
      );
    }
  }
}

/** Size and SHA-256 of a file, read as a stream. */
export async function digestOf(path: string): Promise<FileDigest> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(path)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { bytes, sha256: hash.digest('hex') };
}

/** An install that another replaced, as its manifest gave it (empty when it could not be read). */
export interface ReplacedInstall {
  readonly source?: string;
  readonly installed_at?: string;
}

/**
 * Installs `model` from its two files (`move`: they may be renamed rather than copied, being
 * in `modelsDir` already), replacing any earlier install of it only once the new one is
 * whole (`replaced` says what the earlier one was). The files must have been checked
 * (model-check.ts) before.
 */
export async function installModel(
  modelsDir: string,
  model: KnownModel,
  files: { readonly model: string; readonly tokenizer: string },
  source: string,
  options: { move?: boolean } = {},
): Promise<{ installed: InstalledModel; replaced?: ReplacedInstall }> {
  await mkdir(modelsDir, { recursive: true });
  const incoming = await makeIncoming(modelsDir);
  try {
    const place = options.move ? rename : copyFile;
    await place(files.model, join(incoming, MODEL_FILE));
    await place(files.tokenizer, join(incoming, TOKENIZER_FILE));
    const manifest: ModelManifest = {
      format: MANIFEST_FORMAT,
      name: model.name,
      dimensions: model.dimensions,
      files: {
        [MODEL_FILE]: await digestOf(join(incoming, MODEL_FILE)),
        [TOKENIZER_FILE]: await digestOf(join(incoming, TOKENIZER_FILE)),
      },
      source,
      installed_at: new Date().toISOString(),
    };
    await writeFile(join(incoming, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    const dir = join(modelsDir, model.name);
    // An earlier install is set aside, not deleted, until the new one is in place.
    const earlier = join(modelsDir, `.replaced-${randomBytes(6).toString('hex')}`);
    const replaced = await earlierInstall(dir);
    const hadEarlier = await rename(dir, earlier).then(
      () => true,
      (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return false;
        throw error;
      },
    );
    await rename(incoming, dir);
    if (hadEarlier) await rm(earlier, { recursive: true, force: true });
    const bytes = manifest.files[MODEL_FILE].bytes + manifest.files[TOKENIZER_FILE].bytes;
    return {
      installed: { model, dir, manifest, bytes },
      ...(hadEarlier ? { replaced: replaced ?? {} } : {}),
    };
  } catch (error) {
    await rm(incoming, { recursive: true, force: true });
    throw error;
  }
}

/** Where the model installed in `dir` came from and when, as far as its manifest says. */
async function earlierInstall(dir: string): Promise<ReplacedInstall | undefined> {
  try {
    const manifest = JSON.parse(
      await readFile(join(dir, MANIFEST_FILE), 'utf8'),
    ) as Partial<ModelManifest>;
    return {
      ...(typeof manifest.source === 'string' ? { source: manifest.source } : {}),
      ...(typeof manifest.installed_at === 'string' ? { installed_at: manifest.installed_at } : {}),
    };
  } catch {
    return undefined;
  }
}

/** A new hidden folder in `modelsDir` to gather a model's files in before it is renamed into place. */
export async function makeIncoming(modelsDir: string): Promise<string> {
  const incoming = join(modelsDir, `.incoming-${randomBytes(6).toString('hex')}`);
  await mkdir(incoming, { recursive: true });
  return incoming;
}

export function unknownModel(name: string): ModelError {
  return new ModelError(`no model is known by the name "${name}" (known: ${knownModelNames()})`);
}
