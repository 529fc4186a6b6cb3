// Prints what the test runs counted as one line: "Tests: N passed, N failed, N skipped".
import { existsSync, readFileSync } from 'node:fs';

const read = (name) => {
  const url = new URL(`../test-results/${name}`, import.meta.url);
  return existsSync(url) ? JSON.parse(readFileSync(url, 'utf8')) : null;
};

let passed = 0;
let failed = 0;
let skipped = 0;
const vitest = read('vitest.json');
if (vitest) {
  passed += vitest.numPassedTests;
  failed += vitest.numFailedTests;
  skipped += vitest.numPendingTests + vitest.numTodoTests;
}
const playwright = read('playwright.json');
if (playwright) {
  passed += playwright.stats.expected + playwright.stats.flaky;
  failed += playwright.stats.unexpected;
  skipped += playwright.stats.skipped;
}
console.log(`Tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
