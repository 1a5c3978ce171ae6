import type { Queryable } from '../../src/db/types.ts';
import type { Harness } from '../helpers/harness.ts';
import type { Json } from '../helpers/json.ts';
import { assertMatchesOpenApi } from '../helpers/openapi-check.ts';

/** Shared by the REST API tests: requests that are checked against the OpenAPI document on the way. */
export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

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

export const errorOf = (res: Res) => res.json().error as { code: string; message: string };

/** The rate-limit headers of an answer, as one object. */
export const rateHeaders = (res: Res) => ({
  limit: res.headers['x-ratelimit-limit'],
  remaining: res.headers['x-ratelimit-remaining'],
  reset: res.headers['x-ratelimit-reset'],
  retryAfter: res.headers['retry-after'],
});

export async function insertAnalysis(
  db: Queryable,
  a: {
    callId: string;
    orgId: string;
    analysis: Record<string, unknown>;
    followupEmail?: unknown;
    language?: string | null;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, language, analysis, followup_email, created_at, updated_at)
     VALUES ($1, $2, 'raw transcript, never exposed', $3, $4::jsonb, $5::jsonb, $6, $6)`,
    [
      a.callId,
      a.orgId,
      a.language === undefined ? 'en' : a.language,
      JSON.stringify(a.analysis),
      a.followupEmail === undefined || a.followupEmail === null ? null : JSON.stringify(a.followupEmail),
      new Date('2026-06-01T00:00:00Z'),
    ],
  );
}
