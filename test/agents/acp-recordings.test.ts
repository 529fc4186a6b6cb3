// The ACP recordings (test/fixtures/agents/acp) are what the client is built and tested against:
// each must stay a valid JSON-RPC 2.0 exchange, every request answered once by the other side.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ACP = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'agents', 'acp');

type Side = 'client' | 'agent';
interface Line {
  t: number;
  from: Side;
  message: Record<string, unknown>;
}

const recordings = readdirSync(ACP, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((agent) =>
    readdirSync(join(ACP, agent.name))
      .filter((file) => file.endsWith('.ndjson'))
      .map((file) => `${agent.name}/${file}`),
  );

/** The problems of one recording's exchange, in words; none for a valid one. */
export function exchangeProblems(lines: Line[]): string[] {
  const problems: string[] = [];
  const open = new Map<string, string>();
  let last = 0;
  for (const [index, { t, from, message }] of lines.entries()) {
    const at = `message ${index + 1} (${from})`;
    if (from !== 'client' && from !== 'agent') problems.push(`${at}: from is ${String(from)}`);
    if (typeof t !== 'number' || t < last) problems.push(`${at}: time ${t} goes back from ${last}`);
    last = t;
    if (message.jsonrpc !== '2.0') problems.push(`${at}: jsonrpc is ${String(message.jsonrpc)}`);
    const hasId = 'id' in message;
    const validId = typeof message.id === 'string' || Number.isInteger(message.id);
    if (hasId && !validId) problems.push(`${at}: id ${JSON.stringify(message.id)} is no string or integer`);
    if (typeof message.method === 'string') {
      if (!hasId) continue;
      const key = `${from}:${JSON.stringify(message.id)}`;
      if (open.has(key)) problems.push(`${at}: id ${JSON.stringify(message.id)} reused while still open`);
      open.set(key, message.method);
      continue;
    }
    const asked = `${from === 'client' ? 'agent' : 'client'}:${JSON.stringify(message.id)}`;
    if (!open.delete(asked))
      problems.push(`${at}: answers id ${JSON.stringify(message.id)}, which nobody asked`);
    if ('result' in message === 'error' in message)
      problems.push(`${at}: needs exactly one of result and error`);
    const error = message.error as { code?: unknown; message?: unknown } | undefined;
    if (error && (!Number.isInteger(error.code) || typeof error.message !== 'string'))
      problems.push(`${at}: error without an integer code and a message`);
  }
  for (const [key, method] of open) problems.push(`${method} from ${key} never answered`);
  return problems;
}

describe('ACP recordings', () => {
  it('exist for every agent the recorder drives', () => {
    const agents = new Set(recordings.map((file) => file.split('/')[0]));
    expect([...agents].sort()).toEqual(['claude-agent-acp', 'codex-acp', 'gemini', 'opencode', 'qwen-code']);
  });

  it.each(recordings)('%s is a complete JSON-RPC 2.0 exchange', (file) => {
    const [header, ...rest] = readFileSync(join(ACP, file), 'utf8').trimEnd().split('\n');
    const { recording } = JSON.parse(header!) as { recording: { agent: string; version: string } };
    expect(recording.agent).toBe(file.split('/')[0]);
    expect(recording.version).toMatch(/^\d+\.\d+\.\d+/);
    const lines = rest.map((line) => JSON.parse(line) as Line);
    expect(lines[0]?.message.method).toBe('initialize');
    expect(exchangeProblems(lines)).toEqual([]);
  });

  it('finds what a broken exchange gets wrong', () => {
    const request = (from: Side, id: unknown, t = 0): Line => ({
      t,
      from,
      message: { jsonrpc: '2.0', id, method: 'session/prompt', params: {} },
    });
    const answer = (from: Side, id: unknown, extra: object = { result: {} }): Line => ({
      t: 1,
      from,
      message: { jsonrpc: '2.0', id, ...extra },
    });
    expect(exchangeProblems([request('client', 1), answer('agent', 1)])).toEqual([]);
    expect(exchangeProblems([request('client', 1)])).toEqual(['session/prompt from client:1 never answered']);
    expect(exchangeProblems([answer('agent', 7)])).toEqual([
      'message 1 (agent): answers id 7, which nobody asked',
    ]);
    expect(exchangeProblems([request('client', 1), answer('client', 1)])).toHaveLength(2);
    expect(exchangeProblems([request('client', 1), request('client', 1), answer('agent', 1)])).toEqual([
      'message 2 (client): id 1 reused while still open',
    ]);
    expect(
      exchangeProblems([request('agent', 'a'), answer('client', 'a', { result: {}, error: {} })]),
    ).toEqual([
      'message 2 (client): needs exactly one of result and error',
      'message 2 (client): error without an integer code and a message',
    ]);
    expect(exchangeProblems([request('client', 1.5, 5), answer('agent', 1.5)])).toContain(
      'message 2 (agent): time 1 goes back from 5',
    );
  });
});
