#!/usr/bin/env node
// The last line of the CI log (.ci/run): the test run's result, read from jest's own report
// (`npm test -- --json --outputFile=FILE`), so a reader of the log's tail finds it without
// scrolling past the checkers' output, and it can never be typed by hand.
//
//   node tools/ci/test-summary.mjs FILE           "2945 passed, 0 failed, 3 skipped"; exits 1
//                                                  unless tests ran and jest says they all passed
//   node tools/ci/test-summary.mjs --not-run WHY  "0 passed, 0 failed, 0 skipped (the tests did
//                                                  not run: WHY)"; exits 1
//
// Skipped counts jest's pending (skipped) and todo tests. Checked by test-summary.test.mjs
// beside it (`node --test tools/ci/test-summary.test.mjs`).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The counts line; `note` is added in parentheses. */
function countsLine(passed, failed, skipped, note) {
  const line = `${passed} passed, ${failed} failed, ${skipped} skipped`;
  return note ? `${line} (${note})` : line;
}

const plural = (n, one) => `${n} ${one}${n === 1 ? '' : 's'}`;

/** The line for a run that never reached the tests. */
export function notRun(reason) {
  return { line: countsLine(0, 0, 0, `the tests did not run: ${reason}`), ok: false };
}

/**
 * The line for jest's JSON report (the object `--json` writes), and whether the run counts as
 * passed: tests ran, none failed, and jest itself calls the run a success (a test file that
 * fails to load counts no failed test but is a failure).
 */
export function summarise(report) {
  const counts = ['numPassedTests', 'numFailedTests', 'numPendingTests', 'numTodoTests'];
  if (
    report === null ||
    typeof report !== 'object' ||
    counts.some((k) => !Number.isInteger(report[k]))
  ) {
    return { line: countsLine(0, 0, 0, "no test ran: the report is not jest's JSON"), ok: false };
  }
  const passed = report.numPassedTests;
  const failed = report.numFailedTests;
  const skipped = report.numPendingTests + report.numTodoTests;
  const notes = [];
  if (passed + failed + skipped === 0) notes.push('no test ran');
  if (report.numRuntimeErrorTestSuites > 0) {
    notes.push(`${plural(report.numRuntimeErrorTestSuites, 'test file')} failed to run`);
  }
  if (report.wasInterrupted) notes.push('the run was interrupted');
  if (report.success !== true && failed === 0 && notes.length === 0) {
    notes.push('jest reports the run as failed');
  }
  const ok = report.success === true && failed === 0 && passed + failed + skipped > 0;
  return { line: countsLine(passed, failed, skipped, notes.join('; ')), ok };
}

/** The line for the report in `file`: missing or unreadable means no test ran. */
export function summariseFile(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { line: countsLine(0, 0, 0, `no test ran: jest wrote no report to ${file}`), ok: false };
  }
  try {
    return summarise(JSON.parse(text));
  } catch {
    return { line: countsLine(0, 0, 0, `no test ran: ${file} is not JSON`), ok: false };
  }
}

function main(args) {
  const result =
    args[0] === '--not-run' && args.length === 2
      ? notRun(args[1])
      : args.length === 1 && !args[0].startsWith('--')
        ? summariseFile(args[0])
        : undefined;
  if (!result) {
    process.stderr.write('usage: test-summary.mjs JEST_JSON_FILE | --not-run REASON\n');
    return 2;
  }
  process.stdout.write(`${result.line}\n`);
  return result.ok ? 0 : 1;
}

if (process.argv[1] === fileURLToPath(import.meta.url))
  process.exitCode = main(process.argv.slice(2));
