/** Requests to the public REST API that are checked against the OpenAPI document on the way. */
import type { Harness } from './harness.ts';
import { bearer } from './http.ts';
import type { Json } from './json.ts';
import { assertMatchesOpenApi } from './openapi-check.ts';

export interface Res {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json(): Json;
}

/** GET url (under /api/v1) with the key; the answer must match the operation `template` of the document. */
export async function call(
  h: Harness,
  template: string,
  path: string,
  key: string | null,
  opts: { headers?: Record<string, string>; remoteAddress?: string } = {},
): Promise<Res> {
  const res = await h.app.inject({
    method: 'GET',
    url: `/api/v1${path}`,
    headers: { ...(key === null ? {} : bearer(key)), ...opts.headers },
    remoteAddress: opts.remoteAddress,
  });
  assertMatchesOpenApi('GET', template, res);
  return res;
}

/** The rate-limit headers of an answer, as one object. */
export const rateHeaders = (res: Res) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
  reset: res.headers['x-ratelimit-reset'],
  retryAfter: res.headers['retry-after'],
});
