// The ACP agents' homes seeded from the person's own folders: what of their settings a session's
// home gets, as files on disk.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { seedQwenCode } from '../../src-main/agents/kinds/acp/acp-homes.js';
import { useCleanups } from '../helpers/cleanups.js';
import { tempDir } from '../helpers/server.js';

const cleanup = useCleanups();

describe("Qwen Code's home for a session", () => {
  it('keeps the sign-in and model of the settings, leaves the rest, and runs shell commands without a terminal', async () => {
    const person = tempDir('acp-home-person-');
    const session = tempDir('acp-home-session-');
    cleanup(() => rmSync(person, { recursive: true, force: true }));
    cleanup(() => rmSync(session, { recursive: true, force: true }));
    mkdirSync(join(person, '.qwen'));
    writeFileSync(
      join(person, '.qwen', 'settings.json'),
      JSON.stringify({
        model: { name: 'qwen3-coder' },
        modelProviders: { openai: [{ id: 'qwen3-coder', baseUrl: 'http://127.0.0.1:1/v1' }] },
        security: { auth: { selectedType: 'openai', useExternal: true } },
        mcpServers: { theirs: { command: 'their-server' } },
        tools: { shell: { enableInteractiveShell: true }, approvalMode: 'yolo' },
      }),
    );
    const folder = join(session, '.qwen');
    const notes: string[] = [];
    const env = await seedQwenCode(folder, session, { HOME: person }, notes);

    expect(env).toEqual({ QWEN_HOME: folder });
    expect(notes).toEqual([]);
    expect(JSON.parse(readFileSync(join(folder, 'settings.json'), 'utf8'))).toEqual({
      model: { name: 'qwen3-coder' },
      modelProviders: { openai: [{ id: 'qwen3-coder', baseUrl: 'http://127.0.0.1:1/v1' }] },
      security: { auth: { selectedType: 'openai' } },
      tools: { shell: { enableInteractiveShell: false } },
    });
  });
});
