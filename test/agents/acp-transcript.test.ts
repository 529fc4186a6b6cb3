import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src-main/agents/agent-events.js';
import { createAcpTranscript } from '../../src-main/agents/kinds/acp/acp-updates.js';

/**
 * The real agents' recorded ACP traffic (test/fixtures/agents/acp) replayed through the
 * transcript Session Desk makes of it: every agent's tool calls are paired with their results,
 * its streamed text is joined, and nothing it sent is an unknown kind.
 */

const DIR = join(import.meta.dirname, '../fixtures/agents/acp');
const AGENTS = ['opencode', 'qwen-code', 'gemini', 'claude-agent-acp', 'codex-acp'];

interface Line {
  from?: 'client' | 'agent';
  message?: {
    id?: unknown;
    method?: string;
    params?: Record<string, unknown>;
    result?: Record<string, unknown>;
  };
}

/** One prompt turn's events, from the recording's session/prompt requests to their answers. */
function replay(agent: string): { turns: AgentEvent[][]; usage: unknown[] } {
  const lines = readFileSync(join(DIR, agent, 'session.ndjson'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Line);
  const turns: AgentEvent[][] = [];
  const usage: unknown[] = [];
  let transcript: ReturnType<typeof createAcpTranscript> | null = null;
  let events: AgentEvent[] = [];
  let promptId: unknown;
  for (const { from, message } of lines) {
    if (!message) continue;
    if (from === 'client' && message.method === 'session/prompt') {
      transcript = createAcpTranscript();
      events = [];
      promptId = message.id;
    } else if (transcript && from === 'agent' && message.method === 'session/update') {
      events.push(...transcript.update(message.params?.update));
    } else if (transcript && from === 'agent' && message.method === 'session/request_permission') {
      events.push(...transcript.permissionAsked(message.params?.toolCall));
    } else if (transcript && from === 'agent' && message.id === promptId && message.result) {
      events.push(...transcript.end());
      usage.push(transcript.usage(message.result));
      turns.push(events);
      transcript = null;
    }
  }
  return { turns, usage };
}

const blocksOf = (events: AgentEvent[]) => events.flatMap((e) => (e.kind === 'assistant' ? e.content : []));

describe.each(AGENTS)('the transcript of %s over ACP', (agent) => {
  const { turns } = replay(agent);

  it('has the recording’s three prompt turns', () => {
    expect(turns).toHaveLength(3);
  });

  it('pairs each tool call with one result, in order, and joins the streamed text', () => {
    const tools = blocksOf(turns[0]!);
    const uses = tools.filter((b) => b.type === 'tool_use').map((b) => (b as { id: string }).id);
    const results = tools
      .filter((b) => b.type === 'tool_result')
      .map((b) => (b as { tool_use_id: string }).tool_use_id);
    // The recording's tool prompt reads a file, writes one and runs a command.
    expect(uses.length).toBeGreaterThanOrEqual(3);
    expect(new Set(uses).size).toBe(uses.length);
    expect(results).toEqual(uses);
    for (const turn of turns.slice(0, 2)) {
      const texts = blocksOf(turn).filter((b) => b.type === 'text');
      expect(texts.length).toBeGreaterThan(0);
      // Chunks were joined: no text block is a lone fragment of a word followed by another text block.
      for (let i = 1; i < turn.length; i += 1) {
        const [a, b] = [turn[i - 1]!, turn[i]!];
        const bothText =
          a.kind === 'assistant' &&
          b.kind === 'assistant' &&
          a.content[0]?.type === 'text' &&
          b.content[0]?.type === 'text';
        expect(bothText).toBe(false);
      }
    }
  });

  it('shows nothing as an update of an unknown kind', () => {
    const unknown = turns.flat().filter((e) => e.kind === 'notice' && e.text.includes('does not show'));
    expect(unknown).toEqual([]);
  });

  it('closes the call the cancel cut off with a result saying so', () => {
    const last = blocksOf(turns[2]!);
    const uses = last.filter((b) => b.type === 'tool_use').length;
    const results = last.filter((b) => b.type === 'tool_result').length;
    expect(results).toBe(uses);
  });
});

describe('usage reported by the agents', () => {
  it('is read where each agent puts it: the answer’s usage, usage_update, or Gemini CLI’s metadata', () => {
    const found = Object.fromEntries(AGENTS.map((agent) => [agent, replay(agent).usage[0]]));
    // Every agent that reports a turn's tokens gives some for the tool turn.
    for (const agent of ['opencode', 'gemini']) {
      expect(found[agent], agent).toMatchObject({ outputTokens: expect.any(Number) as number });
      expect((found[agent] as { outputTokens: number }).outputTokens, agent).toBeGreaterThan(0);
    }
  });
});
