import { useState, type FormEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { AgentSettings } from '../../../../src-shared/accounts';
import {
  APPROVAL_RULE_LIMITS,
  APPROVAL_RULES_TEMPLATE,
  ApprovalRulesSchema,
  PATTERN_SUBJECTS,
  RULE_DECISIONS,
  TOOL_KINDS,
  type ApprovalRule,
  type RuleDecision,
  type ToolKind,
} from '../../../../src-shared/approval-rules';
import { useApprovalRulesPreview } from '../../api/approval-rules';
import { ApiError } from '../../api/client';
import { useAgentSettings, useSaveAgentSettings } from '../../api/queries';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ErrorState, Loading } from '../../components/States';
import { useDebouncedEffect } from '../../lib/use-debounced';
import { useWorkspace } from '../../lib/workspace';
import './approvals-page.css';
import {
  DECISION_WORDS,
  drafted,
  offeredRule,
  patternHint,
  problemsOf,
  ruleOf,
  type DraftRule,
} from './rule-drafts';
import { PreviewLine, restWords } from './RulePreview';

function RulesForm({
  org,
  settings,
  canEdit,
  cannotSave,
}: {
  org: string;
  settings: AgentSettings;
  canEdit: boolean;
  /** Why the rules cannot be saved here, when they cannot. */
  cannotSave: string | undefined;
}) {
  const [params, setParams] = useSearchParams();
  const save = useSaveAgentSettings(org);
  const saved = settings.approvalRules ?? [];
  const [rules, setRules] = useState<DraftRule[]>(() => {
    const offered = offeredRule(params);
    const own = saved.map((rule) => drafted(rule));
    // First, where it decides before the rules that may ask about the same request.
    return offered ? [drafted(offered, true), ...own] : own;
  });
  const [replacing, setReplacing] = useState(false);
  const [previewed, setPreviewed] = useState<ApprovalRule[] | null>(null);
  const error = save.error instanceof ApiError ? save.error : null;
  const problems = problemsOf(rules, error);
  const valid = ApprovalRulesSchema.safeParse(rules.map(ruleOf)).success;
  const dirty = JSON.stringify(rules.map(ruleOf)) !== JSON.stringify(saved);
  const mode = settings.approvals ?? 'auto';
  useDebouncedEffect(valid ? JSON.stringify(rules.map(ruleOf)) : null, 300, (draft) => {
    if (draft !== null) setPreviewed(JSON.parse(draft) as ApprovalRule[]);
  });
  const preview = useApprovalRulesPreview(org, previewed ? { approvalRules: previewed } : null);
  const shown = previewed && preview.data?.rules.length === previewed.length ? preview.data : undefined;
  // The counts shown are of an earlier draft while the latest is tried: shown dimmed.
  const stale = preview.isPlaceholderData || JSON.stringify(previewed) !== JSON.stringify(rules.map(ruleOf));

  const change = (index: number, patch: Partial<DraftRule>) => {
    setRules((all) => all.map((rule, i) => (i === index ? { ...rule, ...patch } : rule)));
    save.reset();
  };
  const move = (index: number, step: number) => {
    setRules((all) => {
      const next = [...all];
      const [rule] = next.splice(index, 1);
      if (rule) next.splice(index + step, 0, rule);
      return next;
    });
    save.reset();
  };
  const remove = (index: number) => {
    setRules((all) => all.filter((_, i) => i !== index));
    save.reset();
  };
  const add = () => {
    setRules((all) => [...all, drafted({ kind: 'execute', decision: 'ask' })]);
    save.reset();
  };
  const applyTemplate = () => {
    setRules(APPROVAL_RULES_TEMPLATE.map((rule) => drafted(rule)));
    setReplacing(false);
    save.reset();
  };

  function submit(event: FormEvent) {
    event.preventDefault();
    // The PUT replaces the whole setting: the rest of it goes as it is. The program is the
    // administrator's, never sent.
    const { command: _command, approvalRules: _rules, ...own } = settings;
    const approvalRules = rules.map(ruleOf);
    save.mutate(
      { ...own, ...(approvalRules.length > 0 ? { approvalRules } : {}) },
      {
        onSuccess: () => {
          setRules((all) => all.map(({ offered: _offered, ...rule }) => rule));
          if (params.has('decision')) setParams({}, { replace: true });
        },
      },
    );
  }

  const editable = canEdit && cannotSave === undefined;
  return (
    <form className="stack card" onSubmit={submit} aria-labelledby="rules-heading">
      <h2 id="rules-heading">Rules</h2>
      <p className="small">
        Checked in order before anyone is asked: the first rule that matches decides. A request no rule
        matches is {mode === 'ask' ? 'asked' : 'allowed'}, as{' '}
        <Link to="/settings/agent">Settings › Agent</Link> says (
        {mode === 'ask' ? 'ask first' : 'let agents act'}).
      </p>
      {rules.length === 0 ? (
        <p className="muted">No rules: every request is decided as Settings › Agent says.</p>
      ) : (
        <ol className="rules" aria-label="Approval rules">
          {rules.map((rule, index) => {
            const n = index + 1;
            const problem = (field: string) => problems.get(`${index}.${field}`);
            const noPattern = rule.kind !== '' && PATTERN_SUBJECTS[rule.kind] === null;
            return (
              <li key={rule.key} className={rule.offered ? 'rule rule-offered' : 'rule'}>
                <div className="rule-row">
                  <span className="rule-number" aria-hidden="true">
                    {n}
                  </span>
                  <label className="visually-hidden" htmlFor={`rule-${rule.key}-decision`}>
                    Rule {n} decision
                  </label>
                  <select
                    id={`rule-${rule.key}-decision`}
                    className={`rule-decision rule-decision-${rule.decision}`}
                    value={rule.decision}
                    disabled={!editable}
                    onChange={(e) => change(index, { decision: e.target.value as RuleDecision })}
                  >
                    {RULE_DECISIONS.map((decision) => (
                      <option key={decision} value={decision}>
                        {DECISION_WORDS[decision]}
                      </option>
                    ))}
                  </select>
                  <label className="visually-hidden" htmlFor={`rule-${rule.key}-kind`}>
                    Rule {n} kind
                  </label>
                  <select
                    id={`rule-${rule.key}-kind`}
                    className="rule-kind"
                    value={rule.kind}
                    disabled={!editable}
                    aria-invalid={problem('kind') ? true : undefined}
                    onChange={(e) => change(index, { kind: e.target.value as ToolKind | '' })}
                  >
                    <option value="">any kind</option>
                    {TOOL_KINDS.map((kind) => (
                      <option key={kind} value={kind}>
                        {kind}
                      </option>
                    ))}
                  </select>
                  <label className="visually-hidden" htmlFor={`rule-${rule.key}-pattern`}>
                    Rule {n} pattern
                  </label>
                  <input
                    id={`rule-${rule.key}-pattern`}
                    className="rule-pattern"
                    value={rule.pattern}
                    placeholder={patternHint(rule.kind)}
                    maxLength={APPROVAL_RULE_LIMITS.patternChars}
                    disabled={!editable || (noPattern && rule.pattern === '')}
                    spellCheck={false}
                    aria-invalid={problem('pattern') ? true : undefined}
                    onChange={(e) => change(index, { pattern: e.target.value })}
                  />
                  {editable && (
                    <span className="rule-actions">
                      <button
                        type="button"
                        className="icon-button"
                        disabled={index === 0}
                        aria-label={`Move rule ${n} up`}
                        title="Move up"
                        onClick={() => move(index, -1)}
                      >
                        ↑
                      </button>
                      <button
                        type="button"
                        className="icon-button"
                        disabled={index === rules.length - 1}
                        aria-label={`Move rule ${n} down`}
                        title="Move down"
                        onClick={() => move(index, 1)}
                      >
                        ↓
                      </button>
                      <button
                        type="button"
                        className="icon-button icon-button-danger"
                        aria-label={`Remove rule ${n}`}
                        title="Remove"
                        onClick={() => remove(index)}
                      >
                        ×
                      </button>
                    </span>
                  )}
                </div>
                {rule.offered && (
                  <p className="small rule-note">
                    From the Inbox: a new rule, first in the list, not saved yet.
                  </p>
                )}
                {(problem('kind') ?? problem('pattern') ?? problem('decision')) && (
                  <p className="field-error" role="alert">
                    Rule {n}: {problem('kind') ?? problem('pattern') ?? problem('decision')}
                  </p>
                )}
                <PreviewLine preview={shown} index={index} stale={stale} />
              </li>
            );
          })}
        </ol>
      )}
      {shown && (
        <p className={stale ? 'rules-rest rule-preview-stale small' : 'rules-rest small'} role="status">
          {restWords(shown)}
        </p>
      )}
      {preview.error && <p className="form-error">The preview failed: {preview.error.message}</p>}
      {editable && (
        <div className="rules-add">
          <button
            type="button"
            className="button"
            disabled={rules.length >= APPROVAL_RULE_LIMITS.rules}
            onClick={add}
          >
            Add a rule
          </button>
          <button
            type="button"
            className="button"
            onClick={() => (rules.length === 0 ? applyTemplate() : setReplacing(true))}
          >
            {rules.length === 0 ? 'Start from the template' : 'Replace with the template'}
          </button>
        </div>
      )}
      {error && error.details.length === 0 && (
        <p className="form-error" role="alert">
          {error.message}
        </p>
      )}
      {save.isSuccess && !dirty && (
        <p className="muted small" role="status">
          Saved. Runs started from now on follow these rules.
        </p>
      )}
      {cannotSave !== undefined && <p className="muted small">{cannotSave}</p>}
      {editable ? (
        <div className="form-actions">
          <button
            type="button"
            className="button"
            disabled={!dirty || save.isPending}
            onClick={() => {
              setRules(saved.map((rule) => drafted(rule)));
              save.reset();
            }}
          >
            Discard changes
          </button>
          <button
            type="submit"
            className="button button-primary"
            disabled={!dirty || !valid || save.isPending}
          >
            Save rules
          </button>
        </div>
      ) : (
        !canEdit && <p className="muted small">Only owners can change the rules.</p>
      )}
      <ConfirmDialog
        open={replacing}
        title="Replace the rules with the template?"
        body={`The ${rules.length === 1 ? 'rule' : `${rules.length} rules`} in the list give way to the template's: reads, searches and edits allowed; commands, network fetches and deletions asked. Nothing is saved until you save.`}
        confirmLabel="Replace"
        onCancel={() => setReplacing(false)}
        onConfirm={applyTemplate}
      />
    </form>
  );
}

/**
 * Settings › Approvals: the workspace's approval rules, edited in order, each with what it
 * would have decided of the latest requests, and a template to start from.
 */
export function ApprovalsPage() {
  const { workspace } = useWorkspace();
  const query = useAgentSettings(workspace.organizationId);
  return (
    <div className="page page-narrow">
      <header className="page-header">
        <h1>Approvals</h1>
      </header>
      <p className="muted">
        Rules decide what agents ask before they act in {workspace.name}, before anyone is asked: allowed and
        rejected requests never reach the <Link to="/inbox">Inbox</Link>, and the transcript says which rule
        decided. A pattern is a glob (<code>*</code>, <code>**</code>, <code>?</code>) matched against the
        command, the paths (relative to the session&apos;s folder) or the URL.
      </p>
      {query.isPending ? (
        <Loading label="Loading the rules" />
      ) : query.isError ? (
        <ErrorState error={query.error} onRetry={() => void query.refetch()} />
      ) : (
        <RulesForm
          key={workspace.organizationId}
          org={workspace.organizationId}
          settings={query.data.settings}
          canEdit={workspace.role === 'owner'}
          cannotSave={
            query.data.source === 'environment'
              ? 'This workspace runs the agent command the administrator set for every workspace: choose its agent in Settings › Agent first.'
              : undefined
          }
        />
      )}
    </div>
  );
}
