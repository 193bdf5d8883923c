// node --test tools/ci/test-summary.test.mjs (run by .ci/run before the tests)
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { notRun, summarise } from './test-summary.mjs';

/** A report shaped like jest 30's `--json` output, for a run that passed. */
const aReport = (overrides = {}) => ({
  success: true,
  numTotalTests: 2948,
  numPassedTests: 2945,
  numFailedTests: 0,
  numPendingTests: 2,
  numTodoTests: 1,
  numTotalTestSuites: 140,
  numFailedTestSuites: 0,
  numRuntimeErrorTestSuites: 0,
  wasInterrupted: false,
  testResults: [],
  ...overrides,
});

describe('summarise', () => {
  it('counts passed, failed, and pending plus todo as skipped', () => {
    assert.deepEqual(summarise(aReport()), { line: '2945 passed, 0 failed, 3 skipped', ok: true });
  });

  it('fails a run with a failed test', () => {
    const report = aReport({ success: false, numPassedTests: 2944, numFailedTests: 1 });
    assert.deepEqual(summarise(report), { line: '2944 passed, 1 failed, 3 skipped', ok: false });
  });

  it('fails a run where no test ran', () => {
    const report = aReport({
      numTotalTests: 0,
      numPassedTests: 0,
      numPendingTests: 0,
      numTodoTests: 0,
    });
    assert.deepEqual(summarise(report), {
      line: '0 passed, 0 failed, 0 skipped (no test ran)',
      ok: false,
    });
  });

  it('fails a run where a test file could not load, though no test failed', () => {
    const report = aReport({
      success: false,
      numFailedTestSuites: 1,
      numRuntimeErrorTestSuites: 1,
    });
    assert.deepEqual(summarise(report), {
      line: '2945 passed, 0 failed, 3 skipped (1 test file failed to run)',
      ok: false,
    });
  });

  it('fails a run jest calls failed for another reason', () => {
    assert.deepEqual(summarise(aReport({ success: false })), {
      line: '2945 passed, 0 failed, 3 skipped (jest reports the run as failed)',
      ok: false,
    });
  });

  it('refuses what is not a jest report', () => {
    for (const report of [null, [], {}, { numPassedTests: '3' }]) {
      assert.equal(summarise(report).ok, false);
      assert.match(summarise(report).line, /^0 passed, 0 failed, 0 skipped \(no test ran/);
    }
  });
});

describe('notRun', () => {
  it('names the step that failed', () => {
    assert.deepEqual(notRun('npm run lint failed'), {
      line: '0 passed, 0 failed, 0 skipped (the tests did not run: npm run lint failed)',
      ok: false,
    });
  });
});

describe('the command', () => {
  const script = fileURLToPath(new URL('./test-summary.mjs', import.meta.url));
  const dir = mkdtempSync(join(tmpdir(), 'test-summary-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const run = (...args) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

  it('prints the line and exits 0 for a passed run', () => {
    const file = join(dir, 'passed.json');
    writeFileSync(file, JSON.stringify(aReport()));
    const { status, stdout } = run(file);
    assert.equal(stdout, '2945 passed, 0 failed, 3 skipped\n');
    assert.equal(status, 0);
  });

  it('exits 1 for a failed run', () => {
    const file = join(dir, 'failed.json');
    writeFileSync(file, JSON.stringify(aReport({ success: false, numFailedTests: 2 })));
    const { status, stdout } = run(file);
    assert.equal(stdout, '2945 passed, 2 failed, 3 skipped\n');
    assert.equal(status, 1);
  });

  it('exits 1 when jest wrote no report, or not JSON', () => {
    const missing = join(dir, 'missing.json');
    assert.deepEqual(
      [run(missing).stdout, run(missing).status],
      [`0 passed, 0 failed, 0 skipped (no test ran: jest wrote no report to ${missing})\n`, 1],
    );
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"numPassedTests": 3');
    assert.equal(
      run(broken).stdout,
      `0 passed, 0 failed, 0 skipped (no test ran: ${broken} is not JSON)\n`,
    );
    assert.equal(run(broken).status, 1);
  });

  it('prints the not-run line and exits 1', () => {
    const { status, stdout } = run('--not-run', 'npm ci failed');
    assert.equal(stdout, '0 passed, 0 failed, 0 skipped (the tests did not run: npm ci failed)\n');
    assert.equal(status, 1);
  });

  it('answers a wrong call with its usage, exit 2', () => {
    const { status, stderr } = run();
    assert.match(stderr, /^usage: /);
    assert.equal(status, 2);
  });
});
