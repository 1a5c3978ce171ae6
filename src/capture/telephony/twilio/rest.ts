import type { IncomingMessage } from 'node:http';
import type { Config } from '../../../config.ts';
import { pulledGet } from '../../../recordings/pulled-get.ts';
import { exchange } from '../../http-client.ts';

/**
 * A small Twilio REST client on fetch (docs/decisions.md "Twilio: own REST client and signature
 * check"): the official `twilio` package builds its URLs from fixed domains (api.twilio.com,
 * region and edge), so it cannot be pointed at TWILIO_API_BASE_URL without patching its
 * internals, and it buffers responses, while a recording must be streamed into storage.
 * Basic auth = account SID : auth token. The token is never logged or put in an error message.
 */
export interface TwilioCredentials {
  accountSid: string;
  authToken: string;
}

/** A REST answer other than the one expected: Twilio's status, error code and message. */
export class TwilioRestError extends Error {
  readonly status: number;
  readonly twilioCode: number | null;
  constructor(status: number, twilioCode: number | null, message: string) {
    super(message);
    this.name = 'TwilioRestError';
    this.status = status;
    this.twilioCode = twilioCode;
  }
}

/** Every REST request but a recording's download (headers and body): aborted after it. */
export const API_TIMEOUT_MS = 15_000;
/** A whole recording download; the stream is aborted after it. */
const DOWNLOAD_TIMEOUT_MS = 10 * 60_000;

const basic = (c: TwilioCredentials) =>
  `Basic ${Buffer.from(`${c.accountSid}:${c.authToken}`).toString('base64')}`;

function apiUrl(config: Pick<Config, 'TWILIO_API_BASE_URL'>, path: string): string {
  return new URL(path, config.TWILIO_API_BASE_URL).toString();
}

/** True when url is on the configured Twilio REST origin (scheme, host and port), the only place credentials go. */
export function onTwilioOrigin(config: Pick<Config, 'TWILIO_API_BASE_URL'>, url: string): boolean {
  try {
    const u = new URL(url);
    return u.origin === new URL(config.TWILIO_API_BASE_URL).origin && u.username === '' && u.password === '';
  } catch {
    return false;
  }
}

async function restError(res: Response): Promise<TwilioRestError> {
  return restErrorOf(res.status, await res.text().catch(() => ''));
}

function restErrorOf(status: number, text: string): TwilioRestError {
  let code: number | null = null;
  let message = `Twilio answered ${status}`;
  try {
    const body = JSON.parse(text) as { code?: unknown; message?: unknown };
    if (typeof body.code === 'number') code = body.code;
    if (typeof body.message === 'string')
      message = `Twilio answered ${status}: ${body.message.slice(0, 300)}`;
  } catch {
    // not JSON: the status says enough
  }
  return new TwilioRestError(status, code, message);
}

export interface CreateCallParams {
  to: string;
  from: string;
  /** the TwiML URL Twilio fetches when the call is answered */
  url: string;
  statusCallback?: string;
  statusCallbackEvent?: string[];
  /** seconds to let the phone ring */
  timeout?: number;
}

/** POST /2010-04-01/Accounts/{sid}/Calls.json: places a call; answers its CallSid and status. */
export async function createCall(
  config: Pick<Config, 'TWILIO_API_BASE_URL'>,
  cred: TwilioCredentials,
  p: CreateCallParams,
): Promise<{ sid: string; status: string }> {
  const form = new URLSearchParams({ To: p.to, From: p.from, Url: p.url, Method: 'POST' });
  if (p.statusCallback) {
    form.set('StatusCallback', p.statusCallback);
    form.set('StatusCallbackMethod', 'POST');
    for (const e of p.statusCallbackEvent ?? []) form.append('StatusCallbackEvent', e);
  }
  if (p.timeout !== undefined) form.set('Timeout', String(p.timeout));
  const res = await fetch(
    apiUrl(config, `/2010-04-01/Accounts/${encodeURIComponent(cred.accountSid)}/Calls.json`),
    {
      method: 'POST',
      headers: {
        authorization: basic(cred),
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
      signal: AbortSignal.timeout(API_TIMEOUT_MS),
    },
  );
  if (res.status !== 201 && res.status !== 200) throw await restError(res);
  const body = (await res.json()) as { sid?: unknown; status?: unknown };
  if (typeof body.sid !== 'string')
    throw new TwilioRestError(res.status, null, 'Twilio answered a call without a sid');
  return { sid: body.sid, status: typeof body.status === 'string' ? body.status : 'queued' };
}

/** A recording's MP3 as Twilio serves it: the body, streamed, and the length Twilio declared (if any). */
export interface RecordingMedia {
  /** chunks of at most CHUNK_BYTES, each valid until the next is asked for (src/recordings/pulled-get.ts) */
  body: AsyncIterable<Buffer>;
  /** closes the connection without reading the body */
  close(): void;
  /** Content-Length, when Twilio sent one: lets a caller refuse an oversize file before reading it */
  declaredBytes: number | null;
}

/**
 * The recording's MP3 (<RecordingUrl>.mp3) as a stream, never buffered. Refuses (throws) a URL that
 * is not on the configured origin before any request is made. `signal` aborts the request and the
 * body (a job runner stopping, a lost lease); an answer other than 200 throws a TwilioRestError
 * (404 included: Twilio may still be finalising the file, so the caller decides whether to retry).
 */
export async function fetchRecordingMp3(
  config: Pick<Config, 'TWILIO_API_BASE_URL'>,
  cred: TwilioCredentials,
  recordingUrl: string,
  opts: { signal?: AbortSignal } = {},
): Promise<RecordingMedia> {
  if (!onTwilioOrigin(config, recordingUrl)) {
    throw new TwilioRestError(0, null, 'recording URL is not on the configured Twilio origin; not fetched');
  }
  const url = new URL(recordingUrl);
  if (!url.pathname.endsWith('.mp3')) url.pathname += '.mp3';
  const timeout = AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS);
  // not fetch: its body arrives in a fresh buffer per socket read, garbage the GC collects late
  // (docs/decisions.md "Recording download: a GET into reused buffers"); a redirect is not followed
  const res = await pulledGet(url, {
    headers: { authorization: basic(cred), accept: 'audio/mpeg' },
    signal: opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout,
  });
  if (res.status !== 200) throw restErrorOf(res.status, await res.text(4096).catch(() => ''));
  const length = Number(res.headers.get('content-length') ?? Number.NaN);
  return {
    body: res.body,
    close: () => res.close(),
    declaredBytes: Number.isSafeInteger(length) && length >= 0 ? length : null,
  };
}

/**
 * DELETE /2010-04-01/Accounts/{sid}/Recordings/{rid}.json: deleted, or not_found (404: already gone).
 * On node:http (src/capture/http-client.ts: fetch's redirects and error shapes), not fetch: it runs
 * once per call whose carrier copy goes (redaction on, the default), and fetch's machinery cost the
 * main thread more than the request.
 */
export async function deleteTwilioRecording(
  config: Pick<Config, 'TWILIO_API_BASE_URL'>,
  cred: TwilioCredentials,
  recordingSid: string,
): Promise<'deleted' | 'not_found'> {
  const url = apiUrl(
    config,
    `/2010-04-01/Accounts/${encodeURIComponent(cred.accountSid)}/Recordings/${encodeURIComponent(recordingSid)}.json`,
  );
  const res = await exchange(
    new URL(url),
    'DELETE',
    { authorization: basic(cred) },
    null,
    AbortSignal.timeout(API_TIMEOUT_MS),
  );
  if (res.statusCode === 204 || res.statusCode === 200) {
    res.resume();
    return 'deleted';
  }
  if (res.statusCode === 404) {
    res.resume();
    return 'not_found';
  }
  throw restErrorOf(res.statusCode ?? 0, await textOf(res).catch(() => ''));
}

/** An error answer's body as text (the time-out of the request still applies). */
async function textOf(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}
