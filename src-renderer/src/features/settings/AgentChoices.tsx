import type { AgentKindInfo } from '../../../../src-shared/accounts';

/** How an agent is told apart in the form: its kind, and an ACP agent's id. */
export const choiceKey = (info: Pick<AgentKindInfo, 'kind' | 'acpAgent'>) =>
  info.acpAgent ? `${info.kind}:${info.acpAgent}` : info.kind;

/** Where an installed agent was found, and its version. */
function foundAt(info: AgentKindInfo): string {
  return `${info.version ? `version ${info.version}, ` : ''}${info.path ?? ''}`;
}

/** One installed agent's choice: its name, its version and where it was found. */
function InstalledChoice({
  info,
  checked,
  locked,
  onChoose,
}: {
  info: AgentKindInfo;
  checked: boolean;
  /** The account may not choose it (the demo's accounts run the demo agent only). */
  locked: boolean;
  onChoose: () => void;
}) {
  // The one chosen may have gone since (uninstalled): it stays shown, with why it cannot run. A
  // demo account cannot choose it whether it is installed or not: where it is found is no help.
  const detail = locked
    ? "not for the demo's accounts"
    : info.found
      ? foundAt(info)
      : (info.problem ?? 'not installed').replaceAll('`', '');
  return (
    <label className="checkbox cli-choice">
      <input
        type="radio"
        name="agent"
        value={choiceKey(info)}
        checked={checked}
        disabled={(!info.found || locked) && !checked}
        aria-describedby={locked ? 'demo-only-note' : undefined}
        onChange={onChoose}
      />{' '}
      <span className="cli-choice-name">{info.name}</span> <span className="muted small">({detail})</span>
    </label>
  );
}

/** An agent this server lacks: its name, and how to install it. */
function MissingAgent({ info }: { info: AgentKindInfo }) {
  return (
    <li className="missing-agent">
      <span className="missing-agent-name">{info.name}</span>
      <span className="missing-agent-how">
        {info.install ? (
          <code className="install-command">{info.install}</code>
        ) : (
          <span>Not on npm: install it as its makers say.</span>
        )}
        {info.envVar && (
          <span className="muted small">
            or set <code>{info.envVar}</code> to its path
          </span>
        )}
      </span>
    </li>
  );
}

/** Whether an agent is offered to choose: installed, or the one chosen (even if gone since). */
export const offered = (info: AgentKindInfo, isChosen: (info: AgentKindInfo) => boolean) =>
  info.found || isChosen(info);

/** The real agents installed here (and the one chosen), each with its name and version. */
export function InstalledAgents({
  agents,
  isChosen,
  locked = false,
  onChoose,
}: {
  /** Every agent but the demo and the command agent. */
  agents: AgentKindInfo[];
  isChosen: (info: AgentKindInfo) => boolean;
  /** The account may choose none of them (the demo's accounts). */
  locked?: boolean;
  onChoose: (info: AgentKindInfo) => void;
}) {
  const installed = agents.filter((info) => offered(info, isChosen));
  if (installed.length === 0)
    return (
      <p className="muted small">
        No agent is installed where this server runs: install one of those under Not installed below, then
        reload this page.
      </p>
    );
  return installed.map((info) => (
    <InstalledChoice
      key={choiceKey(info)}
      info={info}
      checked={isChosen(info)}
      locked={locked}
      onChoose={() => onChoose(info)}
    />
  ));
}

/** The agents this server lacks, folded: each with its install command. */
export function MissingAgents({ agents }: { agents: AgentKindInfo[] }) {
  if (agents.length === 0) return null;
  return (
    <details className="missing-agents">
      <summary>Not installed ({agents.length})</summary>
      <p className="muted small">
        Install one where this server runs (on its PATH), then reload this page to choose it.
      </p>
      <ul aria-label="Agents not installed">
        {agents.map((info) => (
          <MissingAgent key={choiceKey(info)} info={info} />
        ))}
      </ul>
    </details>
  );
}
