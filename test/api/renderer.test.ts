import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.js';

describe('serving the dashboard', () => {
  let server: TestServer;
  let placeholder: TestServer;
  const rendererDir = tempDir('sessiondesk-renderer-');
  const INDEX =
    '<!doctype html><html><head><script type="module" src="/assets/app.js"></script></head><body></body></html>';

  beforeAll(async () => {
    mkdirSync(join(rendererDir, 'assets'));
    writeFileSync(join(rendererDir, 'index.html'), INDEX);
    writeFileSync(join(rendererDir, 'assets', 'app.js'), 'console.log("dashboard")');
    server = await startTestServer({ rendererDir });
    placeholder = await startTestServer({ rendererDir: join(rendererDir, 'missing') });
  });
  afterAll(async () => {
    await server.dispose();
    await placeholder.dispose();
    rmSync(rendererDir, { recursive: true, force: true });
  });

  it('serves index.html at / and for any deep link outside /api, with the CSP', async () => {
    for (const path of ['/', '/sessions/ses_123', '/settings/keys?tab=1']) {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(INDEX);
      expect(response.headers.get('content-security-policy')).toContain("script-src 'self'");
    }
  });

  it('serves the built assets', async () => {
    const response = await fetch(`${server.url}/assets/app.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(await response.text()).toBe('console.log("dashboard")');
  });

  it('keeps /api/ paths as JSON 404s, and never serves files outside the folder', async () => {
    const api = await fetch(`${server.url}/api/unknown`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toMatch(/^application\/json/);
    const escape = await fetch(`${server.url}/assets/..%2f..%2f..%2fetc%2fpasswd`);
    expect(await escape.text()).not.toContain('root:');
  });

  it('shows a placeholder page when the dashboard has not been built', async () => {
    const response = await fetch(`${placeholder.url}/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('npm run build');
  });
});
