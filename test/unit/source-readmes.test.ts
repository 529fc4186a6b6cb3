import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/** Each top-level source folder, and each room of src-main, says what it holds and may import. */
describe("the source folders' READMEs", () => {
  const rooms = readdirSync(join(ROOT, 'src-main'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name);

  it('every room of src-main has one, saying what it may import, and src-main/README.md links it', () => {
    const index = readFileSync(join(ROOT, 'src-main', 'README.md'), 'utf8');
    for (const room of rooms) {
      const readme = join(ROOT, 'src-main', room, 'README.md');
      expect(existsSync(readme), `src-main/${room}/README.md`).toBe(true);
      expect(readFileSync(readme, 'utf8'), room).toMatch(/may import/iu);
      expect(index, room).toContain(`](${room}/README.md)`);
    }
  });

  it('so does each top-level source folder', () => {
    for (const folder of ['src-main', 'src-shared', 'src-renderer']) {
      expect(readFileSync(join(ROOT, folder, 'README.md'), 'utf8'), folder).toMatch(/import/iu);
    }
  });
});
