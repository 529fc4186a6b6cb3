import { cpSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI_KIND_SPECS } from '../../src-main/agents/kinds/cli-kinds.js';
import { tempDir } from '../helpers/server.js';

/** The real CLIs' own session files of a conversation resumed once (test/fixtures/history). */
const HISTORY = join(dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'history');
const FIRST_PROMPT = 'Remember that the colour is teal. RESUME-FIRST';
const SECOND_PROMPT = 'Which colour did I tell you?';

const usage = (input: number, output: number, cacheRead: number) => ({
  inputTokens: input,
  outputTokens: output,
  cacheReadTokens: cacheRead,
  cacheWriteTokens: 0,
});

const homes: string[] = [];
afterEach(() => {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
});

describe("a run's usage read from its CLI's own session file", () => {
  it('Codex: the responses after the run’s prompt, each record’s own tokens', async () => {
    const read = CLI_KIND_SPECS.codex.loggedUsage!;
    const env = { CODEX_HOME: join(HISTORY, 'codex', '0.169.0', 'resume') };
    const conversationId = '01a210f1-afd0-77b3-84d1-8fe48ebf91db';
    expect(await read({ env, conversationId, prompt: SECOND_PROMPT })).toEqual(usage(50, 10, 800));
    // The file's last turn is not this prompt's: the run never reached the CLI's file.
    expect(await read({ env, conversationId, prompt: FIRST_PROMPT })).toBeNull();
    expect(await read({ env, conversationId: 'another-thread', prompt: SECOND_PROMPT })).toBeNull();
  });

  it('Gemini CLI: the responses after the run’s prompt, input without the cached tokens', async () => {
    const home = tempDir('gemini-home-');
    homes.push(home);
    mkdirSync(join(home, '.gemini'));
    cpSync(join(HISTORY, 'gemini', '0.61.0', 'resume'), join(home, '.gemini'), { recursive: true });
    const read = CLI_KIND_SPECS.gemini.loggedUsage!;
    const input = { env: { HOME: home }, conversationId: '216f6914-0e21-439a-a872-8dd59672731d' };
    expect(await read({ ...input, prompt: SECOND_PROMPT })).toEqual(usage(50, 10, 800));
    // The file's last prompt is not this one: the run never reached the CLI's file.
    expect(await read({ ...input, prompt: FIRST_PROMPT })).toBeNull();
  });

  it('Claude Code: the responses after the run’s prompt, priced from the price table', async () => {
    const read = CLI_KIND_SPECS['claude-code'].loggedUsage!;
    const input = {
      env: { CLAUDE_CONFIG_DIR: join(HISTORY, 'claude-code', '2.1.330', 'resume') },
      conversationId: 'de6e2414-43fd-4cd2-89e5-499bc4d91210',
    };
    expect(await read({ ...input, prompt: SECOND_PROMPT })).toEqual({
      ...usage(120, 10, 80),
      // Claude Sonnet 4.5: $3 input, $15 output, $0.30 cache reads per million tokens.
      costUsd: expect.closeTo(120 * 3e-6 + 10 * 15e-6 + 80 * 0.3e-6, 12) as number,
    });
    expect(await read({ ...input, prompt: FIRST_PROMPT })).toBeNull();
  });
});
