/** How many single-letter edits turn `a` into `b` (Levenshtein distance). */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      );
    }
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The candidate a mistyped word most likely meant: the nearest within two edits (one for
 * words of three letters or fewer), or one it is a prefix of; null when none is that near.
 */
export function closest(word: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  const allowed = word.length <= 3 ? 1 : 2;
  if (best !== null && bestDistance <= allowed) return best;
  const prefixed = candidates.filter((c) => word.length >= 3 && c.startsWith(word));
  return prefixed.length === 1 ? (prefixed[0] as string) : null;
}
