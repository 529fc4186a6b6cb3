// Which folders the API takes as a CLI's history source: that CLI's folder (with conversations
// where it writes them, or the empty folders of a fresh install), named in full or from `~`;
// anything else is refused with a reason a person understands.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorResponseSchema } from '../../src-shared/errors.js';
import { HistorySourceResponseSchema, HistorySourcesResponseSchema } from '../../src-shared/history.js';
import { HISTORY_FIXTURES } from '../helpers/hostile-history.js';
import { asUser, seedWorkspace, startTestServer, type TestServer } from '../helpers/server.js';

const servers: TestServer[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.dispose();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const recorded = (kind: string, version: string, scenario: string) =>
  join(HISTORY_FIXTURES, kind, version, scenario);

/** A server whose data directory is `base/data`, its agents' home `base/home`, and an owner of it. */
async function serverIn(base: string) {
  const home = join(base, 'home');
  mkdirSync(home);
  const server = await startTestServer({
    dataDir: join(base, 'data'),
    agentEnv: { PATH: process.env.PATH, HOME: home },
  });
  servers.push(server);
  const owner = await seedWorkspace(server);
  const path = `/api/workspaces/${owner.organizationId}/history-sources`;
  const add = (kind: string, rootDir: string) =>
    asUser(server, owner.user.cookie, 'POST', path, { kind, rootDir });
  const list = async () =>
    HistorySourcesResponseSchema.parse(await (await asUser(server, owner.user.cookie, 'GET', path)).json());
  return { server, home, add, list };
}

/** The refusal's message, after checking it is a 400 in the API's error shape, worded for a person. */
async function refusal(response: Response): Promise<string> {
  const text = await response.text();
  expect(response.status, text).toBe(400);
  const { error } = ErrorResponseSchema.parse(JSON.parse(text));
  expect(error.code).toBe('validation_failed');
  // No system error codes, field names or stack frames.
  expect(error.message).not.toMatch(/\bE[A-Z]{3,}\b|rootDir|\bat .+:\d+/u);
  return error.message;
}

describe('a history source is that CLI’s folder', () => {
  it('refuses another CLI’s folder, or a folder with none of its conversations, saying why', async () => {
    const base = mkdtempSync(join(tmpdir(), 'history-folders-'));
    dirs.push(base);
    const { add, list } = await serverIn(base);
    const codexRoot = join(base, 'codex-root');
    cpSync(recorded('codex', '0.169.0', 'plain-answer'), codexRoot, { recursive: true });
    const claudeRoot = join(base, 'claude-root');
    cpSync(recorded('claude-code', '2.1.330', 'plain-answer'), claudeRoot, { recursive: true });

    expect(await refusal(await add('claude-code', codexRoot))).toBe(
      `${codexRoot} has no Claude Code conversations: Claude Code keeps them in ` +
        '~/.claude/projects/<project>/<id>.jsonl; this looks like a Codex folder (~/.codex/sessions).',
    );
    expect(await refusal(await add('gemini', claudeRoot))).toBe(
      `${claudeRoot} has no Gemini CLI conversations: Gemini CLI keeps them in ` +
        '~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl; this looks like a Claude Code folder (~/.claude/projects).',
    );
    expect(await refusal(await add('qwen-code', claudeRoot))).toBe(
      `${claudeRoot} has no Qwen Code conversations: Qwen Code keeps them in ` +
        '~/.qwen/projects/<project>/chats/<id>.jsonl; this looks like a Claude Code folder (~/.claude/projects).',
    );
    // Claude Code's projects folder itself: the folder above it is the one to name.
    expect(await refusal(await add('claude-code', join(claudeRoot, 'projects')))).toMatch(
      new RegExp(`it lies inside Claude Code's folder ${claudeRoot}: name that folder instead\\.$`, 'u'),
    );
    // A folder of someone's work, with a projects folder that is not Claude Code's.
    const work = join(base, 'work');
    mkdirSync(join(work, 'projects', 'website'), { recursive: true });
    writeFileSync(join(work, 'projects', 'website', 'index.html'), '<h1>Hi</h1>\n');
    expect(await refusal(await add('claude-code', work))).toBe(
      `${work} has no Claude Code conversations: Claude Code keeps them in ~/.claude/projects/<project>/<id>.jsonl.`,
    );
    expect(await refusal(await add('codex', join(base, 'nowhere')))).toBe(
      `There is no folder ${join(base, 'nowhere')}.`,
    );
    writeFileSync(join(base, 'notes.txt'), 'not a folder\n');
    expect(await refusal(await add('codex', join(base, 'notes.txt')))).toMatch(
      /notes\.txt is a file, not a folder: name the folder Codex keeps its history in \(~\/\.codex\)\.$/u,
    );
    expect(await refusal(await add('codex', 'codex-home'))).toMatch(/^"codex-home" is not a full path/u);
    expect((await list()).sources).toEqual([]);
  });

  it("refuses Session Desk's own data directory, a folder inside it and one holding it", async () => {
    const base = mkdtempSync(join(tmpdir(), 'history-folders-'));
    dirs.push(base);
    const { server, add, list } = await serverIn(base);
    // Shaped like Claude Code's folder, so that only where it is refuses it.
    const inside = join(server.dataDir, 'claude');
    cpSync(recorded('claude-code', '2.1.330', 'plain-answer'), inside, { recursive: true });

    expect(await refusal(await add('claude-code', server.dataDir))).toBe(
      `${server.dataDir} is Session Desk's data directory: Session Desk never imports its own files as history.`,
    );
    expect(await refusal(await add('claude-code', inside))).toBe(
      `${inside} lies inside Session Desk's data directory (${server.dataDir}): Session Desk never imports its own files as history.`,
    );
    expect(await refusal(await add('claude-code', base))).toBe(
      `${base} holds Session Desk's data directory (${server.dataDir}), whose files are never imported as history: ` +
        "name Claude Code's own folder instead (~/.claude).",
    );
    expect((await list()).sources).toEqual([]);
  });

  it("takes `~` as the server's home, and a fresh CLI folder that holds no conversation yet", async () => {
    const base = mkdtempSync(join(tmpdir(), 'history-folders-'));
    dirs.push(base);
    const { home, add, list } = await serverIn(base);
    // What each CLI leaves before its first conversation: Claude Code an empty projects folder,
    // Codex a day's folder, Gemini CLI its tools and a project's logs without chats.
    mkdirSync(join(home, '.claude', 'projects'), { recursive: true });
    mkdirSync(join(home, '.codex', 'sessions', '2026', '11', '25'), { recursive: true });
    mkdirSync(join(home, '.gemini', 'tmp', 'bin'), { recursive: true });
    writeFileSync(join(home, '.gemini', 'tmp', 'bin', 'rg'), '');
    mkdirSync(join(home, '.gemini', 'tmp', 'repo', 'chats'), { recursive: true });
    writeFileSync(join(home, '.gemini', 'tmp', 'repo', 'logs.json'), '[]');
    // Qwen Code: a project's folder with its meta file and an empty chats folder.
    mkdirSync(join(home, '.qwen', 'projects', '-home-me-repo', 'chats'), { recursive: true });
    writeFileSync(join(home, '.qwen', 'projects', '-home-me-repo', 'meta.json'), '{}');

    for (const [kind, named] of [
      ['claude-code', '~/.claude'],
      ['codex', '~/.codex/'],
      ['gemini', `${home}/.gemini`],
      ['qwen-code', '~/.qwen'],
    ] as const) {
      const added = await add(kind, named);
      expect(added.status, await added.clone().text()).toBe(201);
      expect(HistorySourceResponseSchema.parse(await added.json()).source.kind).toBe(kind);
    }
    expect((await list()).sources.map((s) => [s.kind, s.rootDir])).toEqual([
      ['claude-code', join(home, '.claude')],
      ['codex', join(home, '.codex')],
      ['gemini', join(home, '.gemini')],
      ['qwen-code', join(home, '.qwen')],
    ]);
    // `~` alone is the home, which holds no CLI's conversations folder.
    expect(await refusal(await add('codex', '~'))).toMatch(
      new RegExp(`^${home} has no Codex conversations`, 'u'),
    );
  });
});
