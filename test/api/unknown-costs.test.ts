// Costs that are not known are said to be unknown, through the real server: an imported or live
// run that used tokens but has no cost is counted and named on its session and in the list's
// stats, never left out of a total that passes for the whole, nor shown as $0.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unpricedModelOf } from '../helpers/prices.js';
import { describe, expect, it } from 'vitest';
import { steppableClock } from '../../src-main/clock.js';
import { ListSessionsResponseSchema, type SessionSummary, type Stats } from '../../src-shared/sessions.js';
import { waitForResults } from '../helpers/agent-runs.js';
import { useCleanups } from '../helpers/cleanups.js';
import { filesUnder, HISTORY_FIXTURES } from '../helpers/hostile-history.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import {
  addHistorySource,
  createSession,
  seedWorkspace,
  startTestServer,
  type TestServer,
  useAgent,
} from '../helpers/server.js';
import { until } from '../helpers/until.js';

/** A model Codex offers that the price table has no price for (whichever it is at the table's date). */
const UNPRICED = unpricedModelOf('codex');

const cleanup = useCleanups();

/** A day after the Codex recordings' runs ended (2026-11-25T04:23Z): inside the stats' week. */
const NOW = '2026-11-26T00:00:00.000Z';

async function list(
  server: TestServer,
  apiKey: string,
): Promise<{ sessions: SessionSummary[]; stats: Stats }> {
  const response = await fetch(`${server.url}/api/sessions`, { headers: { 'x-api-key': apiKey } });
  expect(response.status).toBe(200);
  return ListSessionsResponseSchema.parse(await response.json());
}

/** Codex's recorded session files, their model changed to `model`, written an hour before NOW. */
function codexHistory(scenarios: string[], model: string): string {
  const root = mkdtempSync(join(tmpdir(), 'codex-history-'));
  cleanup(() => rmSync(root, { recursive: true, force: true }));
  for (const scenario of scenarios) {
    cpSync(join(HISTORY_FIXTURES, 'codex', '0.169.0', scenario), root, { recursive: true });
  }
  const anHourBefore = new Date(Date.parse(NOW) - 3_600_000);
  for (const file of filesUnder(root, /\.jsonl$/u)) {
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('"model":"gpt-5.5"', `"model":"${model}"`));
    utimesSync(file, anHourBefore, anHourBefore);
  }
  return root;
}

async function importCodex(scenarios: string[], model: string) {
  const server = await startTestServer({ clock: steppableClock(NOW) });
  cleanup(() => server.dispose());
  const owner = await seedWorkspace(server);
  await addHistorySource(server, owner.user.cookie, owner.organizationId, {
    kind: 'codex',
    rootDir: codexHistory(scenarios, model),
  });
  const shown = await until(
    () => list(server, owner.apiKey),
    (l) => l.sessions.length === scenarios.length && l.sessions.every((s) => s.usage !== undefined),
    30_000,
  );
  return { server, owner, ...shown };
}

describe('a cost that is not known', () => {
  it('imported Codex sessions on a model the price table lacks: each session and the week say so, and name it', async () => {
    const { sessions, stats } = await importCodex(['plain-answer', 'todo-list'], UNPRICED);
    for (const session of sessions) {
      expect(session.usage?.inputTokens).toBeGreaterThan(0);
      // No dollar figure stands for runs nothing priced: not a cost, not a zero.
      expect(session.usage?.costUsd).toBeUndefined();
      expect(session.usage?.costUnknown).toEqual({ runs: expect.any(Number) as number, models: [UNPRICED] });
      expect(session.usage!.costUnknown!.runs).toBeGreaterThanOrEqual(1);
    }
    expect(stats.costPastWeek).toBe(0);
    expect(stats.costUnknownPastWeek).toEqual([{ agent: 'codex', sessions: 2, models: [UNPRICED] }]);
  });

  it('imported Codex sessions on a model the table prices: a cost, and nothing unknown', async () => {
    const { sessions, stats } = await importCodex(['plain-answer'], 'gpt-5.2');
    const usage = sessions[0]!.usage!;
    // genai-prices' gpt-5.2 prices, dollars per million tokens: input 1.75, cached input 0.175, output 14.
    const expected =
      (usage.inputTokens * 1.75 + usage.cacheReadTokens * 0.175 + usage.outputTokens * 14) / 1e6;
    expect(usage.costUsd).toBeCloseTo(expected, 6);
    expect(usage.costUnknown).toBeUndefined();
    expect(stats.costPastWeek).toBeCloseTo(expected, 6);
    expect(stats.costUnknownPastWeek).toBeUndefined();
  });
});

describe('a live run whose agent reports no cost', () => {
  async function codexServer() {
    const dir = installRecordedClis(mkdtempSync(join(tmpdir(), 'unknown-costs-')));
    cleanup(() => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, 'calls.jsonl');
    const server = await startTestServer({
      agentEnv: {
        PATH: `${dir}:${process.env.PATH ?? ''}`,
        RECORDED_CLI_LOG: log,
        SESSIONDESK_OS_SANDBOX: 'off',
      },
      agentEnvNames: ['RECORDED_CLI_LOG'],
    });
    cleanup(() => server.dispose());
    const owner = await seedWorkspace(server);
    await useAgent(server, owner, 'codex');
    const run = async (model: string) => {
      const { id } = await createSession(server, owner.user.cookie, {
        organizationId: owner.organizationId,
        initialMessage: 'Say hello. scenario:plain-answer',
        // No model: Codex runs its own default.
        ...(model === '' ? {} : { model }),
      });
      await waitForResults(server, owner.user.cookie, id);
      return id;
    };
    const refused = () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .trim()
            .split('\n')
            .flatMap((l) => (JSON.parse(l) as { problem?: string }).problem ?? [])
        : [];
    return { server, owner, run, refused };
  }

  it('Codex on a model the table lacks, on its own default, and on a priced model: two unknown, one priced', async () => {
    const { server, owner, run, refused } = await codexServer();
    const unpriced = await run(UNPRICED);
    const ownDefault = await run('');
    const priced = await run('gpt-5.2');
    expect(refused()).toEqual([]);
    const { sessions, stats } = await until(
      () => list(server, owner.apiKey),
      (l) => l.sessions.every((s) => s.usage !== undefined),
      10_000,
    );
    const usage = (id: string) => sessions.find((s) => s.id === id)!.usage!;
    expect(usage(unpriced).costUsd).toBeUndefined();
    expect(usage(unpriced).costUnknown).toEqual({ runs: 1, models: [UNPRICED] });
    // Codex says neither its cost nor which model it chose: unknown, with no model to name.
    expect(usage(ownDefault).costUsd).toBeUndefined();
    expect(usage(ownDefault).costUnknown).toEqual({ runs: 1, models: [] });
    expect(usage(priced).costUsd).toBeGreaterThan(0);
    expect(usage(priced).costUnknown).toBeUndefined();
    expect(stats.costPastWeek).toBe(usage(priced).costUsd);
    expect(stats.costUnknownPastWeek).toEqual([{ agent: 'codex', sessions: 2, models: [UNPRICED] }]);
  });
});
