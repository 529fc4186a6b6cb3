import { test as base, expect } from '@playwright/test';
import type { Message } from '../../src-shared/sessions.js';
import { serveWithSession, signIn, type ServedSession } from './fixtures.js';

/** Where the rare word is: far from the end, so the page must open there, not at the latest. */
const HIT_AT = 40;
const MESSAGES = 400;

function message(i: number): Message {
  if (i === HIT_AT) {
    return {
      type: 'assistant',
      message: {
        content: [
          {
            type: 'tool_result',
            tool_use_id: `toolu_${i - 1}`,
            content: 'src/retry.ts:7: const backoff = marmalizeDelay(attempt);',
            is_error: false,
          },
        ],
      },
    };
  }
  if (i === HIT_AT - 1) {
    return {
      type: 'assistant',
      message: {
        content: [
          { type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: 'grep -rn Delay src' } },
        ],
      },
    };
  }
  return {
    type: 'assistant',
    message: { content: [{ type: 'text', text: `Step ${i}: reading more of the code.` }] },
  };
}

const test = base.extend<{ searchable: ServedSession }>({
  searchable: async ({}, use) => {
    // Written while no server ran: the server indexes it when it starts.
    const served = await serveWithSession(
      'Tune the retry delays',
      Array.from({ length: MESSAGES }, (_, i) => message(i)),
    );
    await use(served);
    await served.stop();
  },
});

test('search finds words in tool output and opens the session at that message, outlined', async ({
  page,
  searchable,
}) => {
  await signIn(page, searchable.url, searchable.email, searchable.password);
  await page.getByLabel('In transcripts').check();
  await page.getByRole('searchbox').fill('marmalize*');
  const matches = page.getByRole('region', { name: 'Transcript matches' });
  const group = matches.getByRole('list', { name: 'Matches in Tune the retry delays' });
  await expect(group.getByRole('link')).toHaveCount(1);
  await expect(group.locator('mark')).toHaveText('marmalizeDelay');
  await expect(page).toHaveURL(/in=transcripts/u);

  await group.getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`/sessions/${searchable.sessionId}\\?message=${HIT_AT}$`, 'u'));
  // The tool's output is shown with the call that asked for it: that row is outlined and in view.
  const focused = page.locator('li.row-focused');
  await expect(focused).toBeVisible();
  await expect(focused).toContainText('grep -rn Delay src');
  await focused.locator('summary').click();
  await expect(focused).toContainText('marmalizeDelay(attempt)');
});

test('a search with no match in any transcript says so', async ({ page, searchable }) => {
  await signIn(
    page,
    `${searchable.url}/?in=transcripts&q=zyzzyvaquux`,
    searchable.email,
    searchable.password,
  );
  await expect(page.getByRole('heading', { name: 'No messages match' })).toBeVisible();
});
