import type { ContinuationChoices } from '../../../../src-shared/continuation';
import { CLI_NAMES, type ContinueIn } from '../../../../src-shared/sessions';

/**
 * The way to offer first: a fresh clone when it can work (it never touches the person's own
 * folder); their folder is chosen only on purpose.
 */
export function firstChoice(choices: ContinuationChoices | undefined): ContinueIn | null {
  return choices?.sandbox.possible ? 'sandbox' : null;
}

/**
 * The choice of where an imported session's conversation goes on, above the follow-up box: a
 * way that cannot work here (the server's checks, the ones a follow-up meets) is not offered,
 * and says why and what would make it work.
 */
export function ContinueChoice({
  choices,
  value,
  onChange,
}: {
  choices: ContinuationChoices;
  value: ContinueIn | null;
  onChange: (value: ContinueIn) => void;
}) {
  const cli = CLI_NAMES[choices.cli];
  const { original, sandbox } = choices;
  const neither = !original.possible && !sandbox.possible;
  return (
    <fieldset className="stack continue-choice">
      <legend className="continue-choice-legend">
        Imported from {cli}: continue it with {cli}&apos;s own resume
      </legend>
      {choices.blocked && (
        <p className="continue-blocked" role="note">
          {choices.blocked}
        </p>
      )}
      <label className="checkbox cli-choice">
        <input
          type="radio"
          name="continue-in"
          value="original"
          checked={value === 'original'}
          disabled={!original.possible}
          onChange={() => onChange('original')}
        />{' '}
        <span>
          In its original folder <code>{original.folder ?? 'not recorded'}</code>
          {(original.why ?? original.possible) && (
            <span className="field-hint"> {original.why ?? 'your own work tree; asks first'}</span>
          )}
        </span>
      </label>
      <label className="checkbox cli-choice">
        <input
          type="radio"
          name="continue-in"
          value="sandbox"
          checked={value === 'sandbox'}
          disabled={!sandbox.possible}
          onChange={() => onChange('sandbox')}
        />{' '}
        <span>
          In a fresh sandbox, a clone of <code>{sandbox.repository ?? 'no repository'}</code>
          {sandbox.why && <span className="field-hint"> {sandbox.why}</span>}
        </span>
      </label>
      {neither && !choices.blocked && (
        <p className="continue-blocked" role="note">
          Neither way can work here now: a follow-up cannot be sent.
        </p>
      )}
    </fieldset>
  );
}
