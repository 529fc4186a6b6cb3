#!/usr/bin/env node
// Writes src-main/agents/kinds/acp/acp-registry.ts, Session Desk's copy of the public ACP
// registry (github.com/agentclientprotocol/registry): each agent's id, name, version,
// description, repository (or website) and its npx, uvx and Linux binary distributions, as the
// registry gives them. Run by hand (`npm run refresh:acp-registry`); the product never fetches
// the registry or an agent itself.
//
//   node scripts/refresh-acp-registry.mjs                      the registry's published index
//   node scripts/refresh-acp-registry.mjs --file PATH          a registry.json already here
//   node scripts/refresh-acp-registry.mjs --folder PATH        a checkout of the registry (<id>/agent.json)
//   ... [--source TEXT] [--out PATH] [--date YYYY-MM-DD]
//
// `--source` says in the file's header where the copy came from (a commit, say), beside the date.
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

/** The index the registry publishes (its README's "Usage"). */
export const REGISTRY_URL = 'https://cdn.agentclientprotocol.com/registry/v1/latest/registry.json';
/** The platforms a Session Desk server runs agents on. */
const PLATFORMS = ['linux-x86_64', 'linux-aarch64'];

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_OUT = join(ROOT, 'src-main', 'agents', 'kinds', 'acp', 'acp-registry.ts');

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value) => (typeof value === 'string' ? value : undefined);

/** One launch (`npx`, `uvx`, or a binary's platform), with only the fields Session Desk reads. */
function launch(raw, where) {
  if (!isObject(raw)) throw new Error(`${where}: not an object`);
  const out = {};
  for (const key of ['package', 'cmd', 'archive']) if (text(raw[key]) !== undefined) out[key] = raw[key];
  if (raw.args !== undefined) {
    if (!Array.isArray(raw.args) || raw.args.some((a) => typeof a !== 'string'))
      throw new Error(`${where}.args: not a list of strings`);
    out.args = raw.args;
  }
  if (raw.env !== undefined) {
    if (!isObject(raw.env) || Object.values(raw.env).some((v) => typeof v !== 'string'))
      throw new Error(`${where}.env: not a map of strings`);
    out.env = raw.env;
  }
  return out;
}

/** A registry agent as the copy keeps it; throws naming the agent and field that are wrong. */
export function registryAgent(raw) {
  if (!isObject(raw) || typeof raw.id !== 'string' || !/^[a-z0-9][a-z0-9._-]*$/u.test(raw.id))
    throw new Error(`an agent without a valid id: ${JSON.stringify(raw).slice(0, 80)}`);
  for (const key of ['name', 'version', 'description'])
    if (typeof raw[key] !== 'string') throw new Error(`${raw.id}: ${key} is not a string`);
  const given = isObject(raw.distribution) ? raw.distribution : {};
  const distribution = {};
  if (given.npx !== undefined) distribution.npx = launch(given.npx, `${raw.id}.npx`);
  if (given.uvx !== undefined) distribution.uvx = launch(given.uvx, `${raw.id}.uvx`);
  if (isObject(given.binary)) {
    const binary = {};
    for (const platform of PLATFORMS)
      if (given.binary[platform] !== undefined)
        binary[platform] = launch(given.binary[platform], `${raw.id}.binary.${platform}`);
    if (Object.keys(binary).length > 0) distribution.binary = binary;
  }
  return {
    id: raw.id,
    name: raw.name,
    version: raw.version,
    description: raw.description,
    repository: text(raw.repository) ?? text(raw.website) ?? null,
    distribution,
  };
}

/** The agents of a registry index (`{ agents: [...] }`), sorted by id, those with no way to run here left out. */
export function registryAgents(index) {
  if (!isObject(index) || !Array.isArray(index.agents)) throw new Error('the registry holds no agents list');
  const agents = index.agents.map(registryAgent).filter((a) => Object.keys(a.distribution).length > 0);
  return agents.sort((a, b) => a.id.localeCompare(b.id));
}

/** Text as comment lines of at most 100 characters. */
function comment(words) {
  const lines = [];
  let line = '//';
  for (const word of words.split(/\s+/u)) {
    if (line.length + 1 + word.length > 100 && line !== '//') {
      lines.push(line);
      line = '//';
    }
    line += ` ${word}`;
  }
  return [...lines, line].join('\n');
}

function moduleText(agents, { from, date }) {
  return `${comment(
    `The public ACP registry's agents (https://github.com/agentclientprotocol/registry), from ${from}, ` +
      `written on ${date}: each agent's id, name, version, description, repository (or website) and its ` +
      'npx, uvx and Linux binary distributions, unchanged. Written by scripts/refresh-acp-registry.mjs; ' +
      'do not edit by hand. Session Desk reads only this copy; it never fetches the registry or an agent.',
  )}

export interface RegistryLaunch {
  cmd?: string;
  package?: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  archive?: string;
}

export interface RegistryAgent {
  id: string;
  name: string;
  version: string;
  description: string;
  repository?: string | null;
  distribution: {
    npx?: RegistryLaunch;
    uvx?: RegistryLaunch;
    binary?: Readonly<Record<string, RegistryLaunch>>;
  };
}

export const ACP_REGISTRY: { agents: readonly RegistryAgent[] } = ${JSON.stringify({ agents }, null, 2)};
`;
}

/** Prettier's form of the module (the project's settings), so the format check finds nothing to change. */
async function formatted(source, out) {
  try {
    const prettier = await import('prettier');
    const options = (await prettier.resolveConfig(DEFAULT_OUT)) ?? {};
    return await prettier.format(source, { ...options, filepath: out });
  } catch (error) {
    if (error?.code === 'ERR_MODULE_NOT_FOUND') return source;
    throw error;
  }
}

/** A checkout of the registry: every `<id>/agent.json` at its top (not those set aside in `_…`). */
function indexFromFolder(folder) {
  const agents = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('_') || entry.name.startsWith('.')) continue;
    const file = join(folder, entry.name, 'agent.json');
    if (!statSync(file, { throwIfNoEntry: false })?.isFile()) continue;
    agents.push(JSON.parse(readFileSync(file, 'utf8')));
  }
  return { agents };
}

async function main() {
  const { values } = parseArgs({
    options: {
      file: { type: 'string' },
      folder: { type: 'string' },
      source: { type: 'string' },
      out: { type: 'string', default: DEFAULT_OUT },
      date: { type: 'string', default: new Date().toISOString().slice(0, 10) },
    },
  });
  if (values.file && values.folder) throw new Error('give --file or --folder, not both');
  if (!/^\d{4}-\d\d-\d\d$/u.test(values.date)) throw new Error(`--date ${values.date}: use YYYY-MM-DD`);
  let index;
  let from;
  if (values.folder) {
    index = indexFromFolder(values.folder);
    from = 'a checkout of the registry';
  } else if (values.file) {
    index = JSON.parse(readFileSync(values.file, 'utf8'));
    from = 'a copy of its registry.json';
  } else {
    const response = await fetch(REGISTRY_URL);
    if (!response.ok) throw new Error(`${REGISTRY_URL}: ${response.status} ${response.statusText}`);
    index = await response.json();
    from = REGISTRY_URL;
  }
  const agents = registryAgents(index);
  const text = moduleText(agents, { from: values.source ?? from, date: values.date });
  writeFileSync(values.out, await formatted(text, values.out));
  console.log(`${agents.length} agents from ${values.source ?? from} written to ${values.out}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(`refresh-acp-registry: ${error.message}`);
    process.exit(1);
  });
}
