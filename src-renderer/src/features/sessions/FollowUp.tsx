import { useState, type FormEvent } from 'react';
import type { ContinueIn, SessionSource } from '../../../../src-shared/sessions';
import { CLI_NAMES } from '../../../../src-shared/sessions';
import { ApiError } from '../../api/client';
import { useContinuation, useFollowUp } from '../../api/queries';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ContinueChoice, firstChoice } from './ContinueChoice';

/**
 * The box under the transcript: a follow-up prompt, sent with the button or Ctrl/⌘+Enter. An
 * imported session first asks where its conversation goes on, offering only what can work;
 * its own folder only after a confirmation, as it is the person's work tree.
 */
export function FollowUp({
  organizationId,
  sessionId,
  source,
  updatedAt,
}: {
  organizationId: string;
  sessionId: string;
  source: SessionSource | undefined;
  updatedAt: string;
}) {
  const send = useFollowUp(organizationId, sessionId);
  const choices = useContinuation(organizationId, sessionId, updatedAt, source !== undefined);
  const [text, setText] = useState('');
  const [picked, setPicked] = useState<ContinueIn | null>(null);
  const [confirming, setConfirming] = useState(false);
  // What was picked, while it can still work; else the first way that can.
  const offered = choices.data;
  const continueIn = picked !== null && offered?.[picked].possible === true ? picked : firstChoice(offered);
  const error = send.error instanceof ApiError ? send.error : null;
  const unsent = text.trim() === '' || (source !== undefined && continueIn === null);
  function post() {
    setConfirming(false);
    send.mutate(
      {
        content: text,
        ...(source && continueIn ? { continueIn } : {}),
        // The folder the person confirmed: the server runs the agent there only if it is the session's.
        ...(source && continueIn === 'original' && source.cwd ? { continueFolder: source.cwd } : {}),
      },
      { onSuccess: () => setText('') },
    );
  }
  function submit(event?: FormEvent) {
    event?.preventDefault();
    if (unsent) return;
    if (source && continueIn === 'original') setConfirming(true);
    else post();
  }
  return (
    <form className="follow-up" onSubmit={submit}>
      {source && offered && <ContinueChoice choices={offered} value={continueIn} onChange={setPicked} />}
      {source && choices.error && (
        <p className="field-error" role="alert">
          Could not ask where it can go on: {choices.error.message}
        </p>
      )}
      {source && (
        <ConfirmDialog
          open={confirming}
          title="Continue in your own folder?"
          body={`${CLI_NAMES[source.kind]} resumes this conversation in ${source.cwd ?? 'its working folder'}, your own work tree. The agent works there unattended and may change, add or delete files and commit.`}
          confirmLabel="Continue in my folder"
          onConfirm={post}
          onCancel={() => setConfirming(false)}
        />
      )}
      <label htmlFor="follow-up" className="visually-hidden">
        Follow-up prompt
      </label>
      <textarea
        id="follow-up"
        rows={3}
        placeholder="Follow up with the agent…  (Ctrl+Enter to send)"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) submit();
        }}
      />
      {error && (
        <p className="field-error" role="alert">
          {error.fieldError('body.content') ?? error.message}
        </p>
      )}
      <div className="form-actions">
        <button type="submit" className="button button-primary" disabled={send.isPending || unsent}>
          Send
        </button>
      </div>
    </form>
  );
}
