import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMAND_OPTIONS, COMMON_OPTIONS } from '../../src-main/cli/command-options.js';
import {
  COMMANDS,
  GROUPS,
  USAGE,
  usageLine,
  worksOnTeamDatabase,
  type Command,
} from '../../src-main/cli/usage.js';
import { ROOT, runCli, startServe } from '../helpers/cli.js';

/**
 * The help (src-main/cli/usage.ts), the parsers' option tables (command-options.ts) and the
 * command-line reference (docs/reference/command-line.md) say the same, for every command there
 * is and every option it takes, whatever is added later; and what a command's help says of
 * --database is what the command does.
 */

const REFERENCE = readFileSync(join(ROOT, 'docs', 'reference', 'command-line.md'), 'utf8');

/** What a command's parser accepts, --help aside (every command answers it). */
function optionsTaken(command: Command): string[] {
  return Object.keys({ ...COMMON_OPTIONS, ...COMMAND_OPTIONS[command] }).filter((o) => o !== 'help');
}

/** The options a text names: `--workspace`, `--data-dir`. */
function optionsNamed(text: string): Set<string> {
  return new Set([...text.matchAll(/(?<![\w-])--([a-z][a-z-]*)/gu)].map((m) => m[1]!));
}

/** The reference's line showing a command's usage line. */
function referenceLine(command: Command): string | undefined {
  return REFERENCE.split('\n').find((line) => line.includes(usageLine(command)));
}

/** Says a command refuses a team database, and how (its help's words). */
const REFUSES = /--database[^]*refused \(exit 2\)|refused \(exit 2\)[^]*--database/u;

describe('the help and the command-line reference', () => {
  it('know the same commands as the parsers', () => {
    expect([...COMMANDS].sort()).toEqual(Object.keys(COMMAND_OPTIONS).sort());
    expect(Object.keys(USAGE).sort()).toEqual(['main', ...COMMANDS].sort());
    for (const command of COMMANDS) {
      expect(USAGE.main, command).toMatch(new RegExp(`^  ${command} {2,}\\S`, 'mu'));
      const [group, sub] = command.split(' ');
      if (sub !== undefined) expect(GROUPS[group!], command).toContain(`  ${command}  `);
    }
  });

  it.each(COMMANDS)(
    '%s: its usage line names every option it takes, and the reference shows it',
    (command) => {
      const line = usageLine(command);
      const taken = optionsTaken(command);
      const named = optionsNamed(line);
      // Only options the parser takes: a usage line never offers one that is refused as unknown.
      expect(
        [...named].filter((o) => !taken.includes(o)),
        line,
      ).toEqual([]);
      for (const option of taken) {
        if (option === 'database' && !worksOnTeamDatabase(command)) {
          // Taken only to be refused: the help says so.
          expect(USAGE[command], command).toMatch(REFUSES);
          continue;
        }
        expect([...named], `${command}: --${option} is missing from its usage line`).toContain(option);
      }
      const shown = referenceLine(command);
      expect(shown, `docs/reference/command-line.md should show "${line}"`).toBeDefined();
      // The reference's line names whatever else the command takes (a refused --database).
      for (const option of taken)
        expect([...optionsNamed(shown!)], `${command}: --${option}`).toContain(option);
    },
  );

  it('the summary of --database in "sessiondesk --help" names the commands that work on a team database', () => {
    const summary = USAGE.main.slice(USAGE.main.indexOf('--database URL')).replaceAll('\n', ' ');
    for (const command of COMMANDS.filter(worksOnTeamDatabase)) {
      const [group] = command.split(' ');
      expect(summary, command).toMatch(new RegExp(`[ ,](${command}|${group})[ ,]`, 'u'));
    }
  });
});

/** A port nothing listens on: a database there is never reached. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A value of the kind a usage line's placeholder asks for, good enough to pass its checks. */
function sample(placeholder: string, folder: string): string {
  const values: Record<string, string> = {
    E: 'ann@example.com',
    EMAIL: 'ann@example.com',
    N: 'Ann',
    P: 'a-long-password',
    ORG: 'org_AAAAAAAAAAAAAAAAAAAAAA',
    KEY_ID: 'key_AAAAAAAAAAAAAAAAAAAAAA',
    KEY: 'sdk_not-a-key',
    LABEL: 'label',
    URL: 'http://127.0.0.1:9',
    FILE: join(folder, 'file'),
    DIR: folder,
    NAME: 'name',
    PROGRAM: 'true',
  };
  const value = values[placeholder];
  if (value === undefined) throw new Error(`no sample value for ${placeholder}: add one to sample()`);
  return value;
}

/**
 * The arguments a usage line requires (what stands outside its brackets), each with a sample
 * value: `key revoke --workspace ORG --id KEY_ID` gives `--workspace org_… --id key_…`.
 */
function requiredArguments(command: Command, folder: string): string[] {
  let rest = usageLine(command).slice(`sessiondesk ${command}`.length);
  // Brackets may nest: take the innermost out until none is left.
  while (/\[[^[\]]*\]/u.test(rest)) rest = rest.replace(/\[[^[\]]*\]/gu, ' ');
  const args: string[] = [];
  for (const word of rest.split(/\s+/u).filter(Boolean)) {
    if (word.startsWith('-')) args.push(word);
    else args.push(sample(word.replace(/[^A-Z_]/gu, ''), folder));
  }
  return args;
}

describe('what the help says of --database is what each command does', () => {
  const commands = COMMANDS.filter((c) => 'database' in COMMAND_OPTIONS[c]);

  it('a command that works on a team database goes to it; one that refuses it exits 2 and does nothing', async () => {
    const port = await closedPort();
    const database = `postgres://nobody@127.0.0.1:${port}/sessiondesk`;
    const outcomes = [];
    // A few at a time: each is a process of its own.
    for (let i = 0; i < commands.length; i += 4) {
      outcomes.push(
        ...(await Promise.all(
          commands.slice(i, i + 4).map(async (command) => {
            const folder = mkdtempSync(join(tmpdir(), 'sessiondesk-help-'));
            folders.push(folder);
            // Options first: what follows a command's "--" is its program.
            const args = [...command.split(' '), '--data-dir', join(folder, 'data'), '--database', database];
            // A server must not fail on its port before it reaches for the database.
            if ('port' in COMMAND_OPTIONS[command]) args.push('--port', '0');
            args.push(...requiredArguments(command, folder));
            return { command, args, result: await runCli(args) };
          }),
        )),
      );
    }
    for (const { command, args, result } of outcomes) {
      const what = `sessiondesk ${args.join(' ')}\n${result.stderr}`;
      if (worksOnTeamDatabase(command)) {
        // It tried the database it was given (and could not reach it): exit 1, naming it.
        expect(result.code, what).toBe(1);
        expect(result.stderr, what).toContain(`127.0.0.1:${port}`);
      } else {
        expect(result.code, what).toBe(2);
        expect(result.stderr, what).toMatch(/^sessiondesk: --database is refused: /u);
        expect(result.stdout, what).toBe('');
      }
    }
  }, 180_000);
});

/** What varies from one start to another, put aside: the URL and its token, the folder, the password. */
function shape(line: string): string {
  return line
    .replace(/https?:\/\/\S+/gu, 'URL')
    .replace(/^Data directory: .*$/u, 'Data directory: DIR')
    .replace(/^(Demo sign-in: \S+) \/ \S+/u, '$1 / PASSWORD')
    .replace(/^\d\d:\d\d:\d\d /u, 'TIME ')
    .replace(/Session Desk \d+\.\d+\.\d+\S* /u, 'Session Desk VERSION ');
}

/** The lines of a page's sample of what `serve --demo` prints (its command line left out). */
function demoSample(page: string): string[] {
  const text = readFileSync(join(ROOT, page), 'utf8');
  const block = [...text.matchAll(/```\n([^`]*?)```/gu)].find((m) => m[1]!.includes('Demo sign-in:'));
  if (!block) throw new Error(`${page} shows no output of serve --demo`);
  return block[1]!.split('\n').filter((line) => line !== '' && !line.startsWith('$ '));
}

describe('the manual shows what `serve --demo` prints', () => {
  it('the README and Getting started show its lines as it prints them, in order', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'sessiondesk-demo-'));
    folders.push(folder);
    const serve = await startServe(join(folder, 'data'), ['--demo']);
    try {
      await expect.poll(() => serve.stdout()).toContain('Stop with Ctrl+C.');
      const printed = serve.stdout().trimEnd().split('\n').map(shape);
      const logged = serve.stderr().split('\n').filter(Boolean).map(shape);
      expect(demoSample('README.md').map(shape)).toEqual(printed);
      // Getting started shows the terminal: the log's first line (stderr) comes as the server
      // starts listening, before what it prints once it has.
      expect(demoSample('docs/guides/getting-started.md').map(shape)).toEqual([logged[0], ...printed]);
    } finally {
      await serve.stop();
    }
  }, 60_000);
});
