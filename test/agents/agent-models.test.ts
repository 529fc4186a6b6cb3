import { execFileSync } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { modelsFor } from '../../src-shared/agent-models.js';
import { bundledCodexModels, geminiBundleSource } from '../helpers/agent-cli.js';
import { requireTools } from '../helpers/require-tools.js';
import { agentCliTool, ripgrepTool, type Tool } from '../helpers/tools.js';

/** The installed CLI, which must be the version the form's list was taken from. */
function installed(kind: string, program: 'claude' | 'codex' | 'gemini'): Tool & { path: string | null } {
  const cli = agentCliTool(program);
  if (!cli.path) return cli;
  const version = execFileSync(cli.path, ['--version'], { encoding: 'utf8' }).trim();
  const { checkedWith } = modelsFor(kind);
  // A list with no version is checked against whatever is installed.
  if (checkedWith === undefined || version.includes(checkedWith)) return cli;
  return {
    ...cli,
    found: false,
    name: `${program} ${checkedWith}, the version ${kind}'s model list was checked with (${cli.path} is ${version})`,
  };
}

const codex = installed('codex', 'codex');
const gemini = installed('gemini', 'gemini');
const claude = installed('claude-code', 'claude');

describe('the models the form offers are the ones the installed CLI knows', () => {
  it('Codex: each is in its bundled catalog, listed for people to pick', requireTools(codex), () => {
    const listed = bundledCodexModels(codex.path!)
      .filter((m) => m.visibility === 'list')
      .map((m) => m.slug);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed).toEqual(expect.arrayContaining([...modelsFor('codex').models]));
  });

  it('Gemini CLI: each is a model id or alias in its bundle', requireTools(gemini), () => {
    const source = geminiBundleSource(gemini.path!);
    for (const model of modelsFor('gemini').models) {
      expect(source, model).toMatch(
        new RegExp(`(?:_MODEL|_ALIAS_[A-Z_]+) = "${model.replaceAll('.', '\\.')}"`, 'u'),
      );
    }
  });

  it('Claude Code: each full id is one it names', requireTools(claude, ripgrepTool()), () => {
    const ids = modelsFor('claude-code').models.filter((m) => m.startsWith('claude-'));
    // The native program is large: rg reads it once for all the ids.
    const found = execFileSync(
      'rg',
      [
        '--text',
        '--only-matching',
        '--no-filename',
        ...ids.flatMap((id) => ['-e', `"${id}"`]),
        realpathSync(claude.path!),
      ],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    const named = new Set(found.split('\n').map((l) => l.replaceAll('"', '')));
    for (const id of ids) expect(named.has(id), id).toBe(true);
  });

  it('the agents that run a model get none unless the person chooses one', () => {
    for (const kind of ['command', 'claude-code', 'codex', 'gemini'])
      expect(modelsFor(kind).defaultModel).toBe('');
    // The demo runs no model; it records the specification's default.
    expect(modelsFor('demo')).toMatchObject({ models: [], defaultModel: 'claude-opus-4-6' });
  });
});
