import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Configuration } from 'electron-builder';
import { describe, expect, it } from 'vitest';
import { APP_NAME } from '../../src-main/paths.js';
import { requireTools } from '../helpers/require-tools.js';
import { builtAppTool } from '../helpers/tools.js';

/**
 * electron-builder.yml, read and checked by electron-builder's own code (app-builder-lib is
 * its core; `npm run dist` cannot run on this network, it downloads Electron). The file
 * matchers are internal to app-builder-lib, so their shapes are declared here.
 */
const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const require = createRequire(import.meta.url);

interface FilterStats {
  isDirectory(): boolean;
  moduleFullFilePath?: string;
}
type Filter = (file: string, stat: FilterStats) => boolean;
interface FileMatcher {
  patterns: string[];
  createFilter(): Filter;
}
interface PackagerInfo {
  projectDir: string;
  buildResourcesDir: string;
  isPrepackedAppAsar: boolean;
  config: Configuration;
  debugLogger: unknown;
}

const { getConfig, validateConfiguration } = require('app-builder-lib/out/util/config/config.js') as {
  getConfig(projectDir: string, configPath: string, fromOptions: null): Promise<Configuration>;
  validateConfiguration(config: Configuration, debugLogger: unknown): Promise<void>;
};
const { getMainFileMatchers, getNodeModuleFileMatcher } = require('app-builder-lib/out/fileMatcher.js') as {
  getMainFileMatchers(
    appDir: string,
    destination: string,
    macroExpander: (pattern: string) => string,
    platformOptions: object,
    platformPackager: { info: PackagerInfo },
    outDir: string,
    isElectronCompile: boolean,
  ): FileMatcher[];
  getNodeModuleFileMatcher(
    appDir: string,
    destination: string,
    macroExpander: (pattern: string) => string,
    platformOptions: object,
    info: PackagerInfo,
  ): FileMatcher;
};
const { DebugLogger } = require('builder-util') as { DebugLogger: new (enabled: boolean) => object };

const packageJson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  productName: string;
  main: string;
  scripts: Record<string, string>;
  dependencies: Record<string, string>;
  homepage?: string;
  author?: { email?: string };
};

async function loadConfig() {
  const config = await getConfig(ROOT, 'electron-builder.yml', null);
  const info: PackagerInfo = {
    projectDir: ROOT,
    buildResourcesDir: config.directories?.buildResources ?? 'build',
    isPrepackedAppAsar: false,
    config,
    debugLogger: new DebugLogger(false),
  };
  const identity = (pattern: string) => pattern;
  const outDir = join(ROOT, config.directories?.output ?? 'dist');
  const appFiles = (platform: object) => {
    const [matcher] = getMainFileMatchers(ROOT, '/app', identity, platform, { info }, outDir, false);
    const filter = matcher!.createFilter();
    return (path: string) => filter(join(ROOT, path), { isDirectory: () => false });
  };
  const moduleFiles = (platform: object) => {
    const filter = getNodeModuleFileMatcher(ROOT, '/app', identity, platform, info).createFilter();
    // electron-builder matches a dependency's files by their path inside the app.
    return (path: string) => filter(join(ROOT, path), { isDirectory: () => false, moduleFullFilePath: path });
  };
  return { config, appFiles, moduleFiles };
}

function targets(platform: { target?: unknown } | null | undefined): string[] {
  const list = Array.isArray(platform?.target) ? platform.target : [platform?.target];
  return list.map((t: unknown) => (typeof t === 'string' ? t : (t as { target: string }).target));
}

const PLATFORMS = ['linux', 'mac', 'win'] as const;

describe('electron-builder.yml', () => {
  it("is valid by electron-builder's own schema", async () => {
    const { config } = await loadConfig();
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
  });

  it('builds AppImage and deb for Linux, dmg for macOS, nsis for Windows', async () => {
    const { config } = await loadConfig();
    expect(targets(config.linux)).toEqual(['AppImage', 'deb']);
    expect(targets(config.mac)).toEqual(['dmg']);
    expect(targets(config.win)).toEqual(['nsis']);
    expect(config.productName).toBe(APP_NAME);
    expect(packageJson.productName).toBe(APP_NAME);
  });

  it('`npm run dist` builds the bundles, then the installers with this file', () => {
    expect(packageJson.scripts.dist).toMatch(
      /^electron-vite build && electron-builder --config electron-builder\.yml( |$)/u,
    );
  });

  it('packs the app into an asar archive and sets the fuses', async () => {
    const { config } = await loadConfig();
    expect(config.asar).toBe(true);
    expect(config.asarUnpack).toBeUndefined();
    expect(config.electronFuses).toEqual({
      runAsNode: false,
      enableNodeOptionsEnvironmentVariable: false,
      enableNodeCliInspectArguments: false,
      enableEmbeddedAsarIntegrityValidation: true,
      onlyLoadAppFromAsar: true,
      enableCookieEncryption: true,
      grantFileProtocolExtraPrivileges: false,
    });
  });

  it("ships the built bundles, package.json and the demo's sample project, not the sources", async () => {
    const { config, appFiles } = await loadConfig();
    expect(JSON.stringify(config.files)).toContain('"out/**"');
    for (const platform of PLATFORMS) {
      const included = appFiles(config[platform] ?? {});
      expect(included(packageJson.main.replace(/^\.\//u, '')), 'main').toBe(true);
      expect(included('out/preload/preload.cjs'), 'preload').toBe(true);
      expect(included('out/renderer/index.html'), 'html').toBe(true);
      expect(included('out/renderer/assets/index-abc123.js'), 'asset').toBe(true);
      expect(included('package.json'), 'package.json').toBe(true);
      // The demo agent's sample project, which it reads at run time (from inside app.asar).
      for (const file of [
        'README.md',
        'package.json',
        'src/config.js',
        'src/upload.js',
        'test/upload.test.js',
      ]) {
        const path = `src-main/agents/kinds/demo/sample-project/${file}`;
        expect(existsSync(join(ROOT, path)), path).toBe(true);
        expect(included(path), path).toBe(true);
      }
      for (const left of [
        'out/main/main.js.map',
        'src-main/electron/main.ts',
        'src-main/agents/kinds/demo/sample-project.ts',
        'test/unit/x.test.ts',
        'electron-builder.yml',
        'README.md',
      ]) {
        expect(included(left), left).toBe(false);
      }
    }
  });

  it("includes sql.js's wasm next to the sql.js the main process loads", async () => {
    // At run time the main process imports "sql.js", which resolves to dist/sql-wasm.js; that
    // reads dist/sql-wasm.wasm from its own folder, inside app.asar (Electron's fs reads it).
    const loaded = require.resolve('sql.js');
    expect(loaded).toBe(join(ROOT, 'node_modules', 'sql.js', 'dist', 'sql-wasm.js'));
    expect(existsSync(join(dirname(loaded), 'sql-wasm.wasm'))).toBe(true);

    const { config, moduleFiles } = await loadConfig();
    for (const platform of PLATFORMS) {
      const included = moduleFiles(config[platform] ?? {});
      expect(included('node_modules/sql.js/package.json')).toBe(true);
      expect(included('node_modules/sql.js/dist/sql-wasm.js')).toBe(true);
      expect(included('node_modules/sql.js/dist/sql-wasm.wasm')).toBe(true);
      for (const left of [
        'sqljs-all.zip',
        'sql-wasm-browser.wasm',
        'sql-asm.js',
        'sql-wasm-debug.wasm',
        'worker.sql-wasm.js',
      ]) {
        expect(included(`node_modules/sql.js/dist/${left}`), left).toBe(false);
      }
    }
  });

  it('keeps every other production dependency (only the CLI runner is left out)', async () => {
    const { config, moduleFiles } = await loadConfig();
    const included = moduleFiles(config.linux ?? {});
    for (const dependency of Object.keys(packageJson.dependencies)) {
      const expected = dependency !== 'tsx';
      expect(included(`node_modules/${dependency}/package.json`), dependency).toBe(expected);
    }
  });

  const mainBundle = join(ROOT, 'out', 'main', 'main.js');
  it('ships every package the built main process imports', requireTools(builtAppTool()), async () => {
    const { config, moduleFiles } = await loadConfig();
    const included = moduleFiles(config.linux ?? {});
    const source = readFileSync(mainBundle, 'utf8');
    const specifiers = [...source.matchAll(/^import\s[^'"]*?from\s*["']([^"']+)["'];?$/gmu)].map(
      (m) => m[1]!,
    );
    const packages = new Set(
      specifiers
        .filter((s) => !s.startsWith('.') && !s.startsWith('node:') && s !== 'electron')
        .map((s) => (s.startsWith('@') ? s.split('/').slice(0, 2).join('/') : s.split('/')[0]!)),
    );
    expect(packages.size).toBeGreaterThan(0);
    for (const name of packages) {
      expect(Object.keys(packageJson.dependencies), name).toContain(name);
      expect(included(`node_modules/${name}/package.json`), name).toBe(true);
    }
  });

  it('gives deb the homepage and maintainer e-mail it requires', async () => {
    const { config } = await loadConfig();
    const extra = (config.extraMetadata ?? {}) as { homepage?: string; author?: { email?: string } };
    expect(extra.homepage ?? packageJson.homepage).toMatch(/^https:\/\//u);
    expect(config.linux?.maintainer ?? extra.author?.email ?? packageJson.author?.email).toMatch(/@/u);
  });
});
