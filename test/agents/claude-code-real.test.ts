import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src-main/agents/agent-events.js';
import { createClaudeCodeParser } from '../../src-main/agents/kinds/claude-code/parse.js';
import { claudeCodeCommand } from '../../src-main/agents/kinds/claude-code/command.js';
import { CLAUDE_CODE_SCENARIOS } from '../fixtures/agents/claude-code-scenarios.mjs';
import { startScriptedAnthropicServer } from '../fixtures/agents/scripted-anthropic-server.mjs';
import { makeRunRoot, runProgram } from '../helpers/agent-cli.js';
import { claudeCodeEnv } from '../helpers/claude-code-cli.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool } from '../helpers/tools.js';

const claude = agentCliTool('claude');
const bin = claude.path;

const scenario = (name: string) => CLAUDE_CODE_SCENARIOS.find((s) => s.name === name)!;

/** The events of one run's output, as the parser gives them line by line, `end()` included. */
function parse(stdout: string): AgentEvent[] {
  const parser = createClaudeCodeParser();
  return [...stdout.split('\n').flatMap((line) => parser.line(line)), ...parser.end()];
}

describe('the real Claude Code CLI against the scripted model server', requireTools(claude), () => {
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp(name: string) {
    const { root, repo, home } = makeRunRoot('claude-code-real-');
    cleanups.push(() => rmSync(root, { recursive: true, force: true }));
    const server = await startScriptedAnthropicServer(scenario(name).script);
    cleanups.push(() => server.close());
    const run = async (prompt: string, resumeId?: string, extraArgs: string[] = []) => {
      const command = claudeCodeCommand({ prompt, model: 'claude-sonnet-4-5', resumeId });
      const args = [...command.args, ...extraArgs];
      const output = await runProgram(bin!, args, command.stdin, repo, claudeCodeEnv(home, server.url));
      return { ...output, events: parse(output.stdout) };
    };
    return { repo, server, run };
  }

  it('edits and commits unattended with the built-in command line, and the parser follows', async () => {
    const { repo, run } = await setUp('edit-and-commit');
    const { code, stderr, events } = await run(scenario('edit-and-commit').runs[0]!.prompt);
    expect(code, stderr).toBe(0);
    const blocks = events.flatMap((e) => (e.kind === 'assistant' ? e.content : []));
    const uses = blocks.filter((b) => b.type === 'tool_use');
    expect(uses.map((b) => b.name)).toEqual(['Write', 'Edit', 'Bash']);
    const results = blocks.filter((b) => b.type === 'tool_result');
    expect(results.map((b) => b.tool_use_id)).toEqual(uses.map((b) => b.id));
    expect(results.every((b) => b.is_error !== true)).toBe(true);
    // Each model response's usage as the run goes (output counted as the stream reports it),
    // then the result line's totals, which replace them.
    const usages = events.filter((e) => e.kind === 'usage');
    expect(usages.length).toBeGreaterThan(1);
    expect(usages.slice(-1)).toEqual([
      {
        kind: 'usage',
        usage: {
          inputTokens: 1100,
          outputTokens: 83,
          cacheReadTokens: 760,
          cacheWriteTokens: 0,
          costUsd: expect.closeTo(1100 * 3e-6 + 83 * 15e-6 + 760 * 0.3e-6, 12) as number,
        },
      },
    ]);
    expect(events.at(-1)).toMatchObject({
      kind: 'result',
      result: { subtype: 'success', result: 'Committed NOTES.md.' },
    });
    const log = execFileSync('git', ['log', '--format=%s'], { cwd: repo, encoding: 'utf8' });
    expect(log.split('\n')[0]).toBe('Add notes');
    expect(execFileSync('git', ['show', 'HEAD:NOTES.md'], { cwd: repo, encoding: 'utf8' })).toBe(
      'First line, edited\n',
    );
  }, 120_000);

  it('a follow-up resumes the conversation by the id the parser took from the first run', async () => {
    const { server, run } = await setUp('resume');
    const [firstRun, secondRun] = scenario('resume').runs;
    const first = await run(firstRun!.prompt);
    expect(first.code, first.stderr).toBe(0);
    const conversation = first.events.find((e) => e.kind === 'conversation');
    expect(conversation).toMatchObject({
      kind: 'conversation',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/u),
    });
    const id = (conversation as { id: string }).id;
    const requestsBefore = server.requests.length;

    const second = await run(secondRun!.prompt, id);
    expect(second.args).toContain(`--resume=${id}`);
    expect(second.code, second.stderr).toBe(0);
    expect(second.events.find((e) => e.kind === 'conversation')).toEqual({ kind: 'conversation', id });
    expect(second.events.at(-1)).toMatchObject({
      kind: 'result',
      result: { subtype: 'success', result: 'You told me the colour is teal.' },
    });
    // The model saw the first exchange again: the context was kept.
    const resumed = server.requests
      .slice(requestsBefore)
      .find(
        (r) => r.path === '/v1/messages' && JSON.stringify(r.body).includes('Which colour did I tell you?'),
      );
    expect(JSON.stringify(resumed?.body)).toContain('Remembered: the colour is teal.');
  }, 120_000);

  it('keeps error_max_turns from a run cut short by --max-turns', async () => {
    const { run } = await setUp('error-max-turns');
    const { prompt, extraArgs } = scenario('error-max-turns').runs[0]!;
    const { events } = await run(prompt, undefined, extraArgs);
    expect(events.at(-1)).toMatchObject({
      kind: 'result',
      errorSubtype: 'error_max_turns',
      result: { subtype: 'error', is_error: true },
    });
  }, 120_000);
});
