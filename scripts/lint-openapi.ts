/**
 * npm run lint:openapi — generates the OpenAPI document exactly as GET /api/v1/openapi.json serves
 * it, writes it to a temporary file and lints it with Redocly (rules in redocly.yaml). Exits with
 * Redocly's status. `--write <file>` also saves the document there (docs/openapi.json is made so).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildOpenApiDocument } from '../src/http/public/api-v1/openapi/document.ts';

/** The documented example origin, so the linted and the committed document do not depend on the environment. */
const EXAMPLE_BASE_URL = 'https://calls.example.com';

const root = resolve(import.meta.dirname, '..');
const doc = JSON.stringify(buildOpenApiDocument({ publicBaseUrl: EXAMPLE_BASE_URL }), null, 2) + '\n';
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
