/**
 * The API's timestamps are ISO 8601 in UTC with exactly three fractional digits
 * (`2026-11-26T12:09:04.217Z`, `z.iso.datetime({ precision: 3 })`), and they are compared as
 * text. Times read from other programs' files come in other forms: microseconds or nanoseconds
 * (`…04.217088Z`), offsets (`+02:00`, `-0530`), a space for the `T`, no fraction. Those that say
 * an instant unambiguously are turned into the API's form; the rest are refused.
 */

/** Years outside these are a clock or a file gone wrong, not when a session happened. */
const FIRST_YEAR = 2000;
const LAST_YEAR = 2199;

const ISO_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,12}))?)? ?([Zz]|[+-]\d{2}(?::?\d{2})?)$/u;

/** The API's form of the instant `value` names, or undefined when it names none (or no zone). */
export function normalTimestamp(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > 64) return undefined;
  const match = ISO_TIME.exec(value.trim());
  if (!match) return undefined;
  const [, y, mo, d, h, mi, s = '0', fraction = '', zone = 'Z'] = match;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as number[];
  if (year! < FIRST_YEAR || year! > LAST_YEAR) return undefined;
  if (month! < 1 || month! > 12 || hour! > 23 || minute! > 59 || second! > 59) return undefined;
  // Day 0 of the next month is this month's last day.
  if (day! < 1 || day! > new Date(Date.UTC(year!, month!, 0)).getUTCDate()) return undefined;
  let offsetMinutes = 0;
  if (zone !== 'Z' && zone !== 'z') {
    const digits = zone.slice(1).replace(':', '');
    const hours = Number(digits.slice(0, 2));
    const minutes = Number(digits.slice(2) || '0');
    if (hours > 23 || minutes > 59) return undefined;
    offsetMinutes = (zone.startsWith('-') ? -1 : 1) * (hours * 60 + minutes);
  }
  // Past milliseconds, digits are cut, not rounded: a carry would change the second shown.
  const millis = Number(fraction.slice(0, 3).padEnd(3, '0'));
  const at = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!, millis) - offsetMinutes * 60_000;
  const normal = new Date(at).toISOString();
  // An offset can carry an instant past the years allowed (2199-12-31T23:00-05:00).
  const normalYear = Number(normal.slice(0, 4));
  return normal.length === 24 && normalYear >= FIRST_YEAR && normalYear <= LAST_YEAR ? normal : undefined;
}
