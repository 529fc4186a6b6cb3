import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createAccounts } from '../../src-main/accounts/accounts.js';
import { silentLogger, systemClock } from '../../src-main/clock.js';
import { createRepositories } from '../../src-main/store/repositories.js';
import { Store } from '../../src-main/store/store.js';
import { startServe } from '../helpers/cli.js';
import { PASSWORD, tempDir } from '../helpers/server.js';
import { readAllMessages } from '../../src-main/sessions/transcript-reads.js';
import { storageOf, readsOf } from '../../src-main/store/sqljs-storage.js';

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function prepare(dataDir: string) {
  const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
  const accounts = createAccounts(storageOf(store), systemClock);
  await accounts.createUser({ email: 'crash@example.test', name: 'Crash', password: PASSWORD });
  const { organizationId } = await accounts.createWorkspace({
    name: 'Crash',
    ownerEmail: 'crash@example.test',
  });
  const { key } = await accounts.createKey({ organizationId });
  await store.close();
  return { organizationId, key };
}

interface Writer {
  /** Sessions whose creation was acknowledged. */
  created: Set<string>;
  /** Per session: the last acknowledged title, and a title sent but not (yet) acknowledged. */
  titles: Map<string, { acked: string; inFlight: string | null }>;
}

describe('SIGKILL during concurrent writes', () => {
  it(
    'every acknowledged write survives, and the database passes integrity_check',
    { timeout: 120_000 },
    async () => {
      const dataDir = tempDir('sessiondesk-crash-');
      dirs.push(dataDir);
      const { organizationId, key } = await prepare(dataDir);
      const writers: Writer[] = [];
      let acknowledged = 0;

      for (let round = 0; round < 3; round += 1) {
        // The demo agent waits an hour between steps: sessions stay as the writers left them.
        const server = await startServe(dataDir, ['--log-level', 'silent'], {
          SESSIONDESK_DEMO_PACE_MS: '3600000',
        });
        const signIn = await fetch(`${server.url}/api/auth/sign-in`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'crash@example.test', password: PASSWORD }),
        });
        const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
        let killed = false;

        const loop = async (writer: Writer, n: number) => {
          for (let i = 0; !killed; i += 1) {
            try {
              const created = await fetch(`${server.url}/api/sessions`, {
                method: 'POST',
                headers: { cookie, origin: server.url, 'content-type': 'application/json' },
                body: JSON.stringify({
                  organizationId,
                  initialMessage: `round ${round} writer ${n} item ${i}`,
                }),
              });
              if (created.status !== 201) throw new Error(`create: ${created.status}`);
              const { id, title: firstTitle } = (
                (await created.json()) as { session: { id: string; title: string } }
              ).session;
              writer.created.add(id);
              acknowledged += 1;
              const state = { acked: firstTitle, inFlight: null as string | null };
              writer.titles.set(id, state);
              for (let t = 0; t < 3 && !killed; t += 1) {
                const title = `r${round} w${n} i${i} t${t}`;
                state.inFlight = title;
                const patched = await fetch(`${server.url}/api/sessions/${id}`, {
                  method: 'PATCH',
                  headers: { 'x-api-key': key, 'content-type': 'application/json' },
                  body: JSON.stringify({ title }),
                });
                if (patched.status !== 200) throw new Error(`patch: ${patched.status}`);
                state.acked = title;
                state.inFlight = null;
                acknowledged += 1;
              }
            } catch (err) {
              if (killed) return;
              throw err;
            }
          }
        };

        const roundWriters = Array.from({ length: 8 }, () => ({
          created: new Set<string>(),
          titles: new Map(),
        }));
        writers.push(...roundWriters);
        const loops = roundWriters.map((w, n) => loop(w, n));
        const target = acknowledged + 150 + Math.floor(Math.random() * 300);
        await expect
          .poll(() => acknowledged, { timeout: 60_000, interval: 5 })
          .toBeGreaterThanOrEqual(target);
        killed = true;
        await server.kill();
        await Promise.all(loops);
      }

      const store = await Store.open({ dataDir, clock: systemClock, logger: silentLogger });
      try {
        expect(store.db.first('PRAGMA integrity_check')?.[0]).toBe('ok');
        const repos = createRepositories(store.db);
        let checked = 0;
        for (const writer of writers) {
          for (const id of writer.created) {
            const row = repos.sessions.find(id);
            expect(row, `acknowledged session ${id}`).not.toBeNull();
            const { acked, inFlight } = writer.titles.get(id)!;
            const allowed = [acked, inFlight].filter((t) => t !== null);
            expect(allowed).toContain(row!.title);
            // The prompt; and when a later start found its agent cut off, the result saying so.
            const [prompt, ...rest] = (await readAllMessages(readsOf(store), id)) as Array<{
              type: string;
            }>;
            expect(prompt?.type).toBe('user');
            expect(rest.every((m) => m.type === 'result')).toBe(true);
            checked += 1;
          }
        }
        expect(checked).toBeGreaterThan(100);
      } finally {
        await store.close();
      }
    },
  );
});
