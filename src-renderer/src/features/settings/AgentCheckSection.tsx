import { useEffect, useRef } from 'react';
import {
  AGENT_CHECK_DEADLINE_MS,
  AGENT_CHECK_PROMPT,
  AGENT_CHECK_STEP_LABELS,
  type AgentCheck,
  type AgentCheckStep,
} from '../../../../src-shared/agent-check';
import { useCheckAgent } from '../../api/queries';

const CHECK_HINT =
  `Runs this workspace's saved agent as a session would: its program, its sign-in, and one prompt ` +
  `(“${AGENT_CHECK_PROMPT}”) in a sandbox of its own through the network below. It answers within ` +
  `${AGENT_CHECK_DEADLINE_MS / 1000} seconds and keeps nothing.`;

function CheckStep({ step }: { step: AgentCheckStep }) {
  const label = AGENT_CHECK_STEP_LABELS[step.name];
  return (
    <li className={step.ok ? 'check-step check-step-ok' : 'check-step check-step-failed'} aria-label={label}>
      <span className="check-mark" aria-hidden="true">
        {step.ok ? '✓' : '✗'}
      </span>
      <div className="check-step-body">
        <p className="check-step-title">
          <strong>{label}</strong> <span className="check-step-outcome">{step.ok ? 'passed' : 'failed'}</span>
        </p>
        <p className="check-step-detail">{step.detail}</p>
        {step.endpoint && (
          <p className="small">
            Endpoint: <code>{step.endpoint}</code>
          </p>
        )}
        {step.fix && (
          <p className="check-step-fix">
            <strong>Fix:</strong> {step.fix}
          </p>
        )}
      </div>
    </li>
  );
}

function CheckResult({ check }: { check: AgentCheck }) {
  // The answer comes below a long form: it is brought into view as it arrives.
  const shown = useRef<HTMLDivElement>(null);
  useEffect(() => shown.current?.scrollIntoView({ block: 'nearest' }), [check]);
  return (
    <div className="check-result" ref={shown}>
      <p
        role="status"
        className={check.ok ? 'check-summary check-summary-ok' : 'check-summary check-summary-failed'}
      >
        {check.ok
          ? `${check.agent} is ready: every step passed.`
          : `${check.agent} is not ready: see the failed step below.`}
      </p>
      <ol className="check-steps" aria-label="Check steps">
        {check.steps.map((step) => (
          <CheckStep key={step.name} step={step} />
        ))}
      </ol>
    </div>
  );
}

/**
 * Settings › Agent › Check: the workspace's saved agent run as a session would run it, each
 * step with what it found and, where one failed, what to do.
 */
export function AgentCheckSection({ org, canCheck }: { org: string; canCheck: boolean }) {
  const check = useCheckAgent(org);
  return (
    <section className="stack card" aria-labelledby="check-heading">
      <h2 id="check-heading">Check</h2>
      <p className="muted small">{CHECK_HINT}</p>
      {canCheck ? (
        <div className="form-actions form-actions-start">
          <button type="button" className="button" disabled={check.isPending} onClick={() => check.mutate()}>
            {check.isPending ? 'Checking…' : 'Check'}
          </button>
        </div>
      ) : (
        <p className="muted small">Only owners can check the agent.</p>
      )}
      {check.isPending && (
        <p className="muted small" role="status">
          Checking the agent: this takes up to {AGENT_CHECK_DEADLINE_MS / 1000} seconds.
        </p>
      )}
      {check.error && (
        <p className="form-error" role="alert">
          {check.error.message}
        </p>
      )}
      {check.data && !check.isPending && <CheckResult check={check.data} />}
    </section>
  );
}
