/**
 * Request headers and error bodies, for every app a test injects into: the public REST API (Bearer
 * API key), the operator API (Bearer admin token), the console.
 */
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, T0 } from './deps.ts';
import type { Harness } from './harness.ts';

/** Authorization header of an API key (or any Bearer token). */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Authorization header of the operator API. */
export const adminHeaders = bearer(ADMIN_TOKEN);

/** A request to the operator API: `url` under /admin/v1, JSON `payload` when given. */
export function admin(
  h: Pick<Harness, 'operator'>,
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  payload?: unknown,
) {
  return h.operator.inject({
    method,
    url: `/admin/v1${url}`,
    headers: adminHeaders,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

export interface ErrorBody {
  success: false;
  error: { code: string; message: string; param?: string };
  meta: { timestamp: string };
}

/**
 * An error answer's body without its meta.request_id, after checking that the id is there and is
 * the X-Request-Id header of the answer: compare the rest with errorBody().
 */
export function errorJson(res: { body: string; headers: Record<string, unknown> }): unknown {
  const body = JSON.parse(res.body) as { meta: { request_id?: string } };
  const id = res.headers['x-request-id'];
  assert.equal(typeof id, 'string', 'X-Request-Id header');
  assert.equal(body.meta.request_id, id, 'meta.request_id is the X-Request-Id header');
  delete body.meta.request_id;
  return body;
}

/** The `error` object of an error answer. */
export const errorOf = (res: { body: string }) => (JSON.parse(res.body) as ErrorBody).error;

/** The whole error body the service answers with `code` and `message` at `timestamp` (the harness start). */
export const errorBody = (code: string, message: string, timestamp = T0, param?: string): ErrorBody => ({
  success: false,
  error: { code, message, ...(param === undefined ? {} : { param }) },
  meta: { timestamp },
});

/** Path and query of an absolute link, for inject(). */
export const pathOf = (url: string): string => {
  const u = new URL(url);
  return u.pathname + u.search;
};
