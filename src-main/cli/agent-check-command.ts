import {
  AGENT_CHECK_ADMIN_PATH,
  AGENT_CHECK_STEP_LABELS,
  AgentCheckSchema,
  type AgentCheck,
} from '../../src-shared/agent-check.js';
import { checkAgentHere } from '../agents/run/agent-check.js';
import { resolveDataDir } from '../paths.js';
import { ADMIN_TOKEN_HEADER } from '../server/routes/admin.js';
import { storageOf } from '../store/sqljs-storage.js';
import type { Repos } from '../store/storage.js';
import { CliError, describeAdminError, existingDataDir, reachDataDir, unreachable } from './admin-target.js';
import { parse, print, required, stderrLogger } from './command-line.js';
import { databaseUrlOf, openTeamStorage } from './team-database.js';

/**
 * `sessiondesk agent check --workspace ORG`: the workspace's agent run as a session would run it
 * (agents/run/agent-check.ts), by the server that holds the data directory (its environment, its
 * sandbox), else here, as `serve` started from this shell would run it. Exit code 1 when a step
 * failed.
 */

/** What the check reads of the workspace, read once: the store is let go before the agent runs. */
async function workspaceOf(
  repos: Repos,
  organizationId: string,
): Promise<Pick<Repos['workspaces'], 'settings' | 'findById'>> {
  const workspace = await repos.workspaces.findById(organizationId);
  const settings = workspace ? await repos.workspaces.settings(organizationId) : null;
  return {
    findById: () => Promise.resolve(workspace),
    settings: () => Promise.resolve(settings),
  };
}

/** The check by the running server, through its admin channel. */
async function checkThroughServer(
  url: string,
  adminToken: string,
  organizationId: string,
): Promise<AgentCheck> {
  let response: Response;
  try {
    response = await fetch(new URL(AGENT_CHECK_ADMIN_PATH, url), {
      method: 'POST',
      headers: { [ADMIN_TOKEN_HEADER]: adminToken, 'content-type': 'application/json' },
      body: JSON.stringify({ organizationId }),
    });
  } catch (err) {
    throw unreachable(url, err);
  }
  const text = await response.text();
  if (!response.ok) throw new CliError(describeAdminError(response.status, text));
  return AgentCheckSchema.parse(JSON.parse(text));
}

function checkHere(
  workspaces: Awaited<ReturnType<typeof workspaceOf>>,
  dataDir: string,
  organizationId: string,
) {
  let check: (workspaceId: string) => Promise<AgentCheck>;
  try {
    check = checkAgentHere({ workspaces, dataDir, env: process.env, logger: stderrLogger });
  } catch (err) {
    // A setting of the environment that serve would refuse too (SESSIONDESK_AGENT_ENV, …).
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  return check(organizationId);
}

/** Control characters (an agent's answer may hold escape sequences) are never sent to the terminal. */
const printable = (text: string) =>
  text.replace(/[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu, (c) =>
    c === '\n' ? '\n' : `\\u{${c.codePointAt(0)!.toString(16)}}`,
  );

function printCheck(check: AgentCheck, organizationId: string): void {
  print(printable(`${check.agent}, the agent of ${organizationId}: ${check.ok ? 'ready' : 'not ready'}`));
  const width = Math.max(...check.steps.map((s) => AGENT_CHECK_STEP_LABELS[s.name].length));
  // Under the detail: past "  FAIL  " and the label's column.
  const indent = ' '.repeat(8 + width + 2);
  for (const step of check.steps) {
    const mark = step.ok ? 'ok  ' : 'FAIL';
    const lines = printable(step.detail).split('\n');
    print(`  ${mark}  ${AGENT_CHECK_STEP_LABELS[step.name].padEnd(width)}  ${lines[0]}`);
    for (const line of lines.slice(1)) print(`${indent}${line}`);
    if (step.endpoint) print(`${indent}endpoint: ${printable(step.endpoint)}`);
    if (step.fix) print(`${indent}fix: ${printable(step.fix)}`);
  }
}

export async function agentCheckCommand(args: string[]): Promise<number | void> {
  const v = parse('agent check', args);
  required('agent check', v, 'workspace');
  const organizationId = String(v.workspace);
  const databaseUrl = databaseUrlOf(v.database, 'agent check');
  const named = resolveDataDir(v['data-dir'] as string | undefined);
  let check: AgentCheck;
  if (databaseUrl !== undefined) {
    // The team database holds the workspace; DIR only the programs the administrator defined
    // (none, where it is not there), as for "serve --database".
    const dataDir = named;
    const team = await openTeamStorage(databaseUrl);
    let workspaces;
    try {
      workspaces = await workspaceOf(team.storage.repos, organizationId);
    } finally {
      await team.close();
    }
    check = await checkHere(workspaces, dataDir, organizationId);
  } else {
    const dataDir = existingDataDir(named);
    const access = await reachDataDir(dataDir, stderrLogger);
    if (access.kind === 'server') {
      check = await checkThroughServer(access.url, access.adminToken, organizationId);
    } else {
      let workspaces;
      try {
        workspaces = await workspaceOf(storageOf(access.store).repos, organizationId);
      } finally {
        await access.store.close({ snapshot: false });
      }
      check = await checkHere(workspaces, dataDir, organizationId);
    }
  }
  if (v.json) print(JSON.stringify(check, null, 2));
  else printCheck(check, organizationId);
  return check.ok ? 0 : 1;
}
