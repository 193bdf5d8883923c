// How a worker thread (chunking, embedding) or a child process (the embedded cluster's
// watchdog) loads its TypeScript entry when the code runs from sources (jest, ts-node); the
// built server's load the compiled .js and never come here. Below every other folder of src/:
// it requires nothing of the application's.
//
// Each thread compiles its module graph again: TypeScript's transpiler costs some 1.3 s of CPU
// per thread (loading it, then a second for the files), and the threads are niced, so on a
// machine busy with other work (a test run's other suites) a thread took 10 to 20 s to start.
// Here each file's JavaScript is kept in node_modules/.cache of the checkout, one file per
// source file named by its path and stamped with what it was compiled from (the source,
// tsconfig.json, the TypeScript version and this file): a thread whose files did not change
// loads them in some 0.1 s, and TypeScript is loaded only on a miss. Stack traces point into
// the sources (inline source maps, read once enabled here). SWC is not used: its native
// module loaded in a thread made the process die of SIGSEGV when idle threads were ended.
'use strict';
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const { threadId } = require('node:worker_threads');

const ROOT = join(__dirname, '..', '..');
const CACHE = join(ROOT, 'node_modules', '.cache', 'agent-data-threads');
const TSCONFIG = join(ROOT, 'tsconfig.json');

const stamp = createHash('sha256')
  .update(readFileSync(TSCONFIG))
  .update(readFileSync(require.resolve('typescript/package.json')))
  .update(readFileSync(__filename))
  .digest('hex');

let options;

/** tsconfig.json's compiler options, as a thread's files are compiled with them. */
function compilerOptions(ts) {
  const message = (diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
  const parsed = ts.getParsedCommandLineOfConfigFile(
    TSCONFIG,
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
        throw new Error(`${TSCONFIG} cannot be read: ${message(diagnostic)}`);
      },
    },
  );
  if (!parsed || parsed.errors.length > 0) {
    const first = parsed?.errors[0];
    throw new Error(`${TSCONFIG} cannot be read${first ? `: ${message(first)}` : ''}`);
  }
  return {
    ...parsed.options,
    module: ts.ModuleKind.CommonJS,
    sourceMap: false,
    inlineSourceMap: true,
    inlineSources: false,
    incremental: false,
    tsBuildInfoFile: undefined,
    // The map's sources relative to the file itself (not to dist/).
    outDir: undefined,
    rootDir: undefined,
    declaration: false,
    noEmit: false,
  };
}

function compile(source, filename) {
  const ts = require('typescript');
  options ??= compilerOptions(ts);
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
      const partial = `${file}.${process.pid}.${threadId}`;
      writeFileSync(partial, header + output);
      renameSync(partial, file);
    } catch {
      // A read-only checkout: compiled again next time.
    }
  }
  module._compile(output, filename);
}

/** Requires the TypeScript file `entry` (absolute), its own .ts imports compiled likewise. */
module.exports = function requireFromSources(entry) {
  process.setSourceMapsEnabled(true);
  require.extensions['.ts'] = load;
  return require(entry);
};
