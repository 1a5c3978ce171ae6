/**
 * npm run lint:openapi — generates the OpenAPI document exactly as GET /api/v1/openapi.json serves
 * it, writes it to a temporary file and lints it with Redocly (rules in redocly.yaml). Exits with
 * Redocly's status. `--write <file>` also saves the document there: `npm run lint:openapi -- --write
 * docs/openapi.json` refreshes the committed copy.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { openApiDocumentText } from './openapi-document.ts';

const root = resolve(import.meta.dirname, '..');
const doc = openApiDocumentText();
const writeAt = process.argv.indexOf('--write');
if (writeAt >= 0 && process.argv[writeAt + 1]) writeFileSync(resolve(process.argv[writeAt + 1]), doc);

const dir = mkdtempSync(join(tmpdir(), 'callcap-openapi-'));
const file = join(dir, 'openapi.json');
writeFileSync(file, doc);
const bin = join(root, 'node_modules', '.bin');
const r = spawnSync(
  join(bin, 'redocly'),
  ['lint', '--format=stylish', '--config', join(root, 'redocly.yaml'), file],
  {
    stdio: 'inherit',
    cwd: root,
    // node_modules/.bin first: its `node` is the project's Node 24; no telemetry from a lint run.
    env: {
      ...process.env,
      PATH: `${bin}:${process.env.PATH}`,
      REDOCLY_TELEMETRY: 'off',
      REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true',
    },
  },
);
rmSync(dir, { recursive: true, force: true });
if (r.error) throw r.error;
process.exit(r.status ?? 1);
