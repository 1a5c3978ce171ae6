import { createHmac, timingSafeEqual } from 'node:crypto';
import { DAY, MINUTE } from '../clock.ts';
import type { Deps } from '../deps.ts';

/**
 * Signed recording links (DESIGN.md "Security defaults"): token = base64url(HMAC-SHA256(link
 * signing key, "<call_id>.<exp>")), exp in unix seconds. The link is the only authority for the
 * download; permission is re-checked against the call at fetch time (download.ts).
 */

/** Validity of a link minted by GET /calls/{id}/recording-url (spec "Limits"). */
export const REST_LINK_TTL_MS = 15 * MINUTE;
/** Validity of the link inside call.recording.ready and call.completed (spec "Limits"). */
export const EVENT_LINK_TTL_MS = 7 * DAY;

/** base64url of a 32-byte digest, without padding. */
const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;
/** Unix seconds without leading zeros (one spelling per link); 12 digits reach far beyond any lifetime. */
const EXP_RE = /^[1-9][0-9]{0,11}$/;

type LinkDeps = Pick<Deps, 'keys' | 'clock' | 'config'>;

export function signLink(key: Buffer, callId: string, exp: number): string {
  return createHmac('sha256', key).update(`${callId}.${exp}`).digest('base64url');
}

/** Path of the download under the public origin; the REST {base_url} is origin + /api/v1. */
export const recordingPath = (callId: string) => `/api/v1/calls/${callId}/recording.mp3`;

/** A fresh link valid for ttlMs from now (rounded down to whole seconds, so never longer). */
export function mintRecordingLink(
  deps: LinkDeps,
  callId: string,
  ttlMs: number,
): { url: string; expires_at: string } {
  const exp = Math.floor((deps.clock.now().getTime() + ttlMs) / 1000);
  const token = signLink(deps.keys.linkSigningKey, callId, exp);
  const url = `${deps.config.publicBaseUrl}${recordingPath(callId)}?token=${token}&exp=${exp}`;
  return { url, expires_at: new Date(exp * 1000).toISOString() };
}

export type LinkCheck =
  | { ok: true }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'expired'; expiredAt: Date };

/**
 * Checks a presented token in constant time, then its expiry. The signature is checked first, so
 * "expired" is only ever said about a link the service really issued. Wrong shapes and lengths are
 * rejected without reaching timingSafeEqual (which throws on unequal lengths). The token is compared
 * as its canonical base64url text, so two spellings that decode to the same bytes are not both valid.
 */
export function checkRecordingLink(
  deps: Pick<Deps, 'keys' | 'clock'>,
  callId: string,
  token: unknown,
  exp: unknown,
): LinkCheck {
  if (typeof token !== 'string' || typeof exp !== 'string') return { ok: false, reason: 'invalid' };
  if (!TOKEN_RE.test(token) || !EXP_RE.test(exp)) return { ok: false, reason: 'invalid' };
  const expected = Buffer.from(signLink(deps.keys.linkSigningKey, callId, Number(exp)), 'utf8');
  const given = Buffer.from(token, 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    return { ok: false, reason: 'invalid' };
  const expiresMs = Number(exp) * 1000;
  if (deps.clock.now().getTime() >= expiresMs)
    return { ok: false, reason: 'expired', expiredAt: new Date(expiresMs) };
  return { ok: true };
}
