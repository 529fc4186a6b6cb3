// A sub-agent's messages in a real browser: shown inside the call that started it, wherever the
// import or the run wrote them, never after the run's result.
import { rmSync } from 'node:fs';
import { startServe } from '../helpers/cli.js';
import { copyClaudeScenario, dataDirImporting } from '../helpers/imported.js';
import { tempDir } from '../helpers/server.js';
import { expect, signIn, test } from './fixtures.js';

const LONG_AGO_MS = 24 * 60 * 60 * 1000;

test("an imported Claude Code sub-agent's messages are nested under its Agent call, before Finished", async ({
  page,
}) => {
  const root = tempDir('sessiondesk-e2e-sub-agent-');
  // Recorded: the main conversation's file, and the sub-agent's beside it (read after it).
  const recorded = copyClaudeScenario('sub-agent', { writtenAgoMs: LONG_AGO_MS });
  const { dataDir, data } = await dataDirImporting(root, recorded.root, root);
  const server = await startServe(dataDir, ['--log-level', 'warn'], { HOME: root });
  try {
    await signIn(page, server.url, data.email, data.password);
    await page
      .getByRole('link', { name: /Ask a helper to list the files/u })
      .first()
      .click();
    const transcript = page.getByRole('list', { name: 'Transcript' });
    const rows = transcript.locator(':scope > li');
    await expect(rows.last()).toContainText('Finished');
    await expect(rows).toHaveCount(4);
    await expect(rows.nth(0)).toContainText('Ask a helper to list the files');
    const call = rows.nth(1);
    await expect(call.locator('summary').first()).toContainText('Agent');
    await expect(rows.nth(2)).toContainText('The helper found README.md.');
    // Nothing of the sub-agent after the result, nor anywhere but in its call.
    await expect(transcript).not.toContainText('Looking at the files.', { useInnerText: true });
    await call.locator('summary').first().click();
    const subAgent = call.getByRole('list', { name: 'Sub-agent' });
    await expect(subAgent).toContainText('Looking at the files.');
    await expect(subAgent.locator('.tool-name', { hasText: 'Bash' })).toBeVisible();
    await expect(subAgent).toContainText('The repository holds README.md.');
  } finally {
    await server.stop();
    rmSync(recorded.root, { recursive: true, force: true });
    rmSync(root, { recursive: true, force: true });
  }
});
