import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { readOrMakeTemplate } from './db.ts';

/**
 * Gives `dataDir` the embedded database of a service that has started before: DATA_DIR/db becomes
 * the migrated, empty template of test/helpers/db.ts (the tarball PGlite's dumpDataDir wrote),
 * extracted as files. A `callcap serve` started on it opens the database instead of running initdb
 * and every migration (about 3 s of CPU per fresh start, more than the rest of the start); the
 * database is still empty, so the first start seeds the demo as on a new machine.
 *
 * For the process tests that are not about the very first start (`callcap listen`, …). The first
 * start itself keeps an empty DATA_DIR: test/seed/first-run.test.ts and the README walkthrough.
 */
export async function migratedDataDir(dataDir: string): Promise<void> {
  const root = join(dataDir, 'db');
  for (const entry of tarEntries(await readOrMakeTemplate())) {
    const path = join(root, entry.name);
    if (!path.startsWith(`${root}/`))
      throw new Error(`template entry outside the data directory: ${entry.name}`);
    if (entry.type === 'dir') {
      await mkdir(path, { recursive: true, mode: 0o700 });
    } else {
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      await writeFile(path, entry.bytes, { mode: 0o600 });
    }
  }
}

interface TarEntry {
  name: string;
  type: 'dir' | 'file';
  bytes: Uint8Array;
}

/**
 * The entries of a ustar archive (PGlite's dumpDataDir writes one with tinytar: directories and
 * regular files only, names relative to the data directory with a leading "/").
 */
function* tarEntries(tar: Uint8Array): Generator<TarEntry> {
  const text = (from: number, length: number) => {
    const field = tar.subarray(from, from + length);
    const end = field.indexOf(0);
    return Buffer.from(end < 0 ? field : field.subarray(0, end)).toString('utf8');
  };
  for (let at = 0; at + 512 <= tar.length; ) {
    const name = text(at, 100);
    if (name === '') return; // the two zero blocks that end the archive
    const prefix = text(at + 345, 131);
    const size = Number.parseInt(text(at + 124, 12).trim() || '0', 8);
    const flag = text(at + 156, 1);
    const body = at + 512;
    at = body + Math.ceil(size / 512) * 512;
    const full = (prefix ? `${prefix}/${name}` : name).replace(/^\/+/, '');
    if (full === '') continue; // the data directory itself
    if (flag === '5') yield { name: full, type: 'dir', bytes: new Uint8Array() };
    else if (flag === '0' || flag === '')
      yield { name: full, type: 'file', bytes: tar.subarray(body, body + size) };
    else throw new Error(`template entry ${full}: tar type ${flag} is not a file or a directory`);
  }
}
