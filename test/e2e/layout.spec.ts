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
    // A walk through a dozen pages: on a loaded machine it takes longer than one page's test.
    test.slow();
    await page.setViewportSize({ width: 900, height: 700 });
    await page.emulateMedia({ colorScheme });
    await signIn(page, crowded.server.url, crowded.data.email, crowded.data.password);
    const base = crowded.server.url;
    // Names as long as real ones widen the author filter.
    const added = await page.request.post(`${base}/api/workspaces/${crowded.data.organizationId}/members`, {
      headers: { origin: base },
      data: { email: 'margaret@example.test', name: 'Margaret Hamilton-Lovelace', password: 'correct horse' },
    });
    expect(added.status()).toBe(201);
    for (const path of [
      '/',
      '/?status=failed&q=zzz',
      `/sessions/${crowded.data.transcriptSessionId}`,
      `/sessions/${crowded.data.activeSessionId}`,
      '/new',
      '/settings/keys',
      '/settings/members',
      '/settings/history',
      '/settings/agent',
      '/settings/approvals',
      '/settings/approvals?decision=allow&kind=execute&pattern=npm%20run%20build%20--%20--a-very-long-flag-name-that-goes-on',
      '/settings/api',
      '/settings/notifications',
      '/inbox',
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
    // Every filter fits inside the content column.
    await page.goto(base);
    const content = await page.locator('main.content').boundingBox();
    for (const control of await page.locator('form.filters > input, form.filters > select').all()) {
      const box = await control.boundingBox();
      expect(box!.x + box!.width).toBeLessThanOrEqual(content!.x + content!.width);
    }
    // Text cut for room ends with an ellipsis rather than mid-letter.
    for (const selector of ['.me-email', '#workspace-select', '#search', '#filter-repo']) {
      await expect(page.locator(selector)).toHaveCSS('text-overflow', 'ellipsis');
    }
    // Rename stays beside the title.
    await page.goto(`${base}/sessions/${crowded.data.transcriptSessionId}`);
    const title = await page.getByRole('heading', { level: 1 }).boundingBox();
    const rename = await page.getByRole('button', { name: 'Rename' }).boundingBox();
    expect(rename!.y).toBeLessThan(title!.y + title!.height);
  });
}
