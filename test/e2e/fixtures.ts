import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';
import type { ServeProcess } from '../helpers/cli.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import type { Message } from '../../src-shared/sessions.js';
import { addSessionInStorage, seedManyInStorage, seedStorage, type Seeded } from '../helpers/seed.js';
import {
  newPlace,
  removePlace,
  seedPlace,
  servePlace,
  startTeamCluster,
  type Backend,
  type Place,
} from './backend.js';

interface Fixtures {
  /**
   * A fresh data directory (and on a team server a fresh database) and a `sessiondesk serve`
   * on it, stopped after the test.
   */
  server: ServeProcess & Place;
  /** The same, seeded with a user in two workspaces and a full transcript. */
  seeded: { server: ServeProcess & Place; data: Seeded };
  /** Seeded, with the demo agent taking a step every 150 ms, to watch it work. */
  live: { server: ServeProcess & Place; data: Seeded };
  /** Seeded with 60 more sessions (seedManySessions): two pages, filters and search. */
  crowded: { server: ServeProcess & Place; data: Seeded };
}

interface WorkerFixtures {
  /** The project's choice: servers on their data directory, or team servers on PostgreSQL. */
  backend: Backend;
  /** On a team server, the one throw-away cluster this worker's servers make their databases in. */
  teamCluster: void;
}

/** The demo agent's pace: slow enough by default that sessions stay as a test leaves them. */
async function serveIn(place: Place, paceMs = 3_600_000) {
  const server = await servePlace(place, ['--log-level', 'warn'], {
    SESSIONDESK_DEMO_PACE_MS: String(paceMs),
  });
  return Object.assign(server, place);
}

/** A fresh place seeded by `seed`, served; stopped and removed after `use`. */
async function seededServer(
  seed: Parameters<typeof seedPlace<Seeded>>[1],
  use: (value: { server: ServeProcess & Place; data: Seeded }) => Promise<void>,
  paceMs?: number,
): Promise<void> {
  const place = await newPlace();
  const data = await seedPlace(place, seed);
  const server = await serveIn(place, paceMs);
  await use({ server, data });
  await server.stop();
  removePlace(place);
}

export const test = base.extend<Fixtures, WorkerFixtures>({
  backend: ['desktop', { scope: 'worker', option: true }],
  teamCluster: [
    async ({ backend }, use) => {
      if (backend !== 'team-server') return await use();
      const stop = await startTeamCluster();
      await use();
      await stop();
    },
    { scope: 'worker', auto: true, timeout: 120_000 },
  ],
  server: async ({}, use) => {
    const place = await newPlace();
    const server = await serveIn(place);
    await use(server);
    await server.stop();
    removePlace(place);
  },
  seeded: async ({}, use) => seededServer((storage) => seedStorage(storage), use),
  crowded: async ({}, use) => seededServer((storage) => seedManyInStorage(storage, 60), use),
  live: async ({}, use) => seededServer((storage) => seedStorage(storage), use, 150),
});

export { expect };

export async function signIn(page: Page, url: string, email: string, password: string): Promise<void> {
  await page.goto(url);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Sessions', level: 1 })).toBeVisible();
}

export interface ServedSession {
  url: string;
  email: string;
  password: string;
  sessionId: string;
  stop(): Promise<void>;
}

/** A seeded data directory plus one session holding `messages`, served: for a fixture of a spec's own. */
export async function serveWithSession(title: string, messages: Message[]): Promise<ServedSession> {
  const place = await newPlace();
  const { data, sessionId } = await seedPlace(place, async (storage) => {
    const data = await seedStorage(storage);
    return { data, sessionId: await addSessionInStorage(storage, data, title, messages) };
  });
  const server = await serveIn(place);
  return {
    url: server.url,
    email: data.email,
    password: data.password,
    sessionId,
    async stop() {
      await server.stop();
      removePlace(place);
    },
  };
}

/** A seeded data directory served with the recorded agent CLIs first on PATH. */
export async function serveWithRecordedClis(): Promise<{
  server: ServeProcess;
  data: Seeded;
  stop(): Promise<void>;
}> {
  const bin = installRecordedClis(mkdtempSync(join(tmpdir(), 'e2e-clis-')));
  const place = await newPlace();
  const data = await seedPlace(place, (storage) => seedStorage(storage));
  const server = await servePlace(place, ['--log-level', 'warn'], {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
  });
  return {
    server,
    data,
    async stop() {
      await server.stop();
      removePlace(place);
      rmSync(bin, { recursive: true, force: true });
    },
  };
}

/** Chooses the workspace's agent in Settings › Agent, as its owner does. */
export async function chooseAgent(page: Page, url: string, agent: RegExp): Promise<void> {
  await page.goto(`${url}/settings/agent`);
  await page.getByRole('radio', { name: agent }).check();
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('Set for this workspace.')).toBeVisible();
}

/**
 * Pictures of the page as it is, for looking at a view in both themes and at both widths:
 * taken only when SESSIONDESK_SHOTS_DIR names a folder, as `NAME-WIDTH-SCHEME.png`. The page
 * is left light, at the last width.
 */
export async function screenshotsInBothThemes(page: Page, name: string): Promise<void> {
  const shots = process.env.SESSIONDESK_SHOTS_DIR;
  if (!shots) return;
  mkdirSync(shots, { recursive: true });
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const width of [900, 1440]) {
      await page.setViewportSize({ width, height: 900 });
      await page.screenshot({ path: join(shots, `${name}-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
}
