const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 24 * 60 * 60 * 1000],
  ['month', 30 * 24 * 60 * 60 * 1000],
  ['week', 7 * 24 * 60 * 60 * 1000],
  ['day', 24 * 60 * 60 * 1000],
  ['hour', 60 * 60 * 1000],
  ['minute', 60 * 1000],
];

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });

/** "just now", "5 minutes ago", "yesterday", "3 weeks ago". */
export function relativeTime(iso: string, now: Date): string {
  const diff = Date.parse(iso) - now.getTime();
  const abs = Math.abs(diff);
  if (abs < 45 * 1000) return 'just now';
  for (const [unit, ms] of UNITS) {
    if (abs >= ms || unit === 'minute') return relative.format(Math.round(diff / ms), unit);
  }
  return 'just now';
}

/** Full date and time, for tooltips. */
export function absoluteTime(iso: string): string {
  return new Date(iso).toLocaleString('en', { dateStyle: 'medium', timeStyle: 'short' });
}

/** Up to two initials: "Ada Lovelace" → "AL", "ada" → "A". */
export function initials(name: string): string {
  const words = name.trim().split(/\s+/u).filter(Boolean);
  const letters = words.length > 1 ? [words[0], words[words.length - 1]] : words;
  return letters
    .map((w) => Array.from(w ?? '')[0] ?? '')
    .join('')
    .toUpperCase();
}

/** A stable hue for a name, so an author's avatar keeps its colour. */
export function hueFor(text: string): number {
  let hash = 0;
  for (const char of text) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) % 360;
  return hash;
}

/** Whether text is long enough to fold, with the part shown while folded. */
export function fold(text: string, maxLines = 20, maxChars = 2000): { short: string; folded: boolean } {
  const lines = text.split('\n');
  if (lines.length <= maxLines && text.length <= maxChars) return { short: text, folded: false };
  const byLines = lines.slice(0, maxLines).join('\n');
  return { short: byLines.length > maxChars ? byLines.slice(0, maxChars) : byLines, folded: true };
}
