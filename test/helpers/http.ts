/**
 * Request headers and error bodies, for every app a test injects into: the public REST API (Bearer
 * API key), the operator API (Bearer admin token), the console.
 */
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
  error: { code: string; message: string };
  meta: { timestamp: string };
}

/** The `error` object of an error answer. */
export const errorOf = (res: { body: string }) => (JSON.parse(res.body) as ErrorBody).error;

/** The whole error body the service answers with `code` and `message` at `timestamp` (the harness start). */
export const errorBody = (code: string, message: string, timestamp = T0): ErrorBody => ({
  success: false,
  error: { code, message },
  meta: { timestamp },
});

/** Path and query of an absolute link, for inject(). */
export const pathOf = (url: string): string => {
  const u = new URL(url);
  return u.pathname + u.search;
};
