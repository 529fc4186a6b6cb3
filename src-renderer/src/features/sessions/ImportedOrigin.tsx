import { CLI_NAMES, type PushedFrom, type SessionSource } from '../../../../src-shared/sessions';
import { CopyButton } from '../../components/CopyButton';
import { RelativeTime } from '../../components/RelativeTime';

/** Under the title of an imported session: which CLI it came from, and its file. */
export function ImportedFrom({ source }: { source: SessionSource }) {
  return (
    <p className="session-origin muted">
      Imported from {CLI_NAMES[source.kind]} · <code title={source.path}>{source.path}</code>
    </p>
  );
}

/** The Details rows of an imported session: its CLI's file and the folder it ran in. */
export function ImportedDetails({ source }: { source: SessionSource }) {
  return (
    <>
      <dt>Imported from</dt>
      <dd>{CLI_NAMES[source.kind]}</dd>
      <dt className="details-wide">Source file</dt>
      <dd className="details-wide">
        <code>{source.path}</code> <CopyButton text={source.path} label="the source file's path" />
      </dd>
      <dt>Ran in</dt>
      <dd>{source.cwd ? <code>{source.cwd}</code> : <span className="muted">not recorded</span>}</dd>
    </>
  );
}

/** Under the title of a session a desktop pushed here: which machine, whose, and when. */
export function PushedFromLine({ pushedFrom }: { pushedFrom: PushedFrom }) {
  const { machine, author, pushedAt } = pushedFrom;
  return (
    <p className="session-origin muted">
      Pushed from <code>{machine}</code> by {author.name} ({author.email}) · <RelativeTime iso={pushedAt} />
    </p>
  );
}
