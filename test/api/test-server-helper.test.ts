import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { seedWorkspace, startTestServer, withKey } from '../helpers/server.js';

// The tests' own server helper: a test that reopens a data directory disposes both servers,
// in any order, and the first must not delete what the second is still writing.
describe('startTestServer', () => {
  it('disposing a stopped server leaves the data directory to the server reopened over it', async () => {
    const first = await startTestServer();
    const owner = await seedWorkspace(first);
    await first.stop();
    const reopened = await startTestServer({ dataDir: first.dataDir });
    try {
      await first.dispose();
      expect(existsSync(first.dataDir)).toBe(true);
      const list = await withKey(reopened, owner.apiKey, 'GET', '/api/sessions');
      expect(list.status).toBe(200);
    } finally {
      await reopened.dispose();
    }
    expect(existsSync(first.dataDir)).toBe(false);
  });
});
