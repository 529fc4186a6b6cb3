import { CopyButton } from '../../components/CopyButton';
import { useWorkspace } from '../../lib/workspace';

/** The API's base URL and a ready-to-run example for each endpoint and each way of sending a key. */
export function ApiPage() {
  const { workspace } = useWorkspace();
  const base = window.location.origin;
  const org = workspace.organizationId;
  const examples: { title: string; note?: string; command: string }[] = [
    {
      title: 'List sessions (key in a header)',
      command: `curl -s -H "x-api-key: $SESSIONDESK_KEY" "${base}/api/sessions?limit=50"`,
    },
    {
      title: 'List sessions (key as a query parameter)',
      command: `curl -s "${base}/api/sessions?apiKey=$SESSIONDESK_KEY"`,
    },
    {
      title: 'List sessions (key as a bearer token)',
      command: `curl -s -H "Authorization: Bearer $SESSIONDESK_KEY" "${base}/api/sessions"`,
    },
    {
      title: 'Get one session, with its messages and tasks',
      command: `curl -s -H "x-api-key: $SESSIONDESK_KEY" "${base}/api/sessions/SESSION_ID"`,
    },
    {
      title: 'Rename or close a session',
      command: `curl -s -X PATCH -H "x-api-key: $SESSIONDESK_KEY" -H 'content-type: application/json' \\\n  -d '{"title":"New title","status":"completed"}' "${base}/api/sessions/SESSION_ID"`,
    },
    {
      title: 'Stop a session',
      note: 'Stops the agent; the session becomes completed with a result saying who stopped it.',
      command: `curl -s -X POST -H "x-api-key: $SESSIONDESK_KEY" "${base}/api/sessions/SESSION_ID/stop"`,
    },
    {
      title: 'Follow live events of the workspace',
      note: 'Server-sent events: session.created, session.updated, message.added, tasks.changed. Reconnect with Last-Event-ID to get what was missed.',
      command: `curl -N -H "x-api-key: $SESSIONDESK_KEY" "${base}/api/events"`,
    },
    {
      title: 'Follow one session live',
      command: `curl -N -H "x-api-key: $SESSIONDESK_KEY" "${base}/api/sessions/SESSION_ID/events"`,
    },
    {
      title: 'Create a session',
      note: 'Creating needs a signed-in user (the dashboard or the sign-in cookie), not a key.',
      command: `curl -s -c jar -H 'content-type: application/json' -d '{"email":"YOU@EXAMPLE.COM","password":"…"}' "${base}/api/auth/sign-in"\ncurl -s -b jar -H 'origin: ${base}' -H 'content-type: application/json' \\\n  -d '{"organizationId":"${org}","initialMessage":"Fix the flaky test","repoUrl":"https://github.com/owner/repo"}' "${base}/api/sessions"`,
    },
    {
      title: 'Send a follow-up prompt',
      note: 'Like creating, a follow-up needs the sign-in cookie (the jar above), not a key.',
      command: `curl -s -b jar -H 'origin: ${base}' -H 'content-type: application/json' \\\n  -d '{"content":"Also update the changelog"}' "${base}/api/sessions/SESSION_ID/messages?organizationId=${org}"`,
    },
  ];
  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>API</h1>
      </header>
      <dl className="details">
        <dt>Base URL</dt>
        <dd className="copy-row">
          <code>{base}</code>
          <CopyButton text={base} label="base URL" />
        </dd>
        <dt>organizationId</dt>
        <dd className="copy-row">
          <code>{org}</code>
          <CopyButton text={org} label="organizationId" />
        </dd>
        <dt>Reference</dt>
        <dd>
          <a href="/api/openapi.json">OpenAPI document</a>
        </dd>
      </dl>
      <p className="muted">
        Create a key under API keys and export it as <code>SESSIONDESK_KEY</code>. With a key the workspace
        comes from the key, so <code>organizationId</code> is not needed.
      </p>
      {examples.map((example) => (
        <section key={example.title} className="example">
          <h2>{example.title}</h2>
          {example.note && <p className="muted small">{example.note}</p>}
          <div className="example-code">
            <pre className="code">{example.command}</pre>
            <CopyButton text={example.command} label={example.title} />
          </div>
        </section>
      ))}
    </div>
  );
}
