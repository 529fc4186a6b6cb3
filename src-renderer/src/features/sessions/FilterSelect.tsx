/** One of the list's filters: a select whose first choice, "All …", filters nothing. */
export function FilterSelect<T extends string>({
  id,
  label,
  all,
  value,
  options,
  onChange,
}: {
  id: string;
  /** Its name for assistive technology; the select shows its choice. */
  label: string;
  all: string;
  value: T | undefined;
  options: readonly { value: T; label: string }[];
  onChange: (value: T | undefined) => void;
}) {
  return (
    <>
      <label className="visually-hidden" htmlFor={id}>
        {label}
      </label>
      <select
        id={id}
        value={value ?? ''}
        onChange={(e) => onChange(options.find((option) => option.value === e.target.value)?.value)}
      >
        <option value="">{all}</option>
        {options.map((option) => (
          <option key={option.value} value={option.value}>
            {option.label}
          </option>
        ))}
      </select>
    </>
  );
}
