/**
 * The outbound HTTP client of webhook deliveries (node:http / node:https).
 *
 * - SSRF guard at connect time: every address a host name resolves to goes through isBlockedAddress
 *   (a custom `lookup` on the agents), so DNS that re-points at 127.0.0.1 is refused too; literal-IP
 *   hosts never reach a lookup, so validateReceiverUrl checks them before the request.
 * - Keep-alive agents: connections to a receiver are reused across deliveries.
 * - Redirects are never followed: a 3xx is just a status (transient for the delivery rules).
 * - One time-out covers the whole attempt: connect, request, response headers and the bounded body.
 * - The response body is read up to MAX_RESPONSE_BYTES and only its first SNIPPET_BYTES are kept; past
 *   the cap the socket is destroyed, so a receiver streaming gigabytes costs us 64 KiB.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import { blockedTargetMessage, firstBlockedAddress, normaliseHost, validateReceiverUrl } from './ssrf.ts';

/** Whole-attempt time-out. 10 s: generous for a receiver that queues the event and answers (the
 *  advice in docs/webhooks.md), short enough that a hanging receiver does not hold a worker slot. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** Bytes of a response body read at most; small bodies are drained so the connection is reused. */
export const MAX_RESPONSE_BYTES = 64 * 1024;
/** Bytes of the response body kept for the delivery log (sanitised, at most 1 KiB). */
export const SNIPPET_BYTES = 1024;
/** Idle keep-alive sockets are closed after this, below Node's 5 s server keepAliveTimeout, so we
 *  rarely write into a socket the receiver is closing. */
const FREE_SOCKET_TIMEOUT_MS = 4_000;

export type PostResult =
  | { kind: 'response'; status: number; snippet: string; durationMs: number }
  | {
      kind: 'error';
      errorClass: 'timeout' | 'connection' | 'dns' | 'tls' | 'blocked_address' | 'invalid_url';
      message: string;
      durationMs: number;
    };

export interface WebhookClient {
  post(url: string, body: string, headers: Record<string, string>): Promise<PostResult>;
  close(): Promise<void>;
}

export interface WebhookClientOptions {
  allowPrivateTargets: boolean;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** DNS lookup (tests inject one); called with { all: true } and must answer with an address list. */
  lookup?: LookupFunction;
}

const BLOCKED = 'ERR_WEBHOOK_BLOCKED_ADDRESS';
const TIMEOUT = 'ERR_WEBHOOK_TIMEOUT';

/** Wraps a lookup so that a name resolving to any blocked address fails before connecting. */
export function guardedLookup(base: LookupFunction, allowPrivateTargets: boolean): LookupFunction {
  return (hostname, options, callback) => {
    base(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '');
      const list = (
        Array.isArray(addresses) ? addresses : [{ address: addresses, family: 4 }]
      ) as LookupAddress[];
      if (list.length === 0)
        return callback(Object.assign(new Error('no address'), { code: 'ENOTFOUND' }), '');
      const blocked = allowPrivateTargets ? undefined : firstBlockedAddress(list.map((a) => a.address));
      if (blocked !== undefined) {
        const message = blockedTargetMessage(normaliseHost(hostname), blocked);
        return callback(Object.assign(new Error(message), { code: BLOCKED }), '');
      }
      if (options.all) callback(null, list);
      else callback(null, list[0].address, list[0].family);
    });
  };
}

/** How long the console's creation check waits for DNS before leaving the name to the connect-time guard. */
export const CREATION_LOOKUP_TIMEOUT_MS = 2_000;

/**
 * Creation-time check of a host name (already normalised, not a literal address): resolves every
 * address and returns the first one that is not public, or null — also when the name does not
 * resolve or the lookup takes longer than timeoutMs: the connect-time guard (guardedLookup) still
 * refuses it later, and the handshake then reports error class dns (docs/decisions.md).
 */
export function resolvesToBlocked(
  hostname: string,
  lookup: LookupFunction = dnsLookup as LookupFunction,
  timeoutMs = CREATION_LOOKUP_TIMEOUT_MS,
): Promise<string | null> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(null), timeoutMs);
    lookup(hostname, { all: true }, (err, addresses) => {
      clearTimeout(timer);
      if (err) return resolve(null);
      const list = Array.isArray(addresses) ? addresses.map((a) => a.address) : [addresses];
      resolve(firstBlockedAddress(list) ?? null);
    });
  });
}

/** Printable text of a body prefix: UTF-8, control characters replaced, at most SNIPPET_BYTES. */
export function sanitizeSnippet(bytes: Buffer): string {
  const text = bytes.subarray(0, SNIPPET_BYTES).toString('utf8');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const clean = text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, ' ').replace(/\uFFFD+$/, '');
  return Buffer.byteLength(clean) <= SNIPPET_BYTES ? clean : clean.slice(0, SNIPPET_BYTES);
}

function classifyError(err: NodeJS.ErrnoException): Extract<PostResult, { kind: 'error' }>['errorClass'] {
  const code = String(err.code ?? '');
  if (code === TIMEOUT) return 'timeout';
  if (code === BLOCKED) return 'blocked_address';
  if (/^(ENOTFOUND|EAI_)/.test(code)) return 'dns';
  if (
    /^(ERR_TLS_|ERR_SSL_|ERR_OSSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH|EPROTO)/.test(
      code,
    )
  ) {
    return 'tls';
  }
  return 'connection';
}

function errorMessage(err: NodeJS.ErrnoException, timeoutMs: number): string {
  const code = String(err.code ?? '');
  if (code === TIMEOUT) return `no complete response within ${timeoutMs} ms`;
  if (code === BLOCKED) return err.message;
  return `${code ? `${code}: ` : ''}${err.message}`.slice(0, 300);
}

export function createWebhookClient(opts: WebhookClientOptions): WebhookClient {
  const timeoutMs = opts.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const maxResponseBytes = opts.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const lookup = guardedLookup(opts.lookup ?? (dnsLookup as LookupFunction), opts.allowPrivateTargets);
  const agentOptions = {
    keepAlive: true,
    scheduling: 'lifo' as const,
    timeout: FREE_SOCKET_TIMEOUT_MS,
    lookup,
  };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new https.Agent(agentOptions);

  async function post(url: string, body: string, headers: Record<string, string>): Promise<PostResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const check = validateReceiverUrl(url, { allowPrivateTargets: opts.allowPrivateTargets });
    if (!check.ok) return { kind: 'error', errorClass: check.reason, message: check.message, durationMs: 0 };
    const target = check.url;
    const isHttps = target.protocol === 'https:';

    return new Promise<PostResult>((resolve) => {
      let settled = false;
      /** Set once the reply status is known: a later error only cuts the body short. */
      let responseDone: (() => void) | null = null;
      const finish = (r: PostResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(r);
      };
      const req = (isHttps ? https : http).request(target, {
        method: 'POST',
        agent: isHttps ? httpsAgent : httpAgent,
        lookup,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      });
      const timer = setTimeout(() => {
        req.destroy(Object.assign(new Error('timeout'), { code: TIMEOUT }));
      }, timeoutMs);

      req.on('response', (res) => {
        const status = res.statusCode ?? 0;
        const kept: Buffer[] = [];
        let keptBytes = 0;
        let read = 0;
        const done = () => {
          finish({
            kind: 'response',
            status,
            snippet: sanitizeSnippet(Buffer.concat(kept)),
            durationMs: elapsed(),
          });
        };
        responseDone = done;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (keptBytes < SNIPPET_BYTES) {
            const part = chunk.subarray(0, SNIPPET_BYTES - keptBytes);
            kept.push(part);
            keptBytes += part.length;
          }
          if (read > maxResponseBytes) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        // A body cut short (time-out, reset) still leaves a reply status: the receiver answered.
        res.on('error', done);
        res.on('close', done);
      });
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (responseDone) return responseDone();
        finish({
          kind: 'error',
          errorClass: classifyError(err),
          message: errorMessage(err, timeoutMs),
          durationMs: elapsed(),
        });
      });
      req.end(body);
    });
  }

  return {
    post,
    async close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
