import { useId, type InputHTMLAttributes, type ReactNode, type TextareaHTMLAttributes } from 'react';

interface FieldProps {
  label: string;
  error?: string | undefined;
  hint?: ReactNode;
}

/** The label, the control and its note (an error, announced, or a hint), wired by ids. */
function Field({
  label,
  error,
  hint,
  control,
}: FieldProps & { control: (a11y: Record<string, unknown>) => ReactNode }) {
  const id = useId();
  const noteId = `${id}-note`;
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {control({
        id,
        'aria-invalid': error ? true : undefined,
        'aria-describedby': error || hint ? noteId : undefined,
      })}
      {(error || hint) && (
        <p id={noteId} className={error ? 'field-error' : 'field-hint'} role={error ? 'alert' : undefined}>
          {error ?? hint}
        </p>
      )}
    </div>
  );
}

export function TextField({
  label,
  error,
  hint,
  ...input
}: FieldProps & InputHTMLAttributes<HTMLInputElement>) {
  return <Field label={label} error={error} hint={hint} control={(a11y) => <input {...a11y} {...input} />} />;
}

export function TextArea({
  label,
  error,
  hint,
  ...input
}: FieldProps & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  return (
    <Field label={label} error={error} hint={hint} control={(a11y) => <textarea {...a11y} {...input} />} />
  );
}
