import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

describe('a request without credentials', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.dispose());

  const message = async (method: string, path: string) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { origin: server.origin, 'content-type': 'application/json' },
      ...(method === 'GET' ? {} : { body: '{}' }),
    });
    expect(response.status).toBe(401);
    return ((await response.json()) as { error: { code: string; message: string } }).error;
  };

  it('is told how to send an API key where one is accepted', async () => {
    for (const path of ['/api/sessions', '/api/search?q=x', '/api/sessions/ses_aaaaaaaaaaaaaaaaaaaaaa']) {
      const error = await message('GET', path);
      expect(error.code).toBe('unauthorized');
      expect(error.message).toMatch(/^Sign in first, or send an API key \(x-api-key header/u);
    }
  });

  it('is told that a signed-in user is needed where a key is not accepted', async () => {
    const error = await message('POST', '/api/sessions');
    expect(error.message).toBe('Sign in first: this needs a signed-in user (an API key is not enough)');
  });
});
