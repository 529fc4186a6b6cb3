import { isAbsolute, relative, resolve, sep } from 'node:path';
import {
  PATTERN_SUBJECTS,
  ruleKindOf,
  type ApprovalRule,
  type RuleDecision,
} from '../../src-shared/approval-rules.js';
import type { ApprovalTool } from '../../src-shared/approvals.js';
import type { ApprovalSubject } from '../agents/types.js';
import { compileGlob, type Glob } from './glob.js';

/**
 * How a workspace's approval rules decide a request: the first that matches it, in order.
 *
 * A rule matches when its kind is the request's (a kind the protocol does not name counts as
 * `other`) and its pattern, if it has one, matches what the request would act on:
 * - `execute`: the command line. A rule that allows matches only a line that runs one command
 *   (no `;`, `&&`, `||`, `|`, `&`, line break, `` ` ``, `$(`, `<(` or `>(` in it) and matches it
 *   whole; a rule that asks or rejects matches the whole line or any one of its commands. Quotes
 *   are not parsed: a `;` inside them counts too, which only ever makes allowing stricter.
 * - the file kinds: the paths. A rule that allows must match every path; one that asks or
 *   rejects, any path.
 * - `fetch`: the URL.
 * Where the request has none of these to match (the agent sent no command, or one too long to
 * match), a rule that allows does not match it and a rule that asks or rejects does: what
 * Session Desk cannot tell is never allowed by a pattern.
 */

/** Longest command line matched by a pattern; a longer one counts as unknown. */
export const MAX_MATCHED_COMMAND_CHARS = 10_000;
/** Most paths, and longest path, matched; beyond them the paths count as unknown. */
export const MAX_MATCHED_PATHS = 100;
export const MAX_MATCHED_PATH_CHARS = 1024;

// eslint-disable-next-line no-control-regex
const UNREADABLE = /[\u0000-\u0008\u000b-\u001f\u007f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/** What makes a command line run more than one command, or a command's output another's input. */
const SUBSTITUTION = /`|\$\(|<\(|>\(/u;

/** A command line as rules see it: trimmed, each run of spaces and tabs one space. */
function matchedCommand(command: string): string | undefined {
  const lines = command.replace(/\r\n?/gu, '\n');
  if (lines.length > MAX_MATCHED_COMMAND_CHARS || UNREADABLE.test(lines)) return undefined;
  const line = lines.replace(/[ \t]+/gu, ' ').trim();
  return line === '' ? undefined : line;
}

/**
 * A path as rules see it: relative to the session's folder (`/`-separated, `.` for the folder
 * itself) when it lies inside, else absolute; `..` resolved first, so no path climbs out unseen.
 */
function matchedPath(path: string, folder: string): string | undefined {
  if (path === '' || path.length > MAX_MATCHED_PATH_CHARS || UNREADABLE.test(path)) return undefined;
  const absolute = resolve(folder, path);
  const inside = relative(folder, absolute);
  const shown = inside === '' ? '.' : inside.startsWith('..') || isAbsolute(inside) ? absolute : inside;
  return shown.split(sep).join('/');
}

/**
 * The tool with what rules match set on it (`command`, `paths`, `url`) from what its runner
 * saw, by the tool's kind; what cannot be matched is left out.
 */
export function withSubject(tool: ApprovalTool, subject: ApprovalSubject, folder: string): ApprovalTool {
  const { command: _command, paths: _paths, url: _url, ...rest } = tool;
  const kind = PATTERN_SUBJECTS[ruleKindOf(tool.kind)];
  if (kind === 'command' && subject.command !== undefined) {
    const command = matchedCommand(subject.command);
    return command === undefined ? rest : { ...rest, command };
  }
  if (kind === 'paths' && subject.paths !== undefined && subject.paths.length > 0) {
    if (subject.paths.length > MAX_MATCHED_PATHS) return rest;
    const paths = subject.paths.map((p) => matchedPath(p, folder));
    if (paths.some((p) => p === undefined)) return rest;
    return { ...rest, paths: [...new Set(paths as string[])] };
  }
  if (kind === 'url' && subject.url !== undefined && subject.url.length <= MAX_MATCHED_PATH_CHARS) {
    return UNREADABLE.test(subject.url) || subject.url.trim() === ''
      ? rest
      : { ...rest, url: subject.url.trim() };
  }
  return rest;
}

/** The commands of a command line, split where it chains them; quotes are not parsed. */
export function commandsOf(line: string): { commands: string[]; chained: boolean } {
  const commands: string[] = [];
  let current = '';
  let chained = SUBSTITUTION.test(line);
  const chars = [...line];
  const cut = () => {
    commands.push(current.trim());
    current = '';
    chained = true;
  };
  for (let i = 0; i < chars.length; i += 1) {
    const ch = chars[i] as string;
    const before = chars[i - 1];
    const after = chars[i + 1];
    if (ch === ';' || ch === '\n') cut();
    else if (ch === '|') {
      if (after === '|' || after === '&') i += 1;
      cut();
    } else if (ch === '&' && before !== '>' && before !== '<' && after !== '>') {
      // `2>&1` and `&>` send output somewhere; `&&` and a lone `&` start another command.
      if (after === '&') i += 1;
      cut();
    } else current += ch;
  }
  commands.push(current.trim());
  return { commands: commands.filter((c) => c !== ''), chained };
}

export interface CompiledRule {
  rule: ApprovalRule;
  index: number;
  matches(tool: ApprovalTool): boolean;
}

function compileRule(rule: ApprovalRule, index: number): CompiledRule {
  const glob = (mode: 'paths' | 'command'): Glob | undefined =>
    rule.pattern === undefined ? undefined : compileGlob(rule.pattern, mode);
  const paths = glob('paths');
  const command = glob('command');
  const allows = rule.decision === 'allow';
  return {
    rule,
    index,
    matches(tool) {
      const kind = ruleKindOf(tool.kind);
      if (rule.kind !== undefined && rule.kind !== kind) return false;
      if (rule.pattern === undefined) return true;
      switch (PATTERN_SUBJECTS[kind]) {
        case 'command': {
          if (tool.command === undefined) return !allows;
          const line = tool.command;
          const { commands, chained } = commandsOf(line);
          if (allows) return !chained && (command as Glob).test(line);
          return (command as Glob).test(line) || commands.some((one) => (command as Glob).test(one));
        }
        case 'paths': {
          if (tool.paths === undefined || tool.paths.length === 0) return !allows;
          const test = (p: string) => (paths as Glob).test(p);
          return allows ? tool.paths.every(test) : tool.paths.some(test);
        }
        case 'url':
          return tool.url === undefined ? !allows : (paths as Glob).test(tool.url);
        default:
          return false;
      }
    },
  };
}

/** The rules made ready to match; the first whose `matches` is true decides. */
export function compileRules(rules: readonly ApprovalRule[]): CompiledRule[] {
  return rules.map(compileRule);
}

export function firstMatch(rules: readonly CompiledRule[], tool: ApprovalTool): CompiledRule | undefined {
  return rules.find((rule) => rule.matches(tool));
}

/** What the workspace's `approvals` setting decides for a request no rule matches. */
export function modeDecision(mode: 'auto' | 'ask' | undefined): RuleDecision {
  return mode === 'ask' ? 'ask' : 'allow';
}

/** How many of a workspace's latest requests a preview tries draft rules on. */
export const PREVIEW_REQUESTS = 50;

/**
 * What draft rules would have done to requests already made: for each rule, how many it would
 * have decided (matched first) with a few of their titles, and how many no rule matches, which
 * `approvals` decides. `requests` come the latest first.
 */
export function previewRules(
  rules: readonly ApprovalRule[],
  mode: 'auto' | 'ask' | undefined,
  requests: readonly { title: string; tool: ApprovalTool }[],
) {
  const compiled = compileRules(rules);
  const counts = rules.map(() => ({ decided: 0, examples: [] as string[] }));
  let rest = 0;
  for (const request of requests) {
    const match = firstMatch(compiled, request.tool);
    const count = match ? counts[match.index] : undefined;
    if (!count) {
      rest += 1;
      continue;
    }
    count.decided += 1;
    if (count.examples.length < 3) count.examples.push(request.title);
  }
  return { considered: requests.length, rules: counts, rest: { count: rest, decision: modeDecision(mode) } };
}
