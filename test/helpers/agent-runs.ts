import { expect } from 'vitest';
import { FullSessionResponseSchema, type SessionFull } from '../../src-shared/index.js';
import { asUser, type TestServer } from './server.js';

/** GETs a session's full form (validated against the schema) as a signed-in user. */
export async function getSession(server: TestServer, cookie: string, id: string): Promise<SessionFull> {
  const response = await asUser(server, cookie, 'GET', `/api/sessions/${id}`);
  expect(response.status).toBe(200);
  return FullSessionResponseSchema.parse(await response.json()).session;
}

/** Polls until the session holds `results` result messages and is no longer active. */
export async function waitForResults(
  server: TestServer,
  cookie: string,
  id: string,
  results = 1,
  timeoutMs = 20_000,
): Promise<SessionFull> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const session = await getSession(server, cookie, id);
    const count = session.messages.filter((m) => m.type === 'result').length;
    if (count >= results && session.status !== 'active') return session;
    if (Date.now() > until)
      throw new Error(`session ${id} did not finish: ${JSON.stringify(session.messages.at(-1))}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A scripted Claude Code turn that runs `command` with its Bash tool. */
export const bash = (command: string) => ({
  blocks: [{ type: 'tool_use' as const, name: 'Bash', input: { command, description: 'Run a command' } }],
});

/** The outputs of the session's tool calls, in order. */
export function toolOutputs(session: SessionFull): string[] {
  return session.messages.flatMap((m) =>
    m.type === 'assistant'
      ? m.message.content.flatMap((b) =>
          b.type === 'tool_result'
            ? [typeof b.content === 'string' ? b.content : JSON.stringify(b.content)]
            : [],
        )
      : [],
  );
}
