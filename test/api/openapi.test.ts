import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      { responses: Record<string, unknown>; requestBody?: unknown; parameters?: { name: string }[] }
    >
  >;
}

describe('GET /api/openapi.json', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ adminToken: 'secret-admin-token' });
  });
  afterAll(async () => server.dispose());

  it('is an OpenAPI 3.1 document of the public routes, generated from the zod schemas', async () => {
    const response = await fetch(`${server.url}/api/openapi.json`);
    expect(response.status).toBe(200);
    const doc = (await response.json()) as OpenApiDocument;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/api/agents',
      '/api/auth/me',
      '/api/auth/sign-in',
      '/api/auth/sign-out',
      '/api/demo/sign-in',
      '/api/events',
      '/api/pull-requests/tool',
      '/api/search',
      '/api/sessions',
      '/api/sessions/{sessionId}',
      '/api/sessions/{sessionId}/changes',
      '/api/sessions/{sessionId}/events',
      '/api/sessions/{sessionId}/messages',
      '/api/sessions/{sessionId}/pull-request',
      '/api/sessions/{sessionId}/pull-request/refresh',
      '/api/sessions/{sessionId}/stop',
      '/api/sessions/{sessionId}/summary',
      '/api/setup',
      '/api/setup/demo',
      '/api/workspaces',
      '/api/workspaces/{organizationId}/agent',
      '/api/workspaces/{organizationId}/history-sources',
      '/api/workspaces/{organizationId}/history-sources/{sourceId}',
      '/api/workspaces/{organizationId}/keys',
      '/api/workspaces/{organizationId}/keys/{keyId}',
      '/api/workspaces/{organizationId}/members',
      '/api/workspaces/{organizationId}/members/{userId}',
      '/api/workspaces/{organizationId}/repositories',
    ]);
    const sessions = doc.paths['/api/sessions']!;
    expect(Object.keys(sessions.get!.responses)).toEqual(
      expect.arrayContaining(['200', '401', '403', '500']),
    );
    expect(Object.keys(sessions.post!.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '500']),
    );
    expect(Object.keys(doc.paths['/api/sessions/{sessionId}']!.get!.responses)).toEqual(
      expect.arrayContaining(['200', '401', '403', '404', '500']),
    );
    expect(Object.keys(doc.paths['/api/sessions/{sessionId}']!.patch!.responses)).toEqual(
      expect.arrayContaining(['200', '400', '401', '403', '404', '500']),
    );
    expect(Object.keys(doc.paths['/api/sessions/{sessionId}/pull-request']!.post!.responses)).toEqual(
      expect.arrayContaining(['200', '201', '409', '424', '502']),
    );
    const text = JSON.stringify(doc);
    // The schemas' own rules made it into the document.
    for (const fragment of [
      'initialMessage',
      'repoUrl',
      'mergesPastWeek',
      'nextCursor',
      '"enum":["active","completed","failed"]',
    ]) {
      expect(text).toContain(fragment);
    }
    expect(sessions.get!.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining([
        'organizationId',
        'apiKey',
        'limit',
        'cursor',
        'status',
        'repository',
        'authorId',
        'q',
      ]),
    );
    expect(text).not.toContain('/api/admin');
  });
});
