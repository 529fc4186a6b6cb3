import { loadavg } from 'node:os';
import { SearchResponseSchema } from '../src-shared/search.js';
import type { Message } from '../src-shared/sessions.js';
import { createAccounts } from '../src-main/accounts/accounts.js';
import { systemClock } from '../src-main/clock.js';
import { storageOf } from '../src-main/store/sqljs-storage.js';
import type { Storage } from '../src-main/store/storage.js';
import { startCluster } from '../test/helpers/postgres-cluster.js';
import { startTestServer } from '../test/helpers/server.js';
import { startTeamApp } from '../test/helpers/team-app.js';
import { TextPool } from './corpus.js';
import { percentile } from './load.js';
import { round } from './report.js';
import { ConversationMaker, RARE } from './search-corpus.js';
import { randomGenerator } from './seed.js';

/**
 * Search on the desktop (sql.js store, FTS5 index) and on a team server (PostgreSQL, tsvector)
 * side by side: the same few thousand Claude-Code-shaped messages written to both through the
 * product's storage, the same searches over HTTP, taking turns; p50 and p95 of each.
 *
 *   node ./bin/run-ts.js bench/search-postgres.ts [messages]
 */

const MESSAGES = Number(process.argv[2] ?? 3000);
const PER_SESSION = 30;
const RUNS = 25;
const QUERIES: Record<string, string[]> = {
  rare: RARE.slice(0, 5),
  common: ['the', 'function', 'return const'],
  prefix: ['func*', 'requ*', 'prom*'],
  phrase: ['"of the"', '"return this"', '"is not"'],
};

/** The corpus, the same on either database: sessions of PER_SESSION messages, rare words planted. */
async function seed(storage: Storage): Promise<{ key: string; organizationId: string }> {
  const accounts = createAccounts(storage, systemClock);
  await accounts.createUser({ email: 'ada@bench.test', name: 'Ada', password: 'bench password, not secret' });
  const { organizationId } = await accounts.createWorkspace({ name: 'Search', ownerEmail: 'ada@bench.test' });
  const { key } = await accounts.createKey({ organizationId });
  const ada = (await storage.repos.users.findByEmail('ada@bench.test'))!;
  const random = randomGenerator(0x5ea4c5);
  const maker = new ConversationMaker(random, new TextPool(random));
  const at = new Date().toISOString();
  for (let n = 0; n * PER_SESSION < MESSAGES; n += 1) {
    const id = `ses_bench_${String(n).padStart(5, '0')}`;
    const messages: Message[] = Array.from({ length: PER_SESSION - 1 }, (_, i) =>
      maker.next(false, i === 3 && n < RARE.length ? RARE[n] : undefined),
    );
    await storage.write(async (tx) => {
      await tx.sessions.insert({
        id,
        workspaceId: organizationId,
        authorId: ada.id,
        title: `Session ${n}`,
        model: 'm',
        createdAt: at,
        baseBranch: 'main',
        initialMessage: `Session ${n}: find why the build is slow`,
      });
      for (const message of messages) await tx.sessions.appendMessage(id, organizationId, message, null, at);
    });
  }
  return { key, organizationId };
}

async function timed(url: string, key: string, organizationId: string, q: string) {
  const began = performance.now();
  const response = await fetch(
    `${url}/api/search?organizationId=${organizationId}&q=${encodeURIComponent(q)}`,
    {
      headers: { 'x-api-key': key },
    },
  );
  const body = SearchResponseSchema.parse(await response.json());
  return { ms: performance.now() - began, hits: body.hits.length, complete: body.indexing.complete };
}

async function main(): Promise<void> {
  const cluster = await startCluster();
  const desktop = await startTestServer();
  const team = await startTeamApp(await cluster.createDatabase('bench_search'));
  try {
    let began = performance.now();
    const onDesktop = await seed(storageOf(desktop.store));
    const desktopSeedMs = performance.now() - began;
    began = performance.now();
    const onTeam = await seed(team.storage);
    const teamSeedMs = performance.now() - began;
    while (!(await timed(desktop.url, onDesktop.key, onDesktop.organizationId, RARE[0]!)).complete) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const sides = {
      'sql.js + FTS5': (q: string) => timed(desktop.url, onDesktop.key, onDesktop.organizationId, q),
      'PostgreSQL tsvector': (q: string) => timed(team.url, onTeam.key, onTeam.organizationId, q),
    };
    console.log(
      `${MESSAGES} messages in ${MESSAGES / PER_SESSION} sessions; written in ${round(desktopSeedMs / 1000)} s ` +
        `(sql.js, indexed after) and ${round(teamSeedMs / 1000)} s (PostgreSQL, indexed with each append); ` +
        `load average ${loadavg()
          .map((l) => round(l))
          .join(' ')}`,
    );
    console.log('| queries | side | p50 ms | p95 ms | hits (first page, each query) |');
    console.log('| --- | --- | --- | --- | --- |');
    for (const [kind, queries] of Object.entries(QUERIES)) {
      const times: Record<string, number[]> = {};
      const hits: Record<string, number[]> = {};
      for (let run = 0; run < RUNS; run += 1) {
        // The sides take turns, and turns going first.
        const order = Object.entries(sides);
        if (run % 2 === 1) order.reverse();
        for (const [side, search] of order) {
          for (const [i, q] of queries.entries()) {
            const { ms, hits: found } = await search(q);
            (times[side] ??= []).push(ms);
            if (run === 0) (hits[side] ??= [])[i] = found;
          }
        }
      }
      for (const side of Object.keys(sides)) {
        const all = times[side]!.sort((a, b) => a - b);
        console.log(
          `| ${kind}: ${queries.join(', ')} | ${side} | ${round(percentile(all, 50))} | ${round(percentile(all, 95))} | ${hits[side]!.join(', ')} |`,
        );
      }
    }
  } finally {
    await team.close();
    await desktop.dispose();
    await cluster.stop();
  }
}

await main();
