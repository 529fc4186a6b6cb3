import { it, type TestOptions } from 'vitest';
import { TEST_BACKEND } from './test-database.js';
import { IN_CI, missingTools, warnSkipped, type Tool } from './tools.js';

declare module 'vitest' {
  interface TaskMeta {
    /** Why a test was skipped, for the summary CI prints (.ci/summary.mjs). */
    skipReason?: string;
  }
}

/**
 * The options of a describe() or it() whose tests need `tools`:
 * `describe('…', requireTools(bubblewrapTool()), () => …)`. With everything found they run.
 * Otherwise they are skipped, their reason in the JSON report; outside CI with a warning naming
 * what is missing, and under CI (CI=true) a test that fails saying so is added beside them:
 * on CI, a missing tool is a failure, never a silent skip.
 */
export function requireTools(...tools: Tool[]): TestOptions {
  const missing = missingTools(tools);
  if (missing === null) return {};
  if (IN_CI) {
    it(`needs ${tools.map((t) => t.name).join(', ')}`, () => {
      throw new Error(`missing under CI, where every tool must be installed (.ci/run): ${missing}`);
    });
  } else {
    warnSkipped(missing);
  }
  return { skip: true, meta: { skipReason: missing } };
}

/**
 * The options of a test this machine cannot run and CI need not either (a Node older than the
 * launcher's floor, say): skipped with its reason in the report, under CI too.
 */
export function skipWithReason(reason: string | null): TestOptions {
  if (reason === null) return {};
  warnSkipped(reason);
  return { skip: true, meta: { skipReason: reason } };
}

/**
 * The options of a describe() or it() that needs the desktop's sql.js store itself (its files,
 * its synchronous repositories, its demo workspace): run over sql.js, skipped with `reason`
 * when the API tests run over PostgreSQL (vitest.postgres.config.ts).
 */
export function sqljsOnly(reason: string): TestOptions {
  return skipWithReason(TEST_BACKEND === 'postgres' ? `sql.js only: ${reason}` : null);
}
