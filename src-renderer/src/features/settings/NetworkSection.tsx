import { useState, type FormEvent } from 'react';
import type { AgentSettings } from '../../../../src-shared/accounts';
import { ApiError } from '../../api/client';
import { useSaveAgentSettings } from '../../api/queries';
import { TextArea } from '../../components/Field';

/** The hosts typed, one a line (commas and spaces separate too). */
const hostsOf = (text: string) => text.split(/[\s,]+/u).filter(Boolean);

/** The server's complaint about one host names that host, not its place in the list. */
function hostsError(error: ApiError | null, hosts: string[]): string | undefined {
  const detail = error?.details.find((d) => d.path.startsWith('body.allowedHosts'));
  if (!detail) return undefined;
  const index = Number(detail.path.split('.')[2]);
  const host = Number.isInteger(index) ? hosts[index] : undefined;
  return host === undefined ? detail.message : `${host}: ${detail.message}`;
}

/**
 * Settings › Agent › Network: open, or the hosts agents' programs may reach, with whether this
 * machine can hold them to it; owners set or clear the list.
 */
export function NetworkSection({
  org,
  settings,
  source,
  enforced,
  problem,
  canEdit,
}: {
  org: string;
  settings: AgentSettings;
  source: 'workspace' | 'environment' | 'default';
  enforced: boolean;
  problem: string | undefined;
  canEdit: boolean;
}) {
  const save = useSaveAgentSettings(org);
  const [text, setText] = useState((settings.allowedHosts ?? []).join('\n'));
  const error = save.error instanceof ApiError ? save.error : null;
  const hosts = hostsOf(text);
  // The list goes with the workspace's own agent setting, which it keeps as it is (all of it:
  // the PUT replaces the whole setting). The command is the administrator's, never sent.
  const { command: _command, allowedHosts: _hosts, ...own } = settings;
  const editable = canEdit && source !== 'environment';

  function limit(event: FormEvent) {
    event.preventDefault();
    save.mutate({ ...own, allowedHosts: hosts });
  }

  return (
    <section className="stack card" aria-labelledby="network-heading">
      <h2 id="network-heading">Network</h2>
      {settings.allowedHosts ? (
        <div>
          <p>Network: only these hosts, through Session Desk&apos;s proxy</p>
          <ul aria-label="Hosts agents may reach">
            {settings.allowedHosts.map((host) => (
              <li key={host}>
                <code>{host}</code>
              </li>
            ))}
          </ul>
        </div>
      ) : (
        <p>Network: open (agents&apos; programs reach any host)</p>
      )}
      {!enforced && (
        <p className="notice" role="note">
          Not enforced on this machine. {problem}
        </p>
      )}
      {editable ? (
        <form className="stack" onSubmit={limit}>
          <TextArea
            label="Allowed hosts"
            rows={4}
            value={text}
            onChange={(e) => setText(e.target.value)}
            error={hostsError(error, hosts)}
            hint="One a line: api.anthropic.com, *.github.com (its subdomains), with an optional :port. 127.0.0.1 and localhost only when listed. Only programs that use a proxy (HTTPS_PROXY) reach them; nothing else has a network."
          />
          {error && !hostsError(error, hosts) && (
            <p className="form-error" role="alert">
              {error.message}
            </p>
          )}
          {save.isSuccess && (
            <p className="muted small" role="status">
              Saved. New sessions and follow-ups use it.
            </p>
          )}
          <div className="form-actions">
            <button
              type="submit"
              className="button button-primary"
              disabled={save.isPending || hosts.length === 0}
            >
              Limit to these hosts
            </button>
            {settings.allowedHosts && (
              <button
                type="button"
                className="button"
                disabled={save.isPending}
                onClick={() => {
                  setText('');
                  save.mutate(own);
                }}
              >
                Open the network
              </button>
            )}
          </div>
        </form>
      ) : (
        <p className="muted small">
          {canEdit
            ? "The agent comes from SESSIONDESK_AGENT_COMMAND: choose this workspace's own agent above to limit its network."
            : 'Only owners can change the network.'}
        </p>
      )}
    </section>
  );
}
