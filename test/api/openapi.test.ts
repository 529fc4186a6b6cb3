import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<
      string,
      {
        responses: Record<string, unknown>;
        requestBody?: unknown;
        parameters?: { name: string }[];
        security?: Record<string, string[]>[];
      }
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
      '/api/approvals',
      '/api/approvals/{approvalId}',
      '/api/auth/launch',
      '/api/auth/me',
      '/api/auth/methods',
      '/api/auth/sign-in',
      '/api/auth/sign-out',
      '/api/demo/sign-in',
      '/api/events',
      '/api/health',
      '/api/pull-requests/tool',
      '/api/push/sessions',
      '/api/push/sessions/{sessionId}',
      '/api/search',
      '/api/sessions',
      '/api/sessions/{sessionId}',
      '/api/sessions/{sessionId}/changes',
      '/api/sessions/{sessionId}/continuation',
      '/api/sessions/{sessionId}/events',
      '/api/sessions/{sessionId}/messages',
      '/api/sessions/{sessionId}/pull-request',
      '/api/sessions/{sessionId}/pull-request/refresh',
      '/api/sessions/{sessionId}/review',
      '/api/sessions/{sessionId}/stop',
      '/api/sessions/{sessionId}/summary',
      '/api/setup',
      '/api/setup/demo',
      '/api/workspaces',
      '/api/workspaces/{organizationId}/agent',
      '/api/workspaces/{organizationId}/agent/check',
      '/api/workspaces/{organizationId}/approval-rules/preview',
      '/api/workspaces/{organizationId}/history-sources',
      '/api/workspaces/{organizationId}/history-sources/{sourceId}',
      '/api/workspaces/{organizationId}/invitations/{email}',
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
    const review = doc.paths['/api/sessions/{sessionId}/review']!;
    expect(Object.keys(review.post!.responses)).toEqual(
      expect.arrayContaining(['201', '400', '401', '403', '404', '500']),
    );
    expect(Object.keys(review.get!.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '404']));
    const text = JSON.stringify(doc);
    // The schemas' own rules made it into the document.
    for (const fragment of [
      'initialMessage',
      'repoUrl',
      'mergesPastWeek',
      'nextCursor',
      '"enum":["active","completed","failed"]',
      // A review's comments, on the user message of the transcript too.
      '"enum":["new","old"]',
    ]) {
      expect(text).toContain(fragment);
    }
    expect(sessions.get!.parameters?.map((p) => p.name)).toEqual(
      expect.arrayContaining(['organizationId', 'limit', 'cursor', 'status', 'repository', 'authorId', 'q']),
    );
    expect(text).not.toContain('/api/admin');
  });
});

/**
 * The operations a caller without credentials may use: how to sign in, signing in and out, the
 * first-run setup and the demo's. Written here, not read from the server's document, so that a route left open
 * by mistake (and so declared open in the document it generates) fails.
 */
const PUBLIC_OPERATIONS = [
  'GET /api/auth/methods',
  'POST /api/auth/sign-in',
  'POST /api/auth/launch',
  'POST /api/auth/sign-out',
  'GET /api/setup',
  'POST /api/setup',
  'POST /api/setup/demo',
  'POST /api/demo/sign-in',
  'GET /api/health',
];

describe('the security of each operation', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    server = await startTestServer();
    owner = await seedWorkspace(server, 'owner');
    doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as OpenApiDocument;
  });
  afterAll(async () => server.dispose());

  const schemesOf = (security: Record<string, string[]>[] | undefined) =>
    (security ?? []).flatMap((requirement) => Object.keys(requirement)).sort();

  /** Well-formed ids of things that do not exist, so that no operation changes anything that matters. */
  function concrete(path: string): string {
    return path
      .replace('{organizationId}', owner.organizationId)
      .replace('{sessionId}', 'ses_aaaaaaaaaaaaaaaaaaaaaa')
      .replace(/\{[a-zA-Z]+\}/gu, 'xyz_aaaaaaaaaaaaaaaaaaaaaa');
  }

  /** The status of the operation called with no credentials at all. */
  async function statusWithout(method: string, path: string): Promise<number> {
    const abort = new AbortController();
    const response = await fetch(`${server.url}${concrete(path)}`, {
      method: method.toUpperCase(),
      headers: { origin: server.origin, ...(method === 'get' ? {} : { 'content-type': 'application/json' }) },
      ...(method === 'get' ? {} : { body: '{}' }),
      signal: abort.signal,
    });
    abort.abort();
    return response.status;
  }

  /** Whether the route let these credentials in: anything but 401 and a refused key. */
  async function accepted(method: string, path: string, headers: Record<string, string>, query = '') {
    const abort = new AbortController();
    const response = await fetch(`${server.url}${concrete(path)}${query}`, {
      method: method.toUpperCase(),
      headers: {
        origin: server.origin,
        ...headers,
        ...(method === 'get' ? {} : { 'content-type': 'application/json' }),
      },
      ...(method === 'get' ? {} : { body: '{}' }),
      signal: abort.signal,
    });
    // Event streams stay open: the status is all this needs.
    const body = response.headers.get('content-type')?.startsWith('application/json')
      ? ((await response.json()) as { error?: { code?: string } })
      : {};
    abort.abort();
    return response.status !== 401 && body.error?.code !== 'api_key_not_allowed';
  }

  it('declares the credentials each route takes: key routes all four schemes, user routes the cookie', () => {
    const everyScheme = ['apiKeyHeader', 'apiKeyQuery', 'bearer', 'sessionCookie'];
    const at = (path: string, method: string) => schemesOf(doc.paths[path]![method]!.security);
    expect(at('/api/sessions', 'get')).toEqual(everyScheme);
    expect(at('/api/sessions/{sessionId}', 'patch')).toEqual(everyScheme);
    expect(at('/api/events', 'get')).toEqual(everyScheme);
    expect(at('/api/sessions', 'post')).toEqual(['sessionCookie']);
    expect(at('/api/sessions/{sessionId}/messages', 'post')).toEqual(['sessionCookie']);
    expect(at('/api/workspaces/{organizationId}/keys', 'post')).toEqual(['sessionCookie']);
    expect(at('/api/auth/sign-in', 'post')).toEqual([]);
    // The query key is a security scheme, not a parameter of a route that refuses keys.
    const followUp = doc.paths['/api/sessions/{sessionId}/messages']!.post!;
    expect(followUp.parameters?.map((p) => p.name)).not.toContain('apiKey');
  });

  /** Every operation of the document, as `METHOD /path`. */
  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ method, path, operation })),
    );
  const name = (method: string, path: string) => `${method.toUpperCase()} ${path}`;

  it('opens only the operations this test names to callers without credentials', async () => {
    const all = operations();
    const names = all.map(({ method, path }) => name(method, path));
    // Each operation held open exists, and says it takes no credentials.
    expect(names).toEqual(expect.arrayContaining(PUBLIC_OPERATIONS));
    for (const { method, path, operation } of all) {
      if (PUBLIC_OPERATIONS.includes(name(method, path))) {
        expect(schemesOf(operation.security), name(method, path)).toEqual([]);
        // Open: it lets in a caller with nothing (sign-out would end the cookie used below).
        expect(await accepted(method, path, {}), `${name(method, path)} without credentials`).toBe(true);
        continue;
      }
      expect(await statusWithout(method, path), `${name(method, path)} without credentials`).toBe(401);
    }
    expect(all.length - PUBLIC_OPERATIONS.length).toBeGreaterThan(25);
  });

  it('matches what every route accepts: a declared credential is let in, an undeclared one is not', async () => {
    const ways: Record<string, { headers: Record<string, string>; query?: string }> = {
      apiKeyHeader: { headers: { 'x-api-key': owner.apiKey } },
      apiKeyQuery: { headers: {}, query: `?apiKey=${owner.apiKey}` },
      bearer: { headers: { authorization: `Bearer ${owner.apiKey}` } },
      sessionCookie: { headers: { cookie: owner.user.cookie } },
    };
    let checked = 0;
    for (const { method, path, operation } of operations()) {
      if (PUBLIC_OPERATIONS.includes(name(method, path))) continue;
      const declared = schemesOf(operation.security);
      expect(declared.length, `${name(method, path)} declares no credentials`).toBeGreaterThan(0);
      for (const [scheme, way] of Object.entries(ways)) {
        const result = await accepted(method, path, way.headers, way.query);
        expect(result, `${method} ${path} with ${scheme}`).toBe(declared.includes(scheme));
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(100);
  });
});
