/**
 * The dashboard's single-key shortcuts that are not a page's own choices: the pages listen for
 * these keys, and the shortcuts help (`?`) lists them, so the two cannot disagree.
 */
export const HELP_KEY = '?';

/** The sessions list. */
export const SESSIONS_KEYS = { newSession: 'n', search: '/' } as const;

/** The Inbox: the next and the previous request. */
export const INBOX_MOVE_KEYS = { next: 'j', previous: 'k' } as const;
