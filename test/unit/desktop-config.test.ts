import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PORT } from '../../src-shared/constants.js';
import {
  DesktopConfigError,
  resolveDesktopConfig,
  resolveDesktopDataDir,
  resolveDevServerUrl,
  resolvePort,
  userDataDirFromArgv,
} from '../../src-main/desktop/config.js';
import { apiUrlArgument, apiUrlFromArgv } from '../../src-main/desktop/api-url-argument.js';

describe('desktop port', () => {
  it('is 4319 unless SESSIONDESK_PORT says otherwise', () => {
    expect(resolvePort(undefined)).toBe(DEFAULT_PORT);
    expect(resolvePort('')).toBe(DEFAULT_PORT);
    expect(resolvePort(' 5000 ')).toBe(5000);
    expect(resolvePort('0')).toBe(0);
  });

  it('refuses a value that is not a port, naming the variable', () => {
    for (const bad of ['abc', '-1', '65536', '12.5', '1e3', '0x10']) {
      expect(() => resolvePort(bad)).toThrow(DesktopConfigError);
      expect(() => resolvePort(bad)).toThrow(/SESSIONDESK_PORT/u);
    }
  });
});

describe('desktop data folder', () => {
  const userData = join('/home', 'ada', '.config', 'Session Desk');

  it("is Electron's userData folder by default", () => {
    expect(resolveDesktopDataDir({}, userData)).toBe(resolve(userData));
  });

  it('is SESSIONDESK_DATA_DIR when set, resolved like the CLI does', () => {
    expect(resolveDesktopDataDir({ SESSIONDESK_DATA_DIR: 'relative/data' }, userData)).toBe(
      resolve('relative/data'),
    );
    expect(resolveDesktopDataDir({ SESSIONDESK_DATA_DIR: '' }, userData)).toBe(resolve(userData));
  });

  it('takes --user-data-dir from the command line, for an isolated launch', () => {
    expect(userDataDirFromArgv(['electron', '.', '--user-data-dir=/tmp/profile'])).toBe(
      resolve('/tmp/profile'),
    );
    expect(userDataDirFromArgv(['electron', '.', '--user-data-dir='])).toBeNull();
    expect(userDataDirFromArgv(['electron', '.'])).toBeNull();
  });
});

describe('desktop dev server URL', () => {
  it('follows a loopback ELECTRON_RENDERER_URL only when not packaged', () => {
    expect(resolveDevServerUrl('http://localhost:5173/', false)).toBe('http://localhost:5173');
    expect(resolveDevServerUrl('http://127.0.0.1:5173', false)).toBe('http://127.0.0.1:5173');
    expect(resolveDevServerUrl('http://localhost:5173/', true)).toBeNull();
    expect(resolveDevServerUrl(undefined, false)).toBeNull();
  });

  it('refuses a dev server that is not plain HTTP on this machine', () => {
    for (const bad of [
      'https://localhost:5173',
      'http://example.com:5173',
      'file:///tmp/index.html',
      'nonsense',
    ]) {
      expect(() => resolveDevServerUrl(bad, false)).toThrow(DesktopConfigError);
    }
  });

  it('puts it all together', () => {
    expect(
      resolveDesktopConfig({
        env: { SESSIONDESK_PORT: '0', ELECTRON_RENDERER_URL: 'http://localhost:5173' },
        userDataDir: '/tmp/user-data',
        isPackaged: false,
      }),
    ).toEqual({ dataDir: resolve('/tmp/user-data'), port: 0, devServerUrl: 'http://localhost:5173' });
  });
});

describe('the API URL handed to the preload', () => {
  it('round-trips a loopback origin', () => {
    const arg = apiUrlArgument('http://127.0.0.1:4319/');
    expect(arg).toBe('--sessiondesk-api-url=http://127.0.0.1:4319');
    expect(apiUrlFromArgv(['electron', '--type=renderer', arg])).toBe('http://127.0.0.1:4319');
  });

  it('never carries anything but a loopback http origin', () => {
    expect(() => apiUrlArgument('https://example.com')).toThrow();
    expect(apiUrlFromArgv(['--sessiondesk-api-url=https://evil.example'])).toBeNull();
    expect(apiUrlFromArgv(['--sessiondesk-api-url=http://127.0.0.1:4319/path'])).toBeNull();
    expect(apiUrlFromArgv(['--type=renderer'])).toBeNull();
  });
});
