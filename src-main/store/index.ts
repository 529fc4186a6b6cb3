export type { ApiKeyRecord, AuthSessionRecord } from './credentials.js';
export type { MemberRecord, MembershipRecord, Role } from './workspaces.js';
export type { SessionRow } from './session-row.js';
export { createRepositories, type Repositories } from './repositories.js';
export { Store, DataDamagedError, StoreUnavailableError, type StoreOptions } from './store.js';
