// How a worker thread loads its TypeScript entry when the code runs from sources (jest,
// ts-node); the built server's threads load the compiled .js and never come here.
//
// Each thread compiles its module graph again: TypeScript's transpiler costs some 1.3 s of CPU
// per thread (loading it, then a second for the files), and the threads are niced, so on a
// machine busy with other work (a test run's other suites) a thread took 10 to 20 s to start.
// Here each file's JavaScript is kept in the temporary folder, one file per source file named
// by its path and stamped with what it was compiled from (the source, tsconfig.json and the
// TypeScript version): a thread whose files did not change loads them in some 0.1 s, and
// TypeScript is loaded only on a miss. SWC is not used: its native module loaded in a thread
// made the process die of SIGSEGV when idle threads were ended.
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');

const ROOT = join(__dirname, '..', '..');
const CACHE = join(tmpdir(), 'agent-data-compiled-sources');

const stamp = createHash('sha256')
  .update(readFileSync(join(ROOT, 'tsconfig.json')))
  .update(readFileSync(require.resolve('typescript/package.json')))
  .digest('hex');

let options;

function compile(source, filename) {
  const ts = require('typescript');
  if (!options) {
    const parsed = ts.getParsedCommandLineOfConfigFile(
      join(ROOT, 'tsconfig.json'),
      {},
      {
        ...ts.sys,
        onUnRecoverableConfigFileDiagnostic: () => undefined,
      },
    );
    options = {
      ...(parsed ? parsed.options : {}),
      module: ts.ModuleKind.CommonJS,
      sourceMap: false,
      inlineSourceMap: true,
      inlineSources: false,
      incremental: false,
      tsBuildInfoFile: undefined,
      declaration: false,
      noEmit: false,
    };
  }
  return ts.transpileModule(source, { compilerOptions: options, fileName: filename }).outputText;
}

function load(module, filename) {
  const source = readFileSync(filename, 'utf8');
  const key = createHash('sha256').update(stamp).update(source).digest('hex');
  const file = join(CACHE, `${createHash('sha256').update(filename).digest('hex')}.js`);
  const header = `// ${key}\n`;
  let output;
  try {
    const kept = readFileSync(file, 'utf8');
    if (kept.startsWith(header)) output = kept.slice(header.length);
  } catch {
    // Not compiled yet.
  }
  if (output === undefined) {
    output = compile(source, filename);
    try {
      mkdirSync(CACHE, { recursive: true });
      // Threads compiling the same file at once: each writes its own, the last rename wins.
      const partial = `${file}.${process.pid}.${require('node:worker_threads').threadId}`;
      writeFileSync(partial, header + output);
      renameSync(partial, file);
    } catch {
      // A read-only temporary folder: compiled again next time.
    }
  }
  module._compile(output, filename);
}

/** Requires the TypeScript file `entry` (absolute), its own .ts imports compiled likewise. */
module.exports = function requireFromSources(entry) {
  require.extensions['.ts'] = load;
  return require(entry);
};
