import { AGENT_KINDS, SESSION_STATUSES } from '../../../../src-shared/constants';
import { SESSION_SOURCES } from '../../../../src-shared/sessions';
import type { SessionFilters } from '../../api/queries';

/** What the list shows, as it is kept in the address: filters, search and page. */
export interface ListView {
  filters: SessionFilters;
  cursor: string | undefined;
  /** The search looks in every message of the transcripts (`in=transcripts`), not only titles. */
  transcripts?: boolean | undefined;
}

/** Names in the address; `author` reads better in a shared link than `authorId`. */
const PARAM: Record<keyof SessionFilters, string> = {
  status: 'status',
  authorId: 'author',
  repository: 'repository',
  q: 'q',
  agent: 'agent',
  source: 'source',
};

export function readListView(params: URLSearchParams): ListView {
  const get = (name: string) => params.get(name)?.trim() || undefined;
  const status = get(PARAM.status);
  const agent = get(PARAM.agent);
  const source = get(PARAM.source);
  return {
    filters: {
      status: SESSION_STATUSES.find((s) => s === status),
      authorId: get(PARAM.authorId),
      repository: get(PARAM.repository),
      q: get(PARAM.q),
      agent: AGENT_KINDS.find((kind) => kind === agent),
      source: SESSION_SOURCES.find((s) => s === source),
    },
    cursor: get('cursor'),
    ...(get('in') === 'transcripts' ? { transcripts: true } : {}),
  };
}

export function writeListView(view: ListView): URLSearchParams {
  const params = new URLSearchParams();
  for (const [key, name] of Object.entries(PARAM) as [keyof SessionFilters, string][]) {
    const value = view.filters[key];
    if (value) params.set(name, value);
  }
  if (view.cursor) params.set('cursor', view.cursor);
  if (view.transcripts) params.set('in', 'transcripts');
  return params;
}
