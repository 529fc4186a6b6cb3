import type { ContinueIn, SessionSource } from '../../../../src-shared/sessions';
import { AGENT_NAMES } from '../../lib/usage';

/**
 * Why an imported session cannot go on in a fresh clone, or null when it can: the server's rule
 * (it says so again if the page is out of date).
 */
export function sandboxUnavailable(repository: string | undefined): string | null {
  return repository ? null : 'It has no repository: its folder had no origin on a code host.';
}

/** The choice of where an imported session's conversation goes on, above the follow-up box. */
export function ContinueChoice({
  source,
  repository,
  administrator,
  value,
  onChange,
}: {
  source: SessionSource;
  repository: string | undefined;
  /** Only the administrator sends an agent into a folder of this machine (the server's rule). */
  administrator: boolean;
  value: ContinueIn | null;
  onChange: (value: ContinueIn) => void;
}) {
  const cli = AGENT_NAMES[source.kind];
  const noSandbox = sandboxUnavailable(repository);
  return (
    <fieldset className="stack continue-choice">
      <legend className="continue-choice-legend">
        Imported from {cli}: continue it with {cli}&apos;s own resume
      </legend>
      <label className="checkbox cli-choice">
        <input
          type="radio"
          name="continue-in"
          value="original"
          checked={value === 'original'}
          disabled={!source.cwd || !administrator}
          onChange={() => onChange('original')}
        />{' '}
        <span>
          In its original folder <code>{source.cwd ?? 'not recorded'}</code>
          <span className="field-hint">
            {administrator
              ? ' your own work tree; asks first'
              : ' only the administrator of this Session Desk (the account made at first-run setup) may continue here'}
          </span>
        </span>
      </label>
      <label className="checkbox cli-choice">
        <input
          type="radio"
          name="continue-in"
          value="sandbox"
          checked={value === 'sandbox'}
          disabled={noSandbox !== null}
          onChange={() => onChange('sandbox')}
        />{' '}
        <span>
          In a fresh sandbox, a clone of <code>{repository ?? 'no repository'}</code>
          {noSandbox && <span className="field-hint"> {noSandbox}</span>}
        </span>
      </label>
    </fieldset>
  );
}
