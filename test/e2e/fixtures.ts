import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test as base, expect, type Page } from '@playwright/test';
import { startServe, type ServeProcess } from '../helpers/cli.js';
import { installRecordedClis } from '../helpers/recorded-clis.js';
import type { Message } from '../../src-shared/sessions.js';
import { addSession, seedDataDir, seedManySessions, type Seeded } from '../helpers/seed.js';
import { tempDir } from '../helpers/server.js';

interface Fixtures {
  /** A fresh data directory and a `sessiondesk serve` on it, stopped after the test. */
  server: ServeProcess & { dataDir: string };
  /** The same, seeded with a user in two workspaces and a full transcript. */
  seeded: { server: ServeProcess & { dataDir: string }; data: Seeded };
  /** Seeded, with the demo agent taking a step every 150 ms, to watch it work. */
  live: { server: ServeProcess & { dataDir: string }; data: Seeded };
  /** Seeded with 60 more sessions (seedManySessions): two pages, filters and search. */
  crowded: { server: ServeProcess & { dataDir: string }; data: Seeded };
}

/** The demo agent's pace: slow enough by default that sessions stay as a test leaves them. */
async function serveIn(dataDir: string, paceMs = 3_600_000) {
  const server = await startServe(dataDir, ['--log-level', 'warn'], {
    SESSIONDESK_DEMO_PACE_MS: String(paceMs),
  });
  return Object.assign(server, { dataDir });
}

export const test = base.extend<Fixtures>({
  server: async ({}, use) => {
    const dataDir = tempDir('sessiondesk-e2e-');
    const server = await serveIn(dataDir);
    await use(server);
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  },
  seeded: async ({}, use) => {
    const dataDir = tempDir('sessiondesk-e2e-');
    const data = await seedDataDir(dataDir);
    const server = await serveIn(dataDir);
    await use({ server, data });
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  },
  crowded: async ({}, use) => {
    const dataDir = tempDir('sessiondesk-e2e-');
    const data = await seedManySessions(dataDir, 60);
    const server = await serveIn(dataDir);
    await use({ server, data });
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  },
  live: async ({}, use) => {
    const dataDir = tempDir('sessiondesk-e2e-');
    const data = await seedDataDir(dataDir);
    const server = await serveIn(dataDir, 150);
    await use({ server, data });
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  },
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
  const dataDir = tempDir('sessiondesk-e2e-');
  const data = await seedDataDir(dataDir);
  const sessionId = await addSession(dataDir, data, title, messages);
  const server = await serveIn(dataDir);
  return {
    url: server.url,
    email: data.email,
    password: data.password,
    sessionId,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
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
  const dataDir = tempDir('sessiondesk-e2e-');
  const data = await seedDataDir(dataDir);
  const server = await startServe(dataDir, ['--log-level', 'warn'], {
    PATH: `${bin}:${process.env.PATH ?? ''}`,
  });
  return {
    server,
    data,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
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
