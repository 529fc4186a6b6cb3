import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForResults } from '../helpers/agent-runs.js';
import { transcript } from '../helpers/run-control.js';
import { createSession, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

/** Prints a 17 MiB assistant line, then a short one and a result. */
const BIG_LINE_AGENT = `
const say = (text) => process.stdout.write(JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text }] } }) + '\\n');
say('x'.repeat(17 * 1024 * 1024));
say('Still here');
process.stdout.write(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'Done', duration_ms: 1, num_turns: 1 }) + '\\n');
`;

describe('the command agent keeps to the output caps', () => {
  let server: TestServer;
  let owner: Awaited<ReturnType<typeof seedWorkspace>>;
  beforeAll(async () => {
    server = await startTestServer({ agentCommand: [process.execPath, '-e', BIG_LINE_AGENT] });
    owner = await seedWorkspace(server);
  });
  afterAll(async () => server.dispose());

  it('skips a line over 16 MiB with a notice, and the run goes on', { timeout: 60_000 }, async () => {
    const { id } = await createSession(server, owner.user.cookie, {
      organizationId: owner.organizationId,
      initialMessage: 'Print something big',
    });
    const session = await waitForResults(server, owner.user.cookie, id);
    expect(session.status).toBe('completed');
    expect(transcript(session)).toEqual([
      'user: Print something big',
      'assistant: A line of output of 17.0 MiB was skipped: lines are read up to 16.0 MiB.',
      'assistant: Still here',
      'result: Done',
    ]);
    expect(session.messages[1]).toMatchObject({ notice: 'error' });
  });
});
