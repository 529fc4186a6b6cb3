// Property-based fuzzing of the history import: the real recorded session files of Claude Code,
// Codex, Gemini CLI (0.61.0 and 0.19.1's chat documents) and Qwen Code, mutated (times in many forms, ids,
// values of another type, huge and empty values, bytes that are not UTF-8, records cut short or
// repeated), imported by the real importer in a real server, through the route the command uses.
// Whatever a file holds: the import answers, and the list and every session's full form,
// summary and messages answer 200 in their schema's form, as the dashboard parses them.
//
// Bounded by default; `npm run fuzz` runs it long. FUZZ_HISTORY_RUNS and FUZZ_SEED change the
// number of runs and the seed (fixed by default, so a failure replays).
import { cpSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HISTORY_IMPORT_PATH } from '../../src-shared/history.js';
import { SessionSummaryResponseSchema } from '../../src-shared/session-summary.js';
import {
  FullSessionResponseSchema,
  ListSessionsResponseSchema,
  MessagesPageResponseSchema,
  type HistoryKind,
} from '../../src-shared/sessions.js';
import { ADMIN_TOKEN_HEADER } from '../../src-main/server/routes/admin.js';
import { filesUnder, HISTORY_FIXTURES } from '../helpers/hostile-history.js';
import { mutate, mutationArb } from '../helpers/history-mutations.js';
import { seedWorkspace, startTestServer, tempDir, withKey, type TestServer } from '../helpers/server.js';

/** Set by npm for `npm run fuzz`: a portable way to say "long". */
const LONG = process.env.npm_lifecycle_event === 'fuzz';
const RUNS = Number(process.env.FUZZ_HISTORY_RUNS ?? (LONG ? 1000 : 30));
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_126);
const ADMIN_TOKEN = 'history-fuzz-admin-token';

/** A session file of a recorded scenario: its folder is copied whole, the file then mutated. */
interface Recorded {
  kind: HistoryKind;
  scenario: string;
  file: string;
}

function recordings(): Recorded[] {
  const found: Recorded[] = [];
  for (const kind of readdirSync(HISTORY_FIXTURES)) {
    const kindDir = join(HISTORY_FIXTURES, kind);
    if (!statSync(kindDir).isDirectory()) continue;
    for (const version of readdirSync(kindDir))
      for (const name of readdirSync(join(kindDir, version))) {
        const scenario = join(kindDir, version, name);
        for (const file of filesUnder(scenario, /^(session-|rollout-).*\.jsonl?$|^[^.]+\.jsonl$/u))
          found.push({ kind: kind as HistoryKind, scenario, file: relative(scenario, file) });
      }
  }
  return found;
}

let server: TestServer;
let key: string;
let org: string;
let work: string;
const RECORDED = recordings();
/** Sessions already read in full, by id, with the message count they were read at. */
const checked = new Map<string, number>();
let runNumber = 0;

beforeAll(async () => {
  server = await startTestServer({ adminToken: ADMIN_TOKEN });
  const owner = await seedWorkspace(server);
  key = owner.apiKey;
  org = owner.organizationId;
  work = tempDir('history-fuzz-');
});

afterAll(async () => {
  await server?.dispose();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** GET as the key holder: 200, and the body in the schema's form. */
async function expectAnswer(
  path: string,
  schema: { safeParse(v: unknown): { success: boolean; error?: unknown } },
) {
  const response = await withKey(server, key, 'GET', path);
  const text = await response.text();
  expect(response.status, `${path}: ${text.slice(0, 2000)}`).toBe(200);
  const parsed = schema.safeParse(JSON.parse(text));
  expect(parsed.success, `${path} out of its schema: ${String(parsed.error)}\n${text.slice(0, 2000)}`).toBe(
    true,
  );
  return JSON.parse(text) as unknown;
}

describe('history import of mutated CLI files', () => {
  it('always answers, and every session reads in its schema', async () => {
    expect(RECORDED.map((r) => r.kind)).toEqual(
      expect.arrayContaining(['claude-code', 'codex', 'gemini', 'qwen-code']),
    );
    expect(RECORDED.some((r) => r.file.endsWith('.json'))).toBe(true);
    const property = fc.asyncProperty(
      fc.constantFrom(...RECORDED),
      fc.array(mutationArb, { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      async (recorded, mutations, settled) => {
        runNumber += 1;
        const root = join(work, `run-${runNumber}`);
        cpSync(recorded.scenario, root, { recursive: true });
        const target = join(root, recorded.file);
        writeFileSync(target, mutate(readFileSync(target), target.endsWith('.json'), mutations));
        // A settled file's session is finished; a fresh one is going on.
        const at = new Date(Date.now() - (settled ? 3_600_000 : 0));
        for (const file of filesUnder(root, /./u)) utimesSync(file, at, at);

        const imported = await fetch(`${server.url}${HISTORY_IMPORT_PATH}`, {
          method: 'POST',
          headers: { [ADMIN_TOKEN_HEADER]: ADMIN_TOKEN, 'content-type': 'application/json' },
          body: JSON.stringify({
            workspace: org,
            sources: [{ kind: recorded.kind, rootDir: root, explicit: true }],
          }),
        });
        expect(imported.status, await imported.clone().text()).toBe(200);

        const list = (await expectAnswer(
          `/api/sessions?organizationId=${org}`,
          ListSessionsResponseSchema,
        )) as { sessions: { id: string; messageCount: number }[] };
        for (const { id, messageCount } of list.sessions) {
          if (checked.get(id) === messageCount) continue;
          await expectAnswer(`/api/sessions/${id}`, FullSessionResponseSchema);
          await expectAnswer(`/api/sessions/${id}/summary`, SessionSummaryResponseSchema);
          await expectAnswer(`/api/sessions/${id}/messages?limit=1000`, MessagesPageResponseSchema);
          checked.set(id, messageCount);
        }
      },
    );
    try {
      await fc.assert(property, { seed: SEED, numRuns: RUNS, endOnFailure: process.env.FUZZ_SHRINK !== '1' });
    } catch (err) {
      console.error(`history fuzz failed; replay with FUZZ_SEED=${SEED} FUZZ_HISTORY_RUNS=${RUNS}`);
      throw err;
    }
    // Some runs made sessions: the property was not vacuous.
    expect(checked.size).toBeGreaterThan(0);
  }, 600_000);
});
