import type { Message } from '../../src-shared/sessions.js';
import { test as base, expect, serveWithSession, signIn, type ServedSession } from './fixtures.js';

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
  await expect(page).toHaveURL(
    new RegExp(`/sessions/${searchable.sessionId}\\?message=${HIT_AT}&q=marmalize\\*$`, 'u'),
  );
  // The tool's output is shown with the call that asked for it: that row is outlined and in view.
  const focused = page.locator('li.row-focused');
  await expect(focused).toBeVisible();
  await expect(focused).toContainText('grep -rn Delay src');
  // Opened, with the words the search found marked.
  await expect(focused.locator('mark')).toHaveText('marmalizeDelay');
  await expect(focused.locator('mark')).toBeVisible();
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

test('a search hit opens its message unfolded, the matched words marked in it', async ({ page }) => {
  // The match is deep in a long tool output (folded after 20 lines) and in a thinking (folded).
  const output = Array.from({ length: 40 }, (_, i) =>
    i === 33 ? 'src/queue.ts:33: flushWombatBuffer(queue);' : `src/queue.ts:${i}: // nothing here`,
  ).join('\n');
  const served = await serveWithSession('Drain the queue', [
    { type: 'user', message: { content: 'Why does the queue stall?' } },
    {
      type: 'assistant',
      message: { content: [{ type: 'thinking', thinking: 'The wombat buffer is never flushed, I think.' }] },
    },
    {
      type: 'assistant',
      message: {
        content: [
          { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'grep -rn queue src' } },
        ],
      },
    },
    {
      type: 'assistant',
      message: {
        content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: output, is_error: false }],
      },
    },
    {
      type: 'assistant',
      message: { content: [{ type: 'text', text: 'The buffer is flushed only on exit.' }] },
    },
  ]);
  try {
    await signIn(page, served.url, served.email, served.password);
    await page.getByLabel('In transcripts').check();
    await page.getByRole('searchbox').fill('flushWombatBuffer');
    const group = page.getByRole('list', { name: 'Matches in Drain the queue' });
    await expect(group.getByRole('link')).toHaveCount(1);
    await group.getByRole('link').click();

    const focused = page.locator('li.row-focused');
    const output33 = focused.getByLabel('Bash output');
    await expect(output33).toBeVisible();
    await expect(output33.locator('mark')).toHaveText('flushWombatBuffer');
    await expect(output33.locator('mark')).toBeVisible();
    // Only the hit's message is unfolded and marked.
    await expect(page.locator('details.thinking')).not.toHaveAttribute('open', '');
    await expect(page.locator('mark')).toHaveCount(1);

    // The fold is the person's again: closing it closes it.
    await focused.locator('summary').click();
    await expect(output33).toBeHidden();

    // A hit in the thinking opens the thinking, with the search's words marked.
    await page.goto(`${served.url}/?in=transcripts&q=wombat`);
    await page.getByRole('list', { name: 'Matches in Drain the queue' }).getByRole('link').click();
    const thinking = page.locator('li.row-focused details.thinking');
    await expect(thinking).toHaveAttribute('open', '');
    await expect(thinking.locator('mark')).toHaveText('wombat');
  } finally {
    await served.stop();
  }
});
