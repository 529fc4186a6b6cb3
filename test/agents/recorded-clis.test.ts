import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentCommand, AgentCommandInput } from '../../src-main/agents/kinds/agent-command.js';
import type { AgentEvent, AgentParser } from '../../src-main/agents/agent-events.js';
import { claudeCodeCommand } from '../../src-main/agents/kinds/claude-code/command.js';
import { createClaudeCodeParser } from '../../src-main/agents/kinds/claude-code/parse.js';
import { codexCommand } from '../../src-main/agents/kinds/codex/command.js';
import { createCodexParser } from '../../src-main/agents/kinds/codex/parse.js';
import { geminiCommand } from '../../src-main/agents/kinds/gemini/command.js';
import { createGeminiParser } from '../../src-main/agents/kinds/gemini/parse.js';
import { runProgram } from '../helpers/agent-cli.js';
import { installRecordedClis, PROGRAMS } from '../helpers/recorded-clis.js';

const KINDS: [keyof typeof PROGRAMS, (input: AgentCommandInput) => AgentCommand, () => AgentParser][] = [
  ['claude-code', claudeCodeCommand, createClaudeCodeParser],
  ['codex', codexCommand, () => createCodexParser()],
  ['gemini', geminiCommand, createGeminiParser],
];

describe.each(KINDS)('the recorded %s on PATH', (kind, command, createParser) => {
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function invoke(input: AgentCommandInput) {
    const { args, stdin } = command(input);
    const env = { PATH: `${dir}:${process.env.PATH ?? ''}`, RECORDED_CLI_LOG: join(dir, 'calls.jsonl') };
    const run = await runProgram(PROGRAMS[kind], args, stdin, dir, env);
    const parser = createParser();
    const events: AgentEvent[] = [...run.stdout.split('\n').flatMap((l) => parser.line(l)), ...parser.end()];
    return { ...run, events };
  }

  it('plays a run and its resumed follow-up, which must carry the conversation id', async () => {
    dir = installRecordedClis(mkdtempSync(join(tmpdir(), 'recorded-clis-')));
    const first = await invoke({ prompt: 'Remember the colour. scenario:resume', model: 'claude-opus-4-6' });
    expect(first.code, first.stderr).toBe(0);
    const conversation = first.events.find((e) => e.kind === 'conversation') as { id: string };
    expect(first.events.at(-1)).toMatchObject({
      kind: 'result',
      result: { result: 'Remembered: the colour is teal.' },
    });

    const second = await invoke({ prompt: 'Which colour? scenario:resume', resumeId: conversation.id });
    expect(second.code, second.stderr).toBe(0);
    expect(second.events.at(-1)).toMatchObject({
      kind: 'result',
      result: { result: 'You told me the colour is teal.' },
    });

    const calls = readFileSync(join(dir, 'calls.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { args: string[]; stdin: string });
    expect(calls.map((c) => c.stdin)).toEqual([
      'Remember the colour. scenario:resume',
      'Which colour? scenario:resume',
    ]);
    expect(calls[0]!.args.join(' ')).not.toContain(conversation.id);
    expect(calls[1]!.args.join(' ')).toContain(conversation.id);
  });

  it('fails a resume of a conversation it never had, as the CLI does', async () => {
    dir = installRecordedClis(mkdtempSync(join(tmpdir(), 'recorded-clis-')));
    const run = await invoke({ prompt: 'scenario:resume', resumeId: '00000000-0000-0000-0000-000000000000' });
    const id = '00000000-0000-0000-0000-000000000000';
    // What each real CLI printed (refused-resume.json).
    const refusal = {
      'claude-code': { code: 1, stderr: `No conversation found with session ID: ${id}` },
      codex: { code: 1, stderr: `no rollout found for thread id ${id}` },
      gemini: { code: 42, stderr: 'Error resuming session: No previous sessions found for this project.' },
    }[kind];
    expect(run.code).toBe(refusal.code);
    expect(run.stderr).toContain(refusal.stderr);
    // Claude Code also prints its result line saying so; the others print nothing on stdout.
    if (kind === 'claude-code') {
      expect(run.events).toContainEqual(
        expect.objectContaining({ kind: 'result', errorSubtype: 'error_during_execution' }),
      );
    } else {
      expect(run.events).toEqual([]);
    }
  });

  it('refuses a command line its recordings were not made with, saying how it differs', async () => {
    dir = installRecordedClis(mkdtempSync(join(tmpdir(), 'recorded-clis-')));
    const env = { PATH: `${dir}:${process.env.PATH ?? ''}` };
    const { args, stdin } = command({ prompt: 'Say hello. scenario:plain-answer', model: 'gpt-5.5' });
    const program = PROGRAMS[kind];
    const changed = [
      // A flag added, one left out, and a prompt on the command line instead of stdin.
      { args: [...args, '--verbose-extra'], stdin },
      { args: args.slice(1), stdin },
      { args: [...args, stdin ?? ''], stdin: '' },
    ];
    for (const call of changed) {
      const run = await runProgram(program, call.args, call.stdin, dir, env);
      expect(run.code, run.stderr).toBe(2);
      expect(run.stdout).toBe('');
      expect(run.stderr).toContain(`recorded-cli.mjs: ${program} was called otherwise than its ${kind}`);
      expect(run.stderr).toContain(`called:   ${program} `);
    }
    // The same call as the product makes it is played.
    const played = await runProgram(program, args, stdin, dir, env);
    expect(played.code, played.stderr).toBe(0);
    // A model the session chose, or none, is the person's choice.
    const plain = command({ prompt: 'Say hello. scenario:plain-answer' });
    expect((await runProgram(program, plain.args, plain.stdin, dir, env)).code).toBe(0);
    const empty = await runProgram(program, plain.args, ' \n', dir, env);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('no prompt came on stdin');
  });

  it('exits 1 when the recorded run ended in an error', async () => {
    dir = installRecordedClis(mkdtempSync(join(tmpdir(), 'recorded-clis-')));
    const scenario = kind === 'codex' ? 'error-retry' : 'error-api';
    const run = await invoke({ prompt: `scenario:${scenario}` });
    expect(run.code).toBe(1);
    expect(run.events.at(-1)).toMatchObject({ kind: 'result', result: { subtype: 'error', is_error: true } });
  });
});
