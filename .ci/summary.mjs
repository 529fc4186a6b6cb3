// Prints what the test runs counted as one line: "Tests: N passed, N failed, N skipped"; then
// every skipped test, grouped by why it was skipped (test/helpers/require-tools.ts puts the
// reason in vitest's report, Playwright's test.skip in its annotations), and any test file that
// failed before its tests ran.
import { existsSync, readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (name) => {
  const url = new URL(`../test-results/${name}`, import.meta.url);
  return existsSync(url) ? JSON.parse(readFileSync(url, 'utf8')) : null;
};
const NO_REASON = 'no reason given';

let passed = 0;
let failed = 0;
let skipped = 0;
/** Why → the tests skipped for it. */
const skips = new Map();
const skip = (reason, name) => skips.set(reason, [...(skips.get(reason) ?? []), name]);
const brokenFiles = [];

// The unit and API tests over sql.js, then the API tests again over PostgreSQL.
for (const [report, label] of [
  ['vitest.json', ''],
  ['vitest-postgres.json', ' (on PostgreSQL)'],
]) {
  const vitest = read(report);
  if (!vitest) continue;
  passed += vitest.numPassedTests;
  failed += vitest.numFailedTests;
  skipped += vitest.numPendingTests + vitest.numTodoTests;
  for (const file of vitest.testResults) {
    const path = relative(root, file.name) + label;
    if (file.status === 'failed' && file.assertionResults.length === 0) {
      brokenFiles.push(`${path}: ${file.message || 'failed before its tests ran'}`);
    }
    for (const test of file.assertionResults) {
      if (!['skipped', 'pending', 'todo'].includes(test.status)) continue;
      const reason = test.status === 'todo' ? 'to do' : (test.meta?.skipReason ?? NO_REASON);
      skip(reason, `${path} › ${test.fullName}`);
    }
  }
}

/** Every test of a Playwright suite and the suites inside it, with the spec it belongs to. */
function* playwrightTests(suite) {
  for (const spec of suite.specs ?? []) for (const test of spec.tests ?? []) yield { spec, test };
  for (const inner of suite.suites ?? []) yield* playwrightTests(inner);
}

const playwright = read('playwright.json');
if (playwright) {
  passed += playwright.stats.expected + playwright.stats.flaky;
  failed += playwright.stats.unexpected;
  skipped += playwright.stats.skipped;
  for (const suite of playwright.suites ?? []) {
    for (const { spec, test } of playwrightTests(suite)) {
      if (test.status !== 'skipped') continue;
      const reasons = (test.annotations ?? [])
        .filter((a) => a.type === 'skip' || a.type === 'fixme')
        .map((a) => a.description)
        .filter(Boolean);
      skip(reasons.join('; ') || NO_REASON, `test/e2e/${spec.file} › ${spec.title}`);
    }
  }
  for (const error of playwright.errors ?? []) brokenFiles.push(error.message?.split('\n')[0] ?? 'an error');
}

console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
if (skips.size > 0) {
  console.log('Skipped:');
  for (const [reason, names] of [...skips].sort((a, b) => b[1].length - a[1].length)) {
    console.log(`  ${names.length} because ${reason}:`);
    for (const name of names) console.log(`    ${name}`);
  }
}
if (brokenFiles.length > 0) {
  console.log('Failed before their tests ran:');
  for (const line of brokenFiles) console.log(`  ${line}`);
}
