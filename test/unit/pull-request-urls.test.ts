import { describe, expect, it } from 'vitest';
import { toState } from '../../src-main/pull-requests/gh.js';
import { defaultBody } from '../../src-main/pull-requests/service.js';
import {
  belongsToRepository,
  isGitHubRepository,
  pullRequestsIn,
} from '../../src-main/pull-requests/urls.js';

describe("a pull request's address and the session's repository", () => {
  const [github] = pullRequestsIn('Opened https://github.com/Acme/Web/pull/42.');
  const [gitlab] = pullRequestsIn('See https://gitlab.example.test/acme/web/-/merge_requests/7');

  it('matches host and owner/repo without regard to case', () => {
    expect(github).toEqual({
      number: 42,
      url: 'https://github.com/Acme/Web/pull/42',
      host: 'github.com',
      repository: 'Acme/Web',
    });
    expect(belongsToRepository(github!, 'https://github.com/acme/web')).toBe(true);
    expect(belongsToRepository(github!, 'https://GitHub.com/ACME/WEB.git')).toBe(true);
  });

  it('refuses another repository, a fork, another host, and a session without a repository', () => {
    expect(belongsToRepository(github!, 'https://github.com/acme/web-fork')).toBe(false);
    expect(belongsToRepository(github!, 'https://github.com/someone/web')).toBe(false);
    expect(belongsToRepository(github!, 'https://github.example.test/acme/web')).toBe(false);
    expect(belongsToRepository(github!, undefined)).toBe(false);
  });

  it("records a self-hosted forge's own merge requests, on its own host only", () => {
    expect(gitlab).toMatchObject({ number: 7, host: 'gitlab.example.test', repository: 'acme/web' });
    expect(belongsToRepository(gitlab!, 'https://gitlab.example.test/acme/web')).toBe(true);
    expect(belongsToRepository(gitlab!, 'https://github.com/acme/web')).toBe(false);
    expect(isGitHubRepository('https://gitlab.example.test/acme/web')).toBe(false);
    expect(isGitHubRepository('https://github.com/acme/web')).toBe(true);
  });
});

describe("gh's states as the specification's", () => {
  const pr = { number: 3, url: 'https://github.com/a/b/pull/3', mergedAt: null, closedAt: null };
  it('OPEN is open, or draft; CLOSED is closed; MERGED is merged with its time', () => {
    expect(toState({ ...pr, state: 'OPEN', isDraft: false }).status).toBe('open');
    expect(toState({ ...pr, state: 'OPEN', isDraft: true }).status).toBe('draft');
    expect(toState({ ...pr, state: 'CLOSED', isDraft: false, closedAt: '2026-01-02T03:04:05Z' })).toEqual({
      number: 3,
      url: pr.url,
      status: 'closed',
    });
    expect(
      toState({
        ...pr,
        state: 'MERGED',
        isDraft: false,
        mergedAt: '2026-01-02T03:04:05Z',
        closedAt: '2026-01-02T03:04:05Z',
      }),
    ).toEqual({ number: 3, url: pr.url, status: 'merged', mergedAt: '2026-01-02T03:04:05.000Z' });
  });
});

describe('the default description', () => {
  it('quotes the first prompt, lists the tasks, and stays within what gh takes', () => {
    const body = defaultBody(
      'Fix the login\nand the logout',
      [
        { id: '1', title: 'Fix login', status: 'completed' },
        { id: '2', title: 'Fix logout', status: 'pending' },
      ],
      'ses_x',
    );
    expect(body).toBe(
      '> Fix the login\n> and the logout\n\n- [x] Fix login\n- [ ] Fix logout\n\nOpened from Session Desk (session ses_x).',
    );
    expect(defaultBody('x'.repeat(100_000), [], 'ses_x').length).toBeLessThanOrEqual(30_000);
  });
});
