/**
 * A file edit as a person reads it before allowing it: a unified diff of the whole change,
 * the old text (none for a new file) against the new one, with no lines left out.
 */
export function editDiff(path: string, oldText: string | null, newText: string): string {
  const lines = (text: string) => (text === '' ? [] : text.replace(/\n$/u, '').split('\n'));
  const before = oldText === null ? [] : lines(oldText);
  const after = lines(newText);
  // The common head and tail stay as context; what lies between is the change.
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head += 1;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail += 1;
  const body = [
    ...before.slice(0, head).map((l) => ` ${l}`),
    ...before.slice(head, before.length - tail).map((l) => `-${l}`),
    ...after.slice(head, after.length - tail).map((l) => `+${l}`),
    ...after.slice(after.length - tail).map((l) => ` ${l}`),
  ];
  return [
    `--- ${oldText === null ? '/dev/null' : `a/${path}`}`,
    `+++ b/${path}`,
    `@@ -${before.length === 0 ? 0 : 1},${before.length} +${after.length === 0 ? 0 : 1},${after.length} @@`,
    ...body,
  ].join('\n');
}
