import { useEffect, useId, useRef } from 'react';
import { CHOICE_KEYS } from '../features/approvals/choices';
import { HELP_KEY, INBOX_MOVE_KEYS, SESSIONS_KEYS } from '../lib/shortcuts';

/** Where each shortcut works, and what it does: read from the keys the pages listen for. */
const GROUPS: { title: string; shortcuts: { keys: string[]; what: string }[] }[] = [
  {
    title: 'Anywhere',
    shortcuts: [
      { keys: [HELP_KEY], what: 'Show these shortcuts' },
      { keys: ['Esc'], what: 'Close a dialog' },
    ],
  },
  {
    title: 'Sessions',
    shortcuts: [
      { keys: [SESSIONS_KEYS.newSession], what: 'New session' },
      { keys: [SESSIONS_KEYS.search], what: 'Search the sessions' },
    ],
  },
  {
    title: 'A session',
    shortcuts: [
      { keys: ['Ctrl', 'Enter'], what: 'Send the follow-up (⌘ Enter on a Mac)' },
      { keys: ['Enter'], what: 'In Find in transcript: the next match (Shift Enter: the one before)' },
    ],
  },
  {
    title: 'Inbox',
    shortcuts: [
      { keys: [INBOX_MOVE_KEYS.next], what: 'The next request' },
      { keys: [INBOX_MOVE_KEYS.previous], what: 'The request before' },
      { keys: [CHOICE_KEYS.allowOnce], what: 'Allow once' },
      { keys: [CHOICE_KEYS.allowSession], what: 'Allow for the session' },
      { keys: [CHOICE_KEYS.reject], what: 'Reject (with an optional message)' },
    ],
  },
];

/**
 * The keyboard shortcuts, in a modal dialog (`?` opens it). Single keys work wherever the person
 * is not typing in a field.
 */
export function ShortcutsHelp({ open, onClose }: { open: boolean; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog ref={ref} className="dialog shortcuts-help" aria-labelledby={titleId} onClose={onClose}>
      <h2 id={titleId}>Keyboard shortcuts</h2>
      <p className="muted small">Single keys work wherever you are not typing in a field.</p>
      {GROUPS.map((group) => (
        <section key={group.title} aria-label={group.title}>
          <h3>{group.title}</h3>
          <dl>
            {group.shortcuts.map((shortcut) => (
              <div key={shortcut.what} className="shortcut">
                <dt>
                  {shortcut.keys.map((key, i) => (
                    <span key={key}>
                      {i > 0 && ' '}
                      <kbd>{key}</kbd>
                    </span>
                  ))}
                </dt>
                <dd>{shortcut.what}</dd>
              </div>
            ))}
          </dl>
        </section>
      ))}
      <div className="dialog-actions">
        <button type="button" className="button" onClick={onClose}>
          Close
        </button>
      </div>
    </dialog>
  );
}
