/**
 * The house's layering, checked by `npm run lint` (dependency-cruiser): no import circles, and
 * every arrow points down. Each folder's README says what it may import; these rules are the
 * part of that a machine can check.
 */
const agents = '^src-main/agents/';
const agentsBase = `${agents}[^/]+\\.ts$`;

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Files that import each other, however far round: split out what both need.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'shared-imports-nothing-of-ours',
      severity: 'error',
      comment: 'src-shared is used by the server and the dashboard alike: it stands alone.',
      from: { path: '^src-shared/' },
      to: { path: '^src-(main|renderer)/' },
    },
    {
      name: 'renderer-never-reaches-into-main',
      severity: 'error',
      comment: 'The dashboard talks to the server over HTTP only.',
      from: { path: '^src-renderer/' },
      to: { path: '^src-main/' },
    },
    {
      name: 'main-never-reaches-into-renderer',
      severity: 'error',
      from: { path: '^src-main/' },
      to: { path: '^src-renderer/' },
    },
    {
      name: 'store-below-services',
      severity: 'error',
      comment: 'The store keeps records; it knows nothing of the server, the services or the agents.',
      from: { path: '^src-main/store/' },
      to: {
        path: '^src-main/(server|cli|electron|desktop|agents|history|sessions|search|accounts|identity|pull-requests|changes|demo|data)/',
      },
    },
    {
      name: 'store-postgres-below-services',
      severity: 'error',
      comment: 'The PostgreSQL store keeps records as store/ does: it knows nothing above the store.',
      from: { path: '^src-main/store-postgres/' },
      to: {
        path: '^src-main/(server|cli|electron|desktop|agents|history|sessions|search|accounts|identity|pull-requests|changes|demo|data|events)/',
      },
    },
    {
      name: 'store-postgres-takes-only-pure-store-modules',
      severity: 'error',
      comment:
        'Of store/, the PostgreSQL store uses types and the modules that touch no database (errors, the transcript format, a session row, unknown costs, column readers, an imported agent, agent fields): never the sql.js store, its journal or sql.js itself.',
      from: { path: '^src-main/store-postgres/' },
      to: {
        path: ['^src-main/store/', 'node_modules/sql\\.js/'],
        pathNot:
          '^src-main/store/(errors|transcript-format|session-row|cost-unknown|row|imported-agent|agent-fields)\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'only-the-shells-import-the-server',
      severity: 'error',
      comment: 'The server is started by the CLI and the desktop shell; nothing below calls up to it.',
      from: { path: '^src-main/', pathNot: '^src-main/(server|cli|electron|desktop)/' },
      to: { path: '^src-main/(server|cli|electron|desktop)/' },
    },
    {
      name: 'agents-base-below-its-rooms',
      severity: 'error',
      comment: "agents/'s own files (types, events, folders) are what every room uses: they use none.",
      from: { path: agentsBase },
      to: { path: `${agents}(sandbox|process|kinds|run)/` },
    },
    {
      name: 'sandbox-uses-only-the-base',
      severity: 'error',
      from: { path: `${agents}sandbox/` },
      to: { path: `${agents}(process|kinds|run)/` },
    },
    {
      name: 'process-below-kinds',
      severity: 'error',
      from: { path: `${agents}process/` },
      to: { path: `${agents}(kinds|run)/` },
    },
    {
      name: 'kinds-below-the-run-host',
      severity: 'error',
      from: { path: `${agents}kinds/` },
      to: { path: `${agents}run/` },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|out)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.mjs'] },
  },
};
