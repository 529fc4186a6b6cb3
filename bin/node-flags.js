// The V8 flags and the memory allocator's setting the server and the long data commands run
// with, in one place: the launcher (bin/sessiondesk.js) and the benchmarks' server use them. The
// desktop app's main process runs without them: Electron takes --js-flags for its main process
// only on its own command line, and the allocator reads its setting when the process starts.
//
// --max-semi-space-size: V8 sizes the young generation by the machine's memory, 32 MiB a
// semi-space (about 100 MiB in all) on a machine of 16 GB or more. A history import, an export
// import or a server indexing makes short-lived garbage quickly, and the young generation grows
// to that size and stays. 16 MiB takes about 80 MiB off the peak RSS of each, at the same speed;
// 8 MiB takes about 15 MiB more off a server importing history but adds about 20 MiB to the
// import commands (more of their garbage lives long enough to reach the old generation), so
// each gets its own (bench/RESULTS.md, "Importing and following").
//
// --max-old-space-size=1024 (the server, and `history`): V8 lets the old generation grow up to
// four times what survived the last full collection when its limit is large (by default a
// quarter of the machine's memory), and only 1.3 to 2 times under a smaller limit. The server's
// live heap is tens of MB, so a limit of 1 GB leaves it ample room, and its peak importing 3 GB
// of history fell from 367-374 MB to 290 MB for 5 to 10% more import time (bench/RESULTS.md,
// "The heap's growing factor"). A fixed factor (--heap-growing-percent) gained nothing at 3 GB.
// `history import` has needed it since a long line is decoded a read at a time (each read's
// text is garbage in the old generation once the line is whole): 367 MB at 3 GB without it,
// 224 MB with it (bench/RESULTS.md, "A long line a read at a time").
const FLAGS_BY_COMMAND = {
  serve: ['--max-semi-space-size=8', '--max-old-space-size=1024'],
  history: ['--max-semi-space-size=16', '--max-old-space-size=1024'],
  import: ['--max-semi-space-size=16'],
};

/** The flags a command runs with: none for the short ones. */
export function nodeFlagsFor(command) {
  return Object.hasOwn(FLAGS_BY_COMMAND, command) ? FLAGS_BY_COMMAND[command] : [];
}

/** The server's, which the benchmarks' server runs with too. */
export const NODE_FLAGS = nodeFlagsFor('serve');

// MALLOC_MMAP_THRESHOLD_: glibc's malloc serves a block of 128 KiB or more from a mapping of its
// own, returned to the system when the block is freed, but raises that threshold (up to 32 MiB)
// each time such a block is freed. An import frees MBs of lines and buffers all along, so soon
// every block comes from the heap, which keeps what it once held. Setting the threshold fixes it
// at 128 KiB: 25 to 35 MB less peak RSS importing history, the command and the server alike, for
// about 15% more time in a server's first import of 3 GB (bench/RESULTS.md). Other C libraries
// ignore the variable; one set already is kept.
const ALLOCATOR_ENV = { MALLOC_MMAP_THRESHOLD_: '131072' };

/** The environment a command runs with: `env` and, for those with flags, the allocator's setting. */
export function nodeEnvFor(command, env) {
  return nodeFlagsFor(command).length > 0 ? { ...ALLOCATOR_ENV, ...env } : env;
}
