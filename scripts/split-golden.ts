/**
 * Writes test/fixtures/split-golden.json: the audio thread's answers (test/helpers/split-digest.ts)
 * as the code of <commit> gives them, extracted (git archive) into .tmp/ and run from there.
 *
 *   ./node_modules/.bin/node scripts/split-golden.ts <commit>
 *
 * Only for a deliberate change of the outputs (a new model, another conversion): the test exists
 * so that CPU work on the audio thread changes none of them.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { detectorDigests, pairDigests, splitDigests } from '../test/helpers/split-digest.ts';

const commit = process.argv[2];
if (!commit) throw new Error('usage: scripts/split-golden.ts <commit>');
const root = new URL('..', import.meta.url).pathname;
const dir = join(root, '.tmp', `split-golden-${process.pid}`);
mkdirSync(dir, { recursive: true });
try {
  execFileSync('sh', ['-c', `git archive "$0" src package.json | tar -x -C "$1"`, commit, dir], {
    cwd: root,
  });
  const src = pathToFileURL(join(dir, 'src/')).href;
  const golden = {
    splits: await splitDigests(src),
    detector: await detectorDigests(src),
    pairs: await pairDigests(src),
  };
  writeFileSync(join(root, 'test/fixtures/split-golden.json'), `${JSON.stringify(golden, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
