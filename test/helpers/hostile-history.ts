// Copies of the CLIs' recorded folders (test/fixtures/history/) with what a hostile program
// could plant in them: links to a secret outside the folder, and named pipes.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  mkdirSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import type { HistoryKind } from '../../src-shared/sessions.js';
import { ROOT } from './cli.js';

export const HISTORY_FIXTURES = join(ROOT, 'test', 'fixtures', 'history');

/** What must never reach a transcript: the content of a file outside the followed folders. */
export const SECRET = 'PRIVATE-KEY-CANARY-7f3a9c0e51';

/** Every file under `dir` whose name matches, depth first. */
export function filesUnder(dir: string, match: RegExp): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, match);
    return match.test(name) ? [path] : [];
  });
}

/**
 * A copy of a recorded CLI folder under `base`, its files written an hour ago as a finished
 * session's are (a file written in the last two minutes is a session going on).
 */
export function finishedRoot(base: string, kind: HistoryKind, version: string, scenario: string): string {
  const root = join(base, `${kind}-root`);
  cpSync(join(HISTORY_FIXTURES, kind, version, scenario), root, { recursive: true });
  const anHourAgo = new Date(Date.now() - 3_600_000);
  for (const file of filesUnder(root, /./u)) utimesSync(file, anHourAgo, anHourAgo);
  return root;
}

/** A private key outside every followed folder, and a folder beside it to link to. */
export function secretOutside(base: string): { file: string; folder: string } {
  const outside = join(base, 'outside');
  mkdirSync(join(outside, 'folder'), { recursive: true });
  const file = join(outside, 'id_rsa');
  writeFileSync(file, `-----BEGIN OPENSSH PRIVATE KEY-----\n${SECRET}\n-----END OPENSSH PRIVATE KEY-----\n`);
  return { file, folder: join(outside, 'folder') };
}

/** A file holding the secret at `path` (made with its folders), as a link's target. */
function secretCopy(secret: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  cpSync(secret, path);
}

/**
 * Plants in a CLI folder, where its session files are: a session file that is a link to the
 * secret, a folder that is a link to a folder elsewhere holding session files with the secret,
 * for Gemini CLI its `.project_root` marker as a link to the secret, and for Qwen Code a
 * project's `chats` folder as a link. Returns the planted
 * paths relative to the root: what the import must report as not read.
 */
export function plantLinks(
  kind: HistoryKind,
  root: string,
  secret: { file: string; folder: string },
): string[] {
  const planted: string[] = [];
  const link = (target: string, path: string) => {
    rmSync(path, { force: true });
    symlinkSync(target, path);
    planted.push(relative(root, path));
  };
  if (kind === 'claude-code') {
    const session = filesUnder(join(root, 'projects'), /\.jsonl$/u)[0]!;
    const project = dirname(session);
    link(secret.file, join(project, '0badf00d-0000-4000-8000-000000000001.jsonl'));
    const elsewhere = join(secret.folder, 'claude-project');
    secretCopy(secret.file, join(elsewhere, '0badf00d-0000-4000-8000-000000000002.jsonl'));
    link(elsewhere, join(root, 'projects', 'linked'));
    // A session of its own whose sub-agents folder is a link: its sub-agents are elsewhere.
    cpSync(session, join(project, 'c0ffee00-0000-4000-8000-000000000003.jsonl'));
    const subagents = join(secret.folder, 'claude-session');
    secretCopy(secret.file, join(subagents, 'subagents', 'agent-0badf00d.jsonl'));
    link(subagents, join(project, 'c0ffee00-0000-4000-8000-000000000003'));
  } else if (kind === 'codex') {
    const day = dirname(filesUnder(join(root, 'sessions'), /\.jsonl$/u)[0]!);
    link(secret.file, join(day, 'rollout-2026-11-25T05-00-00-0badf00d-0000-4000-8000-000000000001.jsonl'));
    const year = join(secret.folder, 'codex-year');
    secretCopy(secret.file, join(year, '01', '01', 'rollout-2027-01-01T00-00-00-0badf00d.jsonl'));
    link(year, join(root, 'sessions', '2027'));
  } else if (kind === 'qwen-code') {
    // projects/<project>/chats/<session>.jsonl: a session file, a whole project folder, and a
    // project's chats folder as links.
    const chats = dirname(filesUnder(join(root, 'projects'), /\.jsonl$/u)[0]!);
    link(secret.file, join(chats, '0badf00d-0000-4000-8000-000000000001.jsonl'));
    const project = join(secret.folder, 'qwen-project');
    secretCopy(secret.file, join(project, 'chats', '0badf00d-0000-4000-8000-000000000002.jsonl'));
    link(project, join(root, 'projects', 'linked'));
    const chatsElsewhere = join(secret.folder, 'qwen-chats');
    secretCopy(secret.file, join(chatsElsewhere, '0badf00d-0000-4000-8000-000000000003.jsonl'));
    mkdirSync(join(root, 'projects', 'linked-chats'));
    // Reported as "in a folder that is a symbolic link" (it is found listing it): the secret's
    // absence is what this one is for.
    symlinkSync(chatsElsewhere, join(root, 'projects', 'linked-chats', 'chats'));
  } else {
    const chats = dirname(filesUnder(join(root, 'tmp'), /^session-/u)[0]!);
    link(secret.file, join(chats, 'session-2026-11-25T05-00-0badf00d.jsonl'));
    link(secret.file, join(dirname(chats), '.project_root'));
    const project = join(secret.folder, 'gemini-project');
    secretCopy(secret.file, join(project, 'chats', 'session-2026-11-25T05-01-0badf00d.jsonl'));
    link(project, join(root, 'tmp', 'linked'));
  }
  return planted;
}

/**
 * Plants named pipes where a CLI folder's files are read (nothing ever writes to them: whoever
 * opens or reads one waits for ever): a session file, and Claude Code's sub-agent `.meta.json`
 * (use the sub-agent recording) or Gemini CLI's `.project_root`. Returns them relative to the root.
 */
export function plantPipes(kind: HistoryKind, root: string): string[] {
  const pipes: string[] = [];
  const pipe = (path: string) => {
    rmSync(path, { force: true });
    execFileSync('mkfifo', [path]);
    pipes.push(relative(root, path));
  };
  if (kind === 'claude-code') {
    // projects/<project>/<session>/subagents/agent-….meta.json
    const meta = filesUnder(join(root, 'projects'), /\.meta\.json$/u)[0]!;
    pipe(meta);
    pipe(join(dirname(dirname(dirname(meta))), '0badf00d-0000-4000-8000-000000000004.jsonl'));
  } else if (kind === 'codex') {
    const day = dirname(filesUnder(join(root, 'sessions'), /\.jsonl$/u)[0]!);
    pipe(join(day, 'rollout-2026-11-25T05-00-00-0badf00d-0000-4000-8000-000000000004.jsonl'));
  } else if (kind === 'qwen-code') {
    const chats = dirname(filesUnder(join(root, 'projects'), /\.jsonl$/u)[0]!);
    pipe(join(chats, '0badf00d-0000-4000-8000-000000000004.jsonl'));
  } else {
    const chats = dirname(filesUnder(join(root, 'tmp'), /^session-/u)[0]!);
    pipe(join(dirname(chats), '.project_root'));
    pipe(join(chats, 'session-2026-11-25T05-02-0badf00d.jsonl'));
  }
  return pipes;
}
