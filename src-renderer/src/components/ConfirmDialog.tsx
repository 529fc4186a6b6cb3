import { useEffect, useRef } from 'react';

/** A modal confirmation built on <dialog>: focus is trapped and Escape cancels. */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  body: string;
  confirmLabel: string;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby="confirm-title" onCancel={props.onCancel}>
      <h2 id="confirm-title">{props.title}</h2>
      <p>{props.body}</p>
      <div className="dialog-actions">
        <button type="button" className="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" className="button button-danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
