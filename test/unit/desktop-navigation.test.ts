import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY } from '../../src-main/server/security-headers.js';
import {
  parsePolicy,
  windowContentSecurityPolicy,
  withContentSecurityPolicy,
} from '../../src-main/desktop/csp.js';
import {
  externalLink,
  isPermissionGranted,
  isRequestAllowed,
  navigationDecision,
  windowOpenDecision,
} from '../../src-main/desktop/navigation.js';

const APP = 'http://127.0.0.1:4319';
const origins = [APP];

describe('navigation in the window', () => {
  it('stays on the app origin', () => {
    expect(navigationDecision(`${APP}/sessions/ses_1`, origins)).toBe('allow');
    expect(navigationDecision(`${APP}/api/openapi.json`, origins)).toBe('allow');
  });

  it('blocks every other origin, other ports and hosts for the same machine included', () => {
    for (const url of [
      'http://127.0.0.1:4320/',
      'http://localhost:4319/',
      'http://[::1]:4319/',
      'https://127.0.0.1:4319/',
      'https://github.com/acme/web/pull/42',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'data:text/html,<h1>hi</h1>',
      'about:blank',
      'not a url',
    ]) {
      expect(navigationDecision(url, origins), url).toBe('block');
    }
  });
});

describe('new windows and external links', () => {
  it('never opens a window; http(s) links go to the system browser', () => {
    expect(windowOpenDecision('https://github.com/acme/web/pull/42', origins)).toEqual({
      openExternally: 'https://github.com/acme/web/pull/42',
    });
    expect(windowOpenDecision('http://example.com/a b', origins)).toEqual({
      openExternally: 'http://example.com/a%20b',
    });
  });

  it('opens nothing for the app itself or for other schemes', () => {
    for (const url of [
      `${APP}/sessions`,
      'file:///etc/passwd',
      'javascript:alert(1)',
      'mailto:ada@example.test',
      'vscode://file/etc/passwd',
      'smb://server/share',
      'ms-settings:',
      'https://user:secret@example.com/',
      '',
    ]) {
      expect(windowOpenDecision(url, origins), url).toEqual({ openExternally: null });
    }
    expect(externalLink('https://user@example.com/')).toBeNull();
  });
});

describe('requests of the window session', () => {
  const allowed = (url: string, resourceType: Parameters<typeof isRequestAllowed>[0]['resourceType']) =>
    isRequestAllowed({ url, resourceType }, origins);

  it('lets the app, https avatars and in-page URLs through', () => {
    expect(allowed(`${APP}/`, 'mainFrame')).toBe(true);
    expect(allowed(`${APP}/api/sessions`, 'xhr')).toBe(true);
    expect(allowed('https://avatars.example.com/u/1.png', 'image')).toBe(true);
    expect(allowed('data:image/png;base64,AAAA', 'image')).toBe(true);
    expect(allowed('devtools://devtools/bundled/inspector.html', 'mainFrame')).toBe(true);
  });

  it('stops everything else before it leaves', () => {
    expect(allowed('http://127.0.0.1:4320/', 'mainFrame')).toBe(false);
    expect(allowed('http://localhost:4319/api/sessions', 'xhr')).toBe(false);
    expect(allowed('https://example.com/page', 'mainFrame')).toBe(false);
    expect(allowed('https://example.com/script.js', 'script')).toBe(false);
    expect(allowed('http://example.com/a.png', 'image')).toBe(false);
    expect(allowed('ws://127.0.0.1:4319/', 'webSocket')).toBe(true);
    expect(allowed('ws://127.0.0.1:9229/', 'webSocket')).toBe(false);
    expect(allowed('file:///etc/passwd', 'mainFrame')).toBe(false);
  });

  it("allows the dev server's hot-reload WebSocket when the dev server is the app origin", () => {
    const dev = ['http://localhost:5173'];
    expect(isRequestAllowed({ url: 'ws://localhost:5173/?token=x', resourceType: 'webSocket' }, dev)).toBe(
      true,
    );
    expect(isRequestAllowed({ url: 'http://localhost:5173/@vite/client', resourceType: 'script' }, dev)).toBe(
      true,
    );
  });
});

describe('permissions', () => {
  it('denies every request but two', () => {
    for (const permission of ['media', 'geolocation', 'clipboard-read', 'openExternal', 'fullscreen']) {
      expect(isPermissionGranted(permission, `${APP}/`, origins), permission).toBe(false);
    }
  });

  it("grants the dashboard's copy button only, and only on the app origin", () => {
    expect(isPermissionGranted('clipboard-sanitized-write', `${APP}/settings/keys`, origins)).toBe(true);
    expect(isPermissionGranted('clipboard-sanitized-write', 'https://example.com/', origins)).toBe(false);
    expect(isPermissionGranted('clipboard-sanitized-write', undefined, origins)).toBe(false);
  });

  it("grants notifications (the system's own, in the desktop app) to the app origin only", () => {
    expect(isPermissionGranted('notifications', `${APP}/settings/notifications`, origins)).toBe(true);
    expect(isPermissionGranted('notifications', 'https://example.com/', origins)).toBe(false);
    expect(isPermissionGranted('notifications', undefined, origins)).toBe(false);
  });
});

describe('the window CSP', () => {
  it("is the server's own policy, not a copy", () => {
    expect(windowContentSecurityPolicy()).toBe(CONTENT_SECURITY_POLICY);
    const policy = parsePolicy(windowContentSecurityPolicy());
    expect(policy.get('script-src')).toEqual(["'self'"]);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('base-uri')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('relaxes only what the Vite dev server needs, and only for it', () => {
    const policy = parsePolicy(windowContentSecurityPolicy('http://localhost:5173'));
    expect(policy.get('script-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(policy.get('style-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(policy.get('connect-src')).toEqual(["'self'", 'ws://localhost:5173']);
    expect(policy.get('object-src')).toEqual(["'none'"]);
    expect(policy.get('frame-ancestors')).toEqual(["'none'"]);
  });

  it('replaces any policy header of the response, whatever its case', () => {
    const headers = withContentSecurityPolicy(
      { 'content-security-policy': ['default-src *'], 'Content-Type': ['text/html'], 'x-one': 'single' },
      CONTENT_SECURITY_POLICY,
    );
    expect(headers).toEqual({
      'Content-Type': ['text/html'],
      'x-one': ['single'],
      'Content-Security-Policy': [CONTENT_SECURITY_POLICY],
    });
  });
});
