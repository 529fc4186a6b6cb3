import { constants, type Dirent } from 'node:fs';
import { access, lstat, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { HISTORY_KIND_NAMES } from '../../src-shared/history.js';
import { HISTORY_KINDS, type HistoryKind } from '../../src-shared/sessions.js';
import { isInside, realOf } from '../agents/folders.js';
import { listFolder } from './safe-files.js';
import { SESSIONS_FOLDER, sessionFiles, Skips } from './session-files.js';

/**
 * Which folders may be a CLI's history source. A folder is Claude Code's, Codex's, Gemini
 * CLI's or Qwen Code's when it holds that CLI's conversations folder (`projects`, `sessions`,
 * `tmp`, `projects` with a `chats` folder per project) with at
 * least one conversation file where the CLI writes them, or with nothing in it yet but the
 * empty folders the CLI makes (a fresh install: see `emptyShape`). Session Desk's own data and
 * sandboxes are never a source, nor a folder inside or around them.
 */

/** A folder that cannot be a history source, and why, in a person's words. */
export class SourceFolderRefused extends Error {}

export interface FolderRules {
  /** What a leading `~` stands for: the home of the user Session Desk runs as. */
  home: string;
  /** Session Desk's own folders: never a source, nor inside or around one. */
  reserved: { path: string; what: string }[];
}

/** The rules for a Session Desk whose data and sandboxes are where these say. */
export function folderRules(env: NodeJS.ProcessEnv, dataDir: string, sandboxRoot: string): FolderRules {
  return {
    home: homeOf(env),
    reserved: [
      { path: dataDir, what: "Session Desk's data directory" },
      { path: sandboxRoot, what: "Session Desk's sandboxes" },
    ],
  };
}

/** The home folder as the environment names it, else the system's. */
export function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
}

/** `~` and `~/…` as the home; anything else as it is (`~user` is not expanded). */
export function expandHome(path: string, home: string): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

/** Where each CLI keeps its conversations, as a person finds them. */
const LAYOUTS: Record<HistoryKind, { root: string; files: string }> = {
  'claude-code': { root: '~/.claude', files: '~/.claude/projects/<project>/<id>.jsonl' },
  codex: { root: '~/.codex', files: '~/.codex/sessions/<year>/<month>/<day>/rollout-<time>-<id>.jsonl' },
  gemini: { root: '~/.gemini', files: '~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl' },
  'qwen-code': { root: '~/.qwen', files: '~/.qwen/projects/<project>/chats/<id>.jsonl' },
  opencode: { root: '~/.local/share/opencode', files: 'its database, ~/.local/share/opencode/opencode.db' },
};

/** How many folders the look for an empty CLI folder lists before it gives up: a fresh one has few. */
const EMPTY_SHAPE_LISTINGS = 1000;

/** Why a folder cannot be opened, without the system's error codes. */
function unopenable(root: string, err: NodeJS.ErrnoException): SourceFolderRefused {
  switch (err.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return new SourceFolderRefused(`There is no folder ${root}.`);
    case 'EACCES':
    case 'EPERM':
      return new SourceFolderRefused(
        `Session Desk may not read ${root}: its permissions keep out the user Session Desk runs as.`,
      );
    case 'ELOOP':
      return new SourceFolderRefused(`${root} is a symbolic link that leads round in a circle.`);
    default:
      return new SourceFolderRefused(`Session Desk cannot open ${root}: the system refused to read it.`);
  }
}

/** Whether `root` holds at least one of the CLI's conversation files where it writes them. */
async function holdsConversations(kind: HistoryKind, root: string): Promise<boolean> {
  return (await sessionFiles(kind, root, new Skips(root))).length > 0;
}

/**
 * Whether `root` is a CLI folder that holds no conversation yet: its conversations folder is
 * there and holds nothing but the empty folders the CLI makes. Claude Code: project folders
 * without files. Codex: year, month and day folders without files. Gemini CLI: project
 * folders (which also keep its logs, and `bin` its tools) whose `chats` folder is empty; Qwen
 * Code: project folders (which also keep its memory and meta.json) whose `chats` folder is empty.
 */
async function emptyShape(kind: HistoryKind, root: string): Promise<boolean> {
  let listings = 0;
  /** A folder's entries; null once the look has gone on longer than a fresh folder needs. */
  const list = async (dir: string): Promise<Dirent[] | null> => {
    listings += 1;
    return listings > EMPTY_SHAPE_LISTINGS ? null : listFolder(root, dir);
  };
  const holdsNothing = async (dir: string) => (await list(dir))?.length === 0;
  /** `dir`, `depth` folders below the conversations folder, holds no conversation and nothing else. */
  const bare = async (dir: string, depth: number): Promise<boolean> => {
    const entries = await list(dir);
    if (!entries) return false;
    if (kind === 'codex' && depth === 3) return entries.length === 0;
    if (!entries.every((entry) => entry.isDirectory())) return false;
    if (kind === 'claude-code' && depth === 1) return true;
    for (const entry of entries) {
      const below = join(dir, entry.name);
      if (kind === 'qwen-code') {
        // Anyone's `projects` folder has folders in it: a Qwen Code one has their `chats`.
        if (!(await isFolder(join(below, 'chats'))) || !(await holdsNothing(join(below, 'chats'))))
          return false;
      } else if (
        !(kind === 'gemini' ? await holdsNothing(join(below, 'chats')) : await bare(below, depth + 1))
      )
        return false;
    }
    return true;
  };
  const top = join(root, SESSIONS_FOLDER[kind]);
  try {
    // OpenCode makes its database on its first start: one without a session is a fresh one.
    // One that cannot be read (a link, a pipe, damaged) still names the folder OpenCode's: its
    // import says why the database was not read.
    if (kind === 'opencode') return (await lstat(top)) !== undefined;
    return (await lstat(top)).isDirectory() && (await bare(top, 0));
  } catch {
    // Not there, a link on the way, or unreadable: not a CLI folder waiting for its first conversation.
    return false;
  }
}

/**
 * Whether `root` is `kind`'s folder before its first conversation. Claude Code and Qwen Code
 * both keep theirs under `projects`: a Qwen Code folder whose project folders hold only folders
 * would pass for a fresh Claude Code one, so a folder holding another CLI's conversations never is.
 */
async function freshFolder(kind: HistoryKind, root: string): Promise<boolean> {
  if (!(await emptyShape(kind, root))) return false;
  for (const other of HISTORY_KINDS) {
    if (other !== kind && (await holdsConversations(other, root))) return false;
  }
  return true;
}

/** Whether `path` is a folder itself, not a link to one. */
async function isFolder(path: string): Promise<boolean> {
  return (await lstat(path).catch(() => null))?.isDirectory() ?? false;
}

/** The folders above `path`, nearest first, as far as a conversation file lies below a CLI's root. */
function ancestors(path: string): string[] {
  const found: string[] = [];
  for (let dir = dirname(path); found.length < 4 && dir !== dirname(dir); dir = dirname(dir)) found.push(dir);
  return found;
}

/** What `root` looks like instead of `kind`'s folder, as the end of the refusal; '' when nothing. */
async function lookalike(kind: HistoryKind, root: string): Promise<string> {
  const top = join(root, SESSIONS_FOLDER[kind]);
  const link = await lstat(top).catch(() => null);
  if (link?.isSymbolicLink()) {
    return (
      `; its ${SESSIONS_FOLDER[kind]} folder is a symbolic link, and links inside a history folder are ` +
      `never followed: name the folder that really holds ${SESSIONS_FOLDER[kind]}`
    );
  }
  const above = ancestors(root);
  for (const dir of above) {
    if (await holdsConversations(kind, dir))
      return `; it lies inside ${HISTORY_KIND_NAMES[kind]}'s folder ${dir}: name that folder instead`;
  }
  for (const other of HISTORY_KINDS) {
    if (other === kind) continue;
    if ((await holdsConversations(other, root)) || (await emptyShape(other, root))) {
      return `; this looks like a ${HISTORY_KIND_NAMES[other]} folder (${LAYOUTS[other].root}/${SESSIONS_FOLDER[other]})`;
    }
    for (const dir of above) {
      if (await holdsConversations(other, dir))
        return `; it lies inside a ${HISTORY_KIND_NAMES[other]} folder (${dir})`;
    }
  }
  return '';
}

/**
 * The folder `named` as a source of `kind`'s history: its full path, with a leading `~` made
 * the home. SourceFolderRefused says why it cannot be: not a full path, not a folder that can
 * be read, Session Desk's own, or (with `shape`, the default) not that CLI's folder. A CLI's
 * default place is its folder by definition: it is checked without `shape`.
 */
export async function checkSourceFolder(
  kind: HistoryKind,
  named: string,
  rules: FolderRules,
  options: { shape: boolean } = { shape: true },
): Promise<string> {
  const expanded = expandHome(named, rules.home);
  const { root: defaultRoot } = LAYOUTS[kind];
  if (!isAbsolute(expanded)) {
    throw new SourceFolderRefused(
      `"${named}" is not a full path: name the folder from the top, such as ` +
        `${expandHome(defaultRoot, rules.home)}, or from your home folder, such as ${defaultRoot}.`,
    );
  }
  const root = resolve(expanded);
  try {
    if (!(await stat(root)).isDirectory()) {
      throw new SourceFolderRefused(
        `${root} is a file, not a folder: name the folder ${HISTORY_KIND_NAMES[kind]} keeps its history in (${defaultRoot}).`,
      );
    }
    await access(root, constants.R_OK | constants.X_OK);
  } catch (err) {
    if (err instanceof SourceFolderRefused) throw err;
    throw unopenable(root, err as NodeJS.ErrnoException);
  }
  const real = realOf(root);
  for (const { path, what } of rules.reserved) {
    const other = realOf(path);
    if (isInside(real, other)) {
      const where = real === other ? `is ${what}` : `lies inside ${what} (${path})`;
      throw new SourceFolderRefused(`${root} ${where}: Session Desk never imports its own files as history.`);
    }
    if (isInside(other, real)) {
      throw new SourceFolderRefused(
        `${root} holds ${what} (${path}), whose files are never imported as history: ` +
          `name ${HISTORY_KIND_NAMES[kind]}'s own folder instead (${defaultRoot}).`,
      );
    }
  }
  if (!options.shape || (await holdsConversations(kind, root)) || (await freshFolder(kind, root)))
    return root;
  const name = HISTORY_KIND_NAMES[kind];
  throw new SourceFolderRefused(
    `${root} has no ${name} conversations: ${name} keeps them in ${LAYOUTS[kind].files}` +
      `${await lookalike(kind, root)}.`,
  );
}
