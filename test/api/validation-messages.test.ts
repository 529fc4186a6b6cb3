import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorResponseSchema } from '../../src-shared/index.js';
import { asUser, seedWorkspace, startTestServer, withKey, type TestServer } from '../helpers/server.js';

let server: TestServer;
let owner: Awaited<ReturnType<typeof seedWorkspace>>;

beforeAll(async () => {
  server = await startTestServer();
  owner = await seedWorkspace(server, 'owner');
});
afterAll(async () => server.dispose());

async function problem(response: Response) {
  expect(response.status).toBe(400);
  const { error } = ErrorResponseSchema.parse(await response.json());
  expect(error.code).toBe('validation_failed');
  return error;
}

describe('a request that fails validation', () => {
  it('is told which parameter is wrong and what it takes, in the message itself', async () => {
    for (const [query, message, detail] of [
      ['limit=abc', 'limit must be a whole number from 1 to 1000', 'query.limit'],
      ['status=nope', 'status must be one of "active", "completed", "failed"', 'query.status'],
      [`q=${'x'.repeat(201)}`, 'q must be at most 200 characters', 'query.q'],
    ] as const) {
      const error = await problem(await withKey(server, owner.apiKey, 'GET', `/api/sessions?${query}`));
      expect(error.message).toBe(message);
      expect(error.details).toEqual([{ path: detail, message: message.slice(message.indexOf(' ') + 1) }]);
    }
  });

  it('puts zod’s own wording ("expected number, received NaN") into plain words', async () => {
    const error = await problem(
      await asUser(server, owner.user.cookie, 'POST', '/api/sessions', { organizationId: 5 }),
    );
    expect(error.message).toBe('organizationId must be text');
    expect(JSON.stringify(error)).not.toMatch(/Invalid input|received/u);
  });

  it('names a missing field as required and each unknown field by its name', async () => {
    const missing = await problem(await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {}));
    expect(missing.message).toBe('organizationId is required');
    const unknown = await problem(
      await asUser(server, owner.user.cookie, 'POST', '/api/sessions', {
        organizationId: owner.organizationId,
        colour: 'red',
        size: 2,
      }),
    );
    expect(unknown.message).toBe('colour is not a field this request takes (and 1 more problem)');
    expect(unknown.details?.map((d) => d.path)).toEqual(['body.colour', 'body.size']);
  });
});
