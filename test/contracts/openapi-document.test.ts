import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { openApiDocumentText } from '../../scripts/openapi-document.ts';

const REFRESH = 'run `npm run lint:openapi -- --write docs/openapi.json` and commit the result';

test('docs/openapi.json is byte for byte the generated document', async () => {
  const committed = await readFile(new URL('../../docs/openapi.json', import.meta.url), 'utf8');
  const generated = openApiDocumentText();
  // The structural comparison first: on a mismatch it shows which part of the document differs.
  assert.deepEqual(JSON.parse(committed), JSON.parse(generated), `docs/openapi.json is stale: ${REFRESH}`);
  assert.ok(committed === generated, `docs/openapi.json is formatted differently: ${REFRESH}`);
});
