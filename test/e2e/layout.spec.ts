import type { Page } from '@playwright/test';
import { expect, signIn, test } from './fixtures.js';

/** No sideways scrolling: the page is no wider than the window. */
async function expectNoSidewaysScroll(page: Page, where: string) {
  const { scrollWidth, clientWidth, innerWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
    innerWidth: window.innerWidth,
  }));
  expect(scrollWidth, `${where}: page wider than the window`).toBeLessThanOrEqual(clientWidth);
  expect(clientWidth, `${where}`).toBeLessThanOrEqual(innerWidth);
}

for (const colorScheme of ['light', 'dark'] as const) {
  test(`at 900 px wide, ${colorScheme}: no page scrolls sideways, nothing clips without an ellipsis`, async ({
    page,
    crowded,
  }) => {
    await page.setViewportSize({ width: 900, height: 700 });
    await page.emulateMedia({ colorScheme });
    await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
    const base = crowded.server.url;
    for (const path of [
      '/',
      '/?status=failed&q=zzz',
      `/sessions/${crowded.data.transcriptSessionId}`,
      `/sessions/${crowded.data.activeSessionId}`,
      '/new',
      '/settings/keys',
      '/settings/members',
      '/settings/agent',
      '/settings/api',
    ]) {
      await page.goto(base + path);
      await expect(
        page
          .getByRole('heading', { level: 1 })
          .or(page.getByRole('heading', { level: 2 }))
          .first(),
      ).toBeVisible();
      await expectNoSidewaysScroll(page, path);
    }
    // Text cut for room ends with an ellipsis rather than mid-letter.
    await page.goto(base);
    for (const selector of ['.me-email', '#workspace-select', '#search', '#filter-repo']) {
      await expect(page.locator(selector)).toHaveCSS('text-overflow', 'ellipsis');
    }
    // The filter row fits inside the content column.
    const filters = await page.locator('form.filters').boundingBox();
    const content = await page.locator('main.content').boundingBox();
    expect(filters!.x + filters!.width).toBeLessThanOrEqual(content!.x + content!.width);
    // Rename stays beside the title.
    await page.goto(`${base}/sessions/${crowded.data.transcriptSessionId}`);
    const title = await page.getByRole('heading', { level: 1 }).boundingBox();
    const rename = await page.getByRole('button', { name: 'Rename' }).boundingBox();
    expect(rename!.y).toBeLessThan(title!.y + title!.height);
  });
}
