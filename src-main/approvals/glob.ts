/**
 * The glob of approval rules' patterns, matched in time proportional to the text's length times
 * the pattern's (a set of states stepped through once, never backtracking: a pattern an owner
 * wrote cannot be made slow by what an agent sends).
 *
 * - `paths` (paths and URLs): `*` is any run of characters but `/`, `?` one character but `/`,
 *   `**` any run of characters. A `**` that is a whole folder name is zero or more whole folders
 *   (so `**` then `/x` matches `x` too), and a trailing `/` then `**` matches the folder itself
 *   as well as what is in it.
 * - `command` (a command line): `*` and `**` are any run of characters, `?` any one character.
 *
 * In both, `\` makes the next character plain, and every other character is itself, case counted.
 */
export type GlobMode = 'paths' | 'command';

interface State {
  /** States entered without reading a character. */
  eps: number[];
  /** The state entered on reading a character this accepts. */
  on?: { test: (ch: string) => boolean; to: number };
  /** Whether the state stays on reading this character. */
  loop?: (ch: string) => boolean;
}

export interface Glob {
  test(text: string): boolean;
}

const anything = () => true;
const notSlash = (ch: string) => ch !== '/';
const is = (c: string) => (ch: string) => ch === c;

export function compileGlob(pattern: string, mode: GlobMode): Glob {
  const chars = [...pattern];
  const states: State[] = [];
  const add = (state: State) => states.push(state) - 1;
  /** Each piece's state leads to the next one made; the last leads to acceptance. */
  const next = () => states.length + 1;
  const one = mode === 'paths' ? notSlash : anything;
  for (let i = 0; i < chars.length; i += 1) {
    const ch = chars[i] as string;
    if (ch === '\\' && i + 1 < chars.length) {
      i += 1;
      add({ eps: [], on: { test: is(chars[i] as string), to: next() } });
    } else if (ch === '*') {
      let stars = 1;
      while (chars[i + 1] === '*') {
        stars += 1;
        i += 1;
      }
      const deep = stars > 1 || mode === 'command';
      const atFolderStart = i - stars < 0 || chars[i - stars] === '/';
      if (mode === 'paths' && stars > 1 && atFolderStart && chars[i + 1] === '/') {
        // `**/`: no folder at all, or any run ending in `/`.
        i += 1;
        const entry = states.length;
        const loop = entry + 1;
        add({ eps: [loop, entry + 2] });
        add({ eps: [], loop: anything, on: { test: is('/'), to: entry + 2 } });
      } else {
        add({ eps: [next()], loop: deep ? anything : notSlash });
      }
    } else if (
      mode === 'paths' &&
      ch === '/' &&
      chars[i + 1] === '*' &&
      chars[i + 2] === '*' &&
      i + 3 === chars.length
    ) {
      // A trailing `/**`: the folder itself, or anything in it.
      const entry = states.length;
      const end = entry + 3;
      add({ eps: [entry + 1, end] });
      add({ eps: [], on: { test: is('/'), to: entry + 2 } });
      add({ eps: [end], loop: anything });
      i += 2;
    } else if (ch === '?') {
      add({ eps: [], on: { test: one, to: next() } });
    } else {
      add({ eps: [], on: { test: is(ch), to: next() } });
    }
  }
  const accept = states.length;

  function closure(active: Set<number>): Set<number> {
    const todo = [...active];
    while (todo.length > 0) {
      const at = todo.pop() as number;
      for (const to of states[at]?.eps ?? []) {
        if (!active.has(to)) {
          active.add(to);
          todo.push(to);
        }
      }
    }
    return active;
  }

  return {
    test(text: string): boolean {
      let active = closure(new Set([0]));
      for (const ch of text) {
        const after = new Set<number>();
        for (const at of active) {
          const state = states[at];
          if (!state) continue;
          if (state.loop?.(ch)) after.add(at);
          if (state.on?.test(ch)) after.add(state.on.to);
        }
        if (after.size === 0) return false;
        active = closure(after);
      }
      return active.has(accept);
    },
  };
}
