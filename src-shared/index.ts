export * from './accounts.js';
export * from './constants.js';
export * from './errors.js';
export * from './ids.js';
export * from './repo-url.js';
export * from './sessions.js';
export * from './text.js';
export * from './changes.js';
