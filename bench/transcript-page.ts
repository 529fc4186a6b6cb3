/**
 * How long the dashboard takes to show a session of about 100 MB, and the page's memory
 * once it does: the current dashboard (`out/renderer`, from `npm run build`) and, side by
 * side, another build of it given as BEFORE_RENDERER_DIR (for example one built from an
 * earlier commit). Both are served by the same server over the same data directory, in
 * the system's Chromium.
 *
 *   node ./bin/run-ts.js bench/transcript-page.ts
 *   BEFORE_RENDERER_DIR=/tmp/before/out/renderer node ./bin/run-ts.js bench/transcript-page.ts
 *
 * Printed per build (median of RUNS): time from navigation to the session's last message
 * being on screen, the JS heap in the page (CDP, after a garbage collection) and the DOM
 * nodes in it.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium } from '@playwright/test';
import { seedLongSession } from '../test/helpers/long-session.js';
import { seedDataDir } from '../test/helpers/seed.js';
import { startTestServer, tempDir } from '../test/helpers/server.js';

const MESSAGES = Number(process.env.MESSAGES ?? 5_000);
const RESULT_CHARS = Number(process.env.RESULT_CHARS ?? 80_000);
const RUNS = Number(process.env.RUNS ?? 3);
const MB = 1024 * 1024;

interface Figures {
  firstMessageMs: number;
  heapMB: number;
  domNodes: number;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

async function measure(
  rendererDir: string,
  dataDir: string,
  sessionId: string,
  email: string,
  password: string,
) {
  const server = await startTestServer({ dataDir, rendererDir });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  const runs: Figures[] = [];
  try {
    for (let run = 0; run < RUNS; run += 1) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
      const page = await context.newPage();
      const signIn = await page.request.post(`${server.url}/api/auth/sign-in`, {
        data: { email, password },
        headers: { origin: server.url },
      });
      if (!signIn.ok()) throw new Error(`sign-in failed: ${signIn.status()}`);
      // The session's last message, the result, is what a reviewer looks at first.
      const started = performance.now();
      await page.goto(`${server.url}/sessions/${sessionId}`);
      await page.locator('.result').last().waitFor({ state: 'visible', timeout: 300_000 });
      const firstMessageMs = performance.now() - started;
      const cdp = await context.newCDPSession(page);
      await cdp.send('Performance.enable');
      await cdp.send('HeapProfiler.collectGarbage');
      const { metrics } = await cdp.send('Performance.getMetrics');
      const metric = (name: string) => metrics.find((m) => m.name === name)?.value ?? NaN;
      runs.push({
        firstMessageMs,
        heapMB: metric('JSHeapUsedSize') / MB,
        domNodes: metric('Nodes'),
      });
      process.stderr.write(
        `  ${rendererDir}: ${firstMessageMs.toFixed(0)} ms, ${(metric('JSHeapUsedSize') / MB).toFixed(1)} MB heap\n`,
      );
      await context.close();
    }
  } finally {
    await browser.close();
    await server.stop();
  }
  return {
    firstMessageMs: median(runs.map((r) => r.firstMessageMs)),
    heapMB: median(runs.map((r) => r.heapMB)),
    domNodes: median(runs.map((r) => r.domNodes)),
  };
}

async function main(): Promise<void> {
  const dataDir = tempDir('sessiondesk-bench-page-');
  try {
    const owner = await seedDataDir(dataDir);
    const session = await seedLongSession(dataDir, owner, {
      messages: MESSAGES,
      resultChars: RESULT_CHARS,
      pairAt: MESSAGES - 100,
    });
    process.stderr.write(`seeded ${MESSAGES} messages, ${(session.bytes / MB).toFixed(1)} MB of JSON\n`);
    const builds: Array<[string, string]> = [];
    if (process.env.BEFORE_RENDERER_DIR) builds.push(['before', process.env.BEFORE_RENDERER_DIR]);
    builds.push(['now', fileURLToPath(new URL('../out/renderer', import.meta.url))]);
    const rows: string[] = [];
    for (const [name, dir] of builds) {
      const figures = await measure(dir, dataDir, session.sessionId, owner.email, owner.password);
      rows.push(
        `| ${name} | ${figures.firstMessageMs.toFixed(0)} ms | ${figures.heapMB.toFixed(1)} MB | ${figures.domNodes.toFixed(0)} |`,
      );
    }
    console.log(`${MESSAGES} messages, ${(session.bytes / MB).toFixed(1)} MB; median of ${RUNS} runs`);
    console.log('| dashboard | last message on screen | JS heap | DOM nodes |');
    console.log('| --- | --- | --- | --- |');
    for (const row of rows) console.log(row);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
