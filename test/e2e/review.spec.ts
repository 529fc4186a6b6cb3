// A review in the Changes panel: lines of the demo agent's real diff commented on (a click, a
// drag), the drafts kept through a reload, edited and deleted, sent as one follow-up that starts
// the agent's next run; then each comment shown at its lines, resolved once that run changed them.
import { expect, screenshotsInBothThemes, signIn, test } from './fixtures.js';

const NOTE = 'notes/add-retries-to-the-upload-client.md';

test('comment on lines of the changes, keep the drafts, send the review; resolved once the agent changed them', async ({
  page,
  live,
}) => {
  await signIn(page, live.server.url, live.data.email, live.data.password);
  await page.getByRole('link', { name: 'New session', exact: true }).first().click();
  await page.getByLabel('Prompt', { exact: true }).fill('Add retries to the upload client');
  await page.getByRole('button', { name: 'Start session' }).click();
  const transcript = page.getByRole('list', { name: 'Transcript' });
  await expect(transcript.getByRole('status')).toContainText('Finished', { timeout: 30_000 });

  const changes = page.getByRole('region', { name: 'Changes' });
  await changes.getByRole('button', { name: 'Show files' }).click();
  await changes.getByText('src/config.js', { exact: true }).click();
  const config = changes.getByRole('group', { name: 'Diff of src/config.js' });

  // A click on a line number: a comment on that line.
  await config.getByRole('button', { name: 'Comment on line 4 of src/config.js' }).click();
  await config
    .getByRole('textbox', { name: 'Comment on line 4', exact: true })
    .fill('Make this configurable.');
  await config.getByRole('button', { name: 'Add to review' }).click();
  // The base's number of the removed line: a comment on the old side.
  await config.getByRole('button', { name: 'Comment on base line 4 of src/config.js' }).click();
  await config.getByRole('textbox', { name: 'Comment on line 4 of the base' }).fill('Was zero ever right?');
  await config.getByRole('button', { name: 'Add to review' }).click();

  // A drag over line numbers: a comment on the lines between.
  await changes.getByText(NOTE, { exact: true }).click();
  const note = changes.getByRole('group', { name: `Diff of ${NOTE}` });
  await note.getByRole('button', { name: `Comment on line 1 of ${NOTE}` }).hover();
  await page.mouse.down();
  await note.getByRole('button', { name: `Comment on line 3 of ${NOTE}` }).hover();
  await page.mouse.up();
  await screenshotsInBothThemes(page, 'review-writing');
  await note.getByRole('textbox', { name: 'Comment on lines 1–3' }).fill('Shorter, please');
  await note.getByRole('button', { name: 'Add to review' }).click();
  // A fourth, taken back.
  await note.getByRole('button', { name: `Comment on line 5 of ${NOTE}` }).click();
  await note.getByRole('textbox', { name: 'Comment on line 5', exact: true }).fill('Never mind.');
  await note.getByRole('button', { name: 'Add to review' }).click();
  await note
    .getByRole('article', { name: 'Draft comment on line 5' })
    .getByRole('button', { name: 'Delete' })
    .click();
  await expect(changes.getByRole('button', { name: 'Send review (3)' })).toBeVisible();

  // The drafts are kept in the browser: after a reload they are there, and can be edited.
  await page.reload();
  await changes.getByRole('button', { name: 'Show files' }).click();
  await expect(changes.getByRole('button', { name: 'Send review (3)' })).toBeVisible();
  await expect(changes.getByText('2 drafts')).toBeVisible();
  await changes.getByText(NOTE, { exact: true }).click();
  const draft = note.getByRole('article', { name: 'Draft comment on lines 1–3' });
  await draft.getByRole('button', { name: 'Edit' }).click();
  await note.getByRole('textbox', { name: 'Your draft on lines 1–3' }).fill('Shorter, please.');
  await note.getByRole('button', { name: 'Save' }).click();
  await expect(draft).toContainText('Shorter, please.');

  // The keys: ] and [ go from file to file, n and p from comment to comment (opening their file).
  await page.keyboard.press(']');
  await expect(changes.locator('summary', { hasText: NOTE })).toBeFocused();
  await page.keyboard.press(']');
  await expect(changes.locator('summary', { hasText: 'src/config.js' })).toBeFocused();
  await page.keyboard.press('n');
  await expect(draft).toBeFocused();
  await page.keyboard.press('n');
  await expect(config.getByRole('article').first()).toBeFocused();
  await page.keyboard.press('p');
  await expect(draft).toBeFocused();
  await screenshotsInBothThemes(page, 'review-drafts');

  // Sent: one follow-up, which starts the agent's next run.
  await changes.getByLabel(/A message to go after them/u).fill('Then run the tests.');
  await changes.getByRole('button', { name: 'Send review (3)' }).click();
  await expect(changes.getByRole('form', { name: 'Review' })).toHaveCount(0);
  const sent = transcript.locator('.turn-user', { hasText: 'Review · 3 comments' });
  await expect(sent).toBeVisible();
  await expect(sent).toContainText('src/config.js:4');
  await expect(sent).toContainText('Then run the tests.');
  await expect(transcript.getByRole('status').filter({ hasText: 'Finished' })).toHaveCount(2, {
    timeout: 30_000,
  });

  // At their lines: the two the agent's run changed are resolved; the removed line is as it was.
  await expect(
    config.getByRole('article', { name: 'Resolved comment on line 4', exact: true }),
  ).toContainText('Make this configurable.');
  await expect(
    config.getByRole('article', { name: 'Comment on line 4 of the base', exact: true }),
  ).toContainText('Was zero ever right?');
  await expect(note.getByRole('article', { name: 'Resolved comment on lines 1–3' })).toContainText(
    'Shorter, please.',
  );
  await expect(config).toContainText('// reviewed: Make this configurable.');
  await screenshotsInBothThemes(page, 'review-sent');
  await sent.scrollIntoViewIfNeeded();
  await screenshotsInBothThemes(page, 'review-transcript');
});
