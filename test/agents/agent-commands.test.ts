import { describe, expect, it } from 'vitest';
import { claudeCodeCommand } from '../../src-main/agents/kinds/claude-code/command.js';
import { codexCommand } from '../../src-main/agents/kinds/codex/command.js';
import { geminiCommand } from '../../src-main/agents/kinds/gemini/command.js';

const BUILDERS = { 'claude-code': claudeCodeCommand, codex: codexCommand, gemini: geminiCommand };
const HOSTILE_PROMPTS = [
  '--dangerously-skip-permissions',
  '-rf',
  '--model=evil',
  '-',
  'resume x',
  '$(rm -rf /)',
];
const ID = '01a203ca-b1a6-77d2-94e1-a6043ec4f33d';

describe.each(Object.entries(BUILDERS))('%s command line', (_kind, build) => {
  it.each(HOSTILE_PROMPTS)(
    'passes the prompt %j on stdin only: the arguments do not depend on it',
    (prompt) => {
      for (const resumeId of [undefined, ID]) {
        const command = build({ prompt, model: 'claude-opus-4-6', resumeId });
        expect(command.stdin).toBe(prompt);
        expect(command.args).toEqual(build({ prompt: 'hello', model: 'claude-opus-4-6', resumeId }).args);
      }
    },
  );

  it('refuses a conversation id that could read as an option or a path', () => {
    for (const resumeId of ['-x', '--help', '../other', 'a b', '']) {
      if (resumeId === '') expect(build({ prompt: 'p', resumeId }).args.join(' ')).not.toContain('resume');
      else expect(() => build({ prompt: 'p', resumeId })).toThrow(/not a conversation id/u);
    }
  });
});

describe('Claude Code command line', () => {
  it('runs print mode with stream-json and a permission mode that can edit and commit', () => {
    expect(claudeCodeCommand({ prompt: 'Fix it' })).toEqual({
      args: [
        '-p',
        '--output-format=stream-json',
        '--verbose',
        '--permission-mode=bypassPermissions',
        '--forward-subagent-text',
      ],
      stdin: 'Fix it',
    });
  });

  it('passes the session model and resumes by session id', () => {
    const { args } = claudeCodeCommand({ prompt: 'More', model: 'claude-opus-4-6', resumeId: ID });
    expect(args.slice(-2)).toEqual(['--model=claude-opus-4-6', `--resume=${ID}`]);
  });
});

describe('Codex command line', () => {
  it('runs exec with JSON events, unattended, its plan tool on, the prompt read from stdin', () => {
    expect(codexCommand({ prompt: 'Fix it' })).toEqual({
      args: [
        'exec',
        '--json',
        '--dangerously-bypass-approvals-and-sandbox',
        '--skip-git-repo-check',
        '--config=tools.update_plan.enabled=true',
        '-',
      ],
      stdin: 'Fix it',
    });
  });

  it('passes only models Codex can run', () => {
    expect(codexCommand({ prompt: 'p', model: 'claude-opus-4-6' }).args).not.toContainEqual(
      expect.stringMatching(/^--model/u),
    );
    expect(codexCommand({ prompt: 'p', model: 'gpt-5.5' }).args).toContain('--model=gpt-5.5');
    expect(codexCommand({ prompt: 'p', model: 'o4-mini' }).args).toContain('--model=o4-mini');
  });

  it('resumes with `exec … resume <thread id> -`', () => {
    const { args } = codexCommand({ prompt: 'More', model: 'gpt-5.5', resumeId: ID });
    expect(args.slice(0, 2)).toEqual(['exec', '--json']);
    expect(args.slice(-3)).toEqual(['resume', ID, '-']);
  });
});

describe('Gemini CLI command line', () => {
  it('runs headless with stream-json and yolo approvals in a trusted sandbox', () => {
    expect(geminiCommand({ prompt: 'Fix it' })).toEqual({
      args: ['--output-format=stream-json', '--approval-mode=yolo', '--skip-trust'],
      stdin: 'Fix it',
    });
  });

  it('passes only Gemini models and its aliases, and resumes by session id', () => {
    expect(geminiCommand({ prompt: 'p', model: 'claude-opus-4-6' }).args).toHaveLength(3);
    expect(geminiCommand({ prompt: 'p', model: 'flash-lite' }).args).toContain('--model=flash-lite');
    expect(geminiCommand({ prompt: 'p', model: 'auto' }).args).toContain('--model=auto');
    expect(geminiCommand({ prompt: 'p', model: 'professional' }).args).toHaveLength(3);
    expect(geminiCommand({ prompt: 'p', model: 'gemini-2.5-pro', resumeId: ID }).args.slice(-2)).toEqual([
      '--model=gemini-2.5-pro',
      `--resume=${ID}`,
    ]);
  });
});
