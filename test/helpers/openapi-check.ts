import assert from 'node:assert/strict';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/http/public/api-v1/openapi/document.ts';
import type { Json } from './json.ts';

/**
 * Checks real responses against the generated OpenAPI document: the status must be documented for
 * the operation, the JSON body must validate against its schema, and every documented header must
 * be present when required and match its schema when present. Use it on every REST response.
 */
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

const DOC_ID = 'https://callcap.test/openapi.json';
const doc: Json = buildOpenApiDocument({ publicBaseUrl: 'https://calls.example.test' });
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ ...doc, $id: DOC_ID });

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replaceAll('~', '~0').replaceAll('/', '~1')).join('/');

function deref(obj: Json): Json {
  if (typeof obj.$ref !== 'string') return obj;
  let cur: Json = doc;
  for (const p of obj.$ref.replace(/^#\//, '').split('/'))
    cur = cur[p.replaceAll('~1', '/').replaceAll('~0', '~')];
  return cur;
}

/**
 * A header schema's validator, compiled once per schema object of the document. Ajv caches what it
 * compiled by schema object, and the copy compiled here is new each time: compiling it per response
 * cost about a millisecond per header (3–4 headers on most answers) and kept every copy in Ajv's cache.
 */
const headerValidators = new Map<Json, ValidateFunction>();
function headerValidator(schema: Json): ValidateFunction {
  let validate = headerValidators.get(schema);
  if (!validate) {
    validate = ajv.compile({ ...schema });
    headerValidators.set(schema, validate);
  }
  return validate;
}

export interface ResponseLike {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** The OpenAPI document the checks use (also handy for asserting on the document itself). */
export const openApiDocument = doc;

export function assertMatchesOpenApi(method: string, pathTemplate: string, res: ResponseLike): void {
  const op = doc.paths?.[pathTemplate]?.[method.toLowerCase()];
  assert.ok(op, `${method} ${pathTemplate} is not an operation of the OpenAPI document`);
  const where = `${method} ${pathTemplate} → ${res.statusCode}`;
  const raw = op.responses[String(res.statusCode)];
  assert.ok(raw, `${where}: status not documented (documented: ${Object.keys(op.responses).join(', ')})`);
  const response = deref(raw);
  const name = raw.$ref
    ? raw.$ref.replace('#/', '')
    : pointer('paths', pathTemplate, method.toLowerCase(), 'responses', String(res.statusCode));

  for (const [header, spec] of Object.entries<Json>(response.headers ?? {})) {
    const value = res.headers[header.toLowerCase()];
    if (value === undefined) {
      assert.ok(!spec.required, `${where}: required header ${header} is missing`);
      continue;
    }
    const text = String(value);
    const typed = spec.schema?.type === 'integer' && /^-?\d+$/.test(text) ? Number(text) : text;
    const validate = headerValidator(spec.schema);
    assert.ok(
      validate(typed),
      `${where}: header ${header}=${text} does not match ${JSON.stringify(spec.schema)}`,
    );
  }

  const content = response.content ?? {};
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  if (content['application/json']) {
    assert.equal(type, 'application/json', `${where}: content-type`);
    const validate = ajv.getSchema(`${DOC_ID}#/${name}/content/application~1json/schema`);
    assert.ok(validate, `${where}: no schema`);
    const body = JSON.parse(res.body);
    assert.ok(
      validate(body),
      `${where}: body does not match the document: ${ajv.errorsText(validate.errors)}\n${res.body.slice(0, 2000)}`,
    );
  } else {
    assert.ok(
      content[type],
      `${where}: content-type ${type} not documented (documented: ${Object.keys(content).join(', ')})`,
    );
  }
}

/** For answers that are not operations (unknown routes 404, 405): the spec's error shape. */
export function assertErrorShape(res: ResponseLike, status: number, code: string): Json {
  assert.equal(res.statusCode, status, res.body);
  const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/Error`)!;
  const body = JSON.parse(res.body);
  assert.ok(validate(body), `error shape: ${ajv.errorsText(validate.errors)}`);
  assert.equal(body.error.code, code);
  return body;
}

const templates = Object.keys(doc.paths ?? {}).map((t) => ({
  template: t,
  re: new RegExp(`^${t.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/**
 * Checks any answer under /api/v1 against the document: an operation's answer against that
 * operation, anything else (unknown route, other method, malformed URL) against the error shape.
 * The test harness runs it on every response its public app returns.
 */
export function checkApiResponse(method: string, url: string, res: ResponseLike): void {
  const base = '/api/v1';
  const path = url.split('?')[0];
  if (!path.startsWith(base)) return;
  const rest = path.slice(base.length).replace(/(.)\/+$/, '$1') || '/';
  // The document itself is not one of its operations.
  if (rest === '/openapi.json' && res.statusCode === 200) return;
  const m = method.toLowerCase();
  const decodable = (() => {
    try {
      decodeURIComponent(rest);
      return true;
    } catch {
      return false; // a malformed URL never reaches an operation
    }
  })();
  const hit = decodable && templates.find((t) => t.re.test(rest) && doc.paths[t.template][m]);
  if (hit && res.statusCode !== 405) {
    assertMatchesOpenApi(method, hit.template, res);
    return;
  }
  if (m === 'head') return;
  const body = JSON.parse(res.body);
  const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/Error`)!;
  assert.ok(
    validate(body),
    `${method} ${path} → ${res.statusCode}: error shape: ${ajv.errorsText(validate.errors)}`,
  );
}

/**
 * The validators of the document's `webhooks` catalogue, compiled once when this module loads (not
 * during the first delivery, which a receiver must answer within the worker's time-out).
 */
const webhookValidators = new Map(
  Object.entries<Json>(doc.webhooks ?? {}).map(([name, item]) => {
    const op = item.post;
    const body = ajv.getSchema(
      `${DOC_ID}#/${pointer('webhooks', name, 'post', 'requestBody', 'content', 'application/json', 'schema')}`,
    );
    if (!body) throw new Error(`webhooks.${name}: no request body schema`);
    const headers = ((op.parameters ?? []) as Json[]).map((p) => ({
      name: String(p.name),
      required: p.required === true,
      schema: p.schema,
      validate: ajv.compile(p.schema),
    }));
    return [name, { body, headers }];
  }),
);

/**
 * Checks one request the service sent to a webhook receiver against the document's `webhooks`
 * catalogue: a signed event against its event type's entry (body schema, the service-* headers,
 * content-type), an unsigned request against the verification handshake. Returns the problems
 * found (empty when the delivery is valid). test/helpers/receiver.ts runs it on every request.
 */
export function webhookDeliveryProblems(req: {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}): string[] {
  const problems: string[] = [];
  if (req.method !== 'POST') return [`method ${req.method}: the service only POSTs`];
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  if (type !== 'application/json')
    problems.push(`content-type ${JSON.stringify(type)}, not application/json`);
  let body: unknown;
  try {
    body = JSON.parse(req.body);
  } catch {
    return [...problems, `the body is not JSON: ${req.body.slice(0, 200)}`];
  }
  const signed = req.headers['service-signature'] !== undefined;
  const name = signed
    ? String((body as { event_type?: unknown })?.event_type)
    : 'webhook.subscription.verify';
  const where = `${signed ? 'event' : 'unsigned request (handshake)'} ${name}`;
  const validators = webhookValidators.get(name);
  if (!validators) return [...problems, `${where}: not in the webhooks catalogue`];
  if (!validators.body(body)) {
    problems.push(`${where}: body does not match the catalogue: ${ajv.errorsText(validators.body.errors)}`);
  }
  for (const h of validators.headers) {
    const value = req.headers[h.name.toLowerCase()];
    if (value === undefined) {
      if (h.required) problems.push(`${where}: required header ${h.name} is missing`);
    } else if (!h.validate(String(value))) {
      problems.push(`${where}: header ${h.name}=${String(value)} does not match ${JSON.stringify(h.schema)}`);
    }
  }
  return problems;
}
