// The V8 flags the server and the long data commands run with, in one place: the launcher
// (bin/sessiondesk.js) and the benchmarks' server use them. The desktop app's main process runs
// without them: Electron takes --js-flags for its main process only on its own command line.
//
// --max-semi-space-size=16: V8 sizes the young generation by the machine's memory, 32 MiB a
// semi-space (about 100 MiB in all) on a machine of 16 GB or more. A history import, an export
// import or a server indexing makes short-lived garbage quickly, and the young generation grows
// to that size and stays: 16 MiB takes about 80 MiB off their peak RSS, at the same speed
// (bench/RESULTS.md, "Importing and following").
export const NODE_FLAGS = ['--max-semi-space-size=16'];

/** The commands that run with them: those that hold a server or read GBs. */
export const COMMANDS_WITH_NODE_FLAGS = ['serve', 'history', 'import'];
