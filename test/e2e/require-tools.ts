import { test } from '@playwright/test';
import { IN_CI, missingTools, warnSkipped, type Tool } from '../helpers/tools.js';

/**
 * Called first in a test that needs `tools`. With everything found it returns. Otherwise,
 * under CI (CI=true) the test fails saying what is missing; elsewhere it is skipped, with that
 * reason in the report (and a warning).
 */
export function requireTools(...tools: Tool[]): void {
  const missing = missingTools(tools);
  if (missing === null) return;
  if (IN_CI) throw new Error(`missing under CI, where every tool must be installed (.ci/run): ${missing}`);
  warnSkipped(missing);
  test.skip(true, missing);
}
