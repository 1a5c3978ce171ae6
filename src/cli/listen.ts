import { CliError } from './admin-client.ts';
import { type CliIo, type Command, list, str, usageError } from './command.ts';
import {
  type ConsoleAuth,
  consoleBase,
  consoleLogin,
  consoleRequest,
  credentials,
  loadSavedSession,
  prompt,
  removeSavedSession,
  replyError,
  resolveConsoleAuth,
  saveSession,
  sessionFile,
} from './console-session.ts';
import { TRIGGER_TEST_CALL_HELP, triggerTestCall, wantsTestCall } from './trigger-command.ts';

/**
 * `callcap listen --forward-to URL`: the console's event stream (GET /app/api/listen, server-sent
 * events) re-POSTed to a local URL with the headers the service signed, one line per event;
 * reconnects with backoff and resumes the same session, so nothing sent while it was away is lost.
 * Also `callcap login` / `logout` (the saved console session) and `callcap trigger <event_type>`.
 */

export interface SseMessage {
  event: string;
  data: string;
  id: string | null;
}

/**
 * The event-stream format (WHATWG HTML "Server-sent events"): lines end in LF, CRLF or CR; a blank
 * line dispatches; `:` starts a comment; data lines are joined with LF; unknown fields are ignored.
 */
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private id: string | null = null;

  push(chunk: string): SseMessage[] {
    this.buffer += chunk;
    const out: SseMessage[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buffer);
      // A lone CR at the end may be the first half of CRLF: wait for the next chunk.
      if (!m || (m[0] === '\r' && m.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      if (line === '') {
        if (this.data.length > 0)
          out.push({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
        this.event = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
      else if (field === 'id' && !value.includes('\0')) this.id = value;
    }
    return out;
  }
}

/** Reconnection delay after `failures` consecutive failures: 0.5 s doubling to 10 s, ±20 % jitter. */
export function reconnectDelayMs(failures: number, random: () => number = Math.random): number {
  const base = Math.min(10_000, 500 * 2 ** Math.max(0, failures));
  return Math.round(base * (0.8 + 0.4 * random()));
}

export interface StreamedDelivery {
  delivery_id: string;
  event_id: string;
  event_type: string;
  headers: Record<string, string>;
  body: string;
}

export interface Forwarded {
  status: number | null;
  error: string | null;
  latencyMs: number;
}

/** POSTs the exact body with the service's headers; never throws (a failure is reported). */
export async function forwardDelivery(
  url: string,
  d: StreamedDelivery,
  timeoutMs = 30_000,
): Promise<Forwarded> {
  const started = performance.now();
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: d.headers,
      body: d.body,
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    await res.arrayBuffer().catch(() => undefined);
    return { status: res.status, error: null, latencyMs: Math.round(performance.now() - started) };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return {
      status: null,
      error: e.cause?.code ?? e.message,
      latencyMs: Math.round(performance.now() - started),
    };
  }
}

/** One output line per event: time, type, event id, the local reply (or error) and its latency. */
export function deliveryLine(d: StreamedDelivery, f: Forwarded, at: Date): string {
  const reply = f.status !== null ? `[${f.status}]` : `[ERR ${f.error}]`;
  return `${at.toISOString()}  ${d.event_type.padEnd(28)} ${d.event_id}  ${reply} ${f.latencyMs} ms\n`;
}

export interface ListenOptions {
  auth: ConsoleAuth;
  relogin: (() => Promise<ConsoleAuth>) | null;
  forwardTo: string;
  events: string[];
  printJson: boolean;
  io: CliIo;
  signal: AbortSignal;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Runs until the signal aborts: opens (or resumes) the session, forwards and acknowledges every
 * delivery, reconnects when the stream drops. Answers what was forwarded. Throws CliError for what
 * a retry cannot fix (a refused session, an unknown event type).
 */
export async function runListen(
  o: ListenOptions,
): Promise<{ forwarded: number; subscriptionId: string | null }> {
  let auth = o.auth;
  let resume: string | null = null;
  let failures = 0;
  let forwarded = 0;
  let secret: string | null = null;
  while (!o.signal.aborted) {
    let streamId: string | null = null;
    try {
      const qs = new URLSearchParams();
      if (o.events.length) qs.set('events', o.events.join(','));
      if (resume) qs.set('resume', resume);
      const res = await fetch(`${auth.base}/app/api/listen?${qs}`, {
        headers: { cookie: auth.cookie, accept: 'text/event-stream' },
        signal: o.signal,
      });
      if (res.status === 401 && o.relogin) {
        await res.body?.cancel();
        auth = await o.relogin();
        continue;
      }
      if (res.status === 404 && resume) {
        await res.body?.cancel();
        o.io.stderr(`Session ${resume} is gone (idle past its grace period); opening a new one.\n`);
        resume = null;
        continue;
      }
      if (res.status >= 400 && res.status < 500) {
        const hint = res.status === 401 ? ' Run "callcap login" again.' : '';
        throw new CliError(`the service refused the stream: ${await replyError(res)}${hint}`);
      }
      if (!res.ok || !res.body) throw new Error(`the stream answered ${res.status}`);
      const parser = new SseParser();
      const decoder = new TextDecoder();
      let ended = false;
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const m of parser.push(decoder.decode(chunk, { stream: true }))) {
          if (m.event === 'ready') {
            const r = JSON.parse(m.data) as {
              subscription_id: string;
              stream_id: string;
              secret: string | null;
            };
            streamId = r.stream_id;
            failures = 0;
            if (r.secret) {
              secret = r.secret;
              o.io.stderr(
                `Ready! Forwarding to ${o.forwardTo}. Your webhook signing secret is ${secret} (^C to quit)\n`,
              );
            } else if (resume) {
              o.io.stderr(`Reconnected; session ${r.subscription_id} resumed.\n`);
            }
            resume = r.subscription_id;
          } else if (m.event === 'delivery' && streamId && resume) {
            const d = JSON.parse(m.data) as StreamedDelivery;
            const f = await forwardDelivery(o.forwardTo, d);
            forwarded++;
            if (o.printJson) {
              o.io.stdout(
                `${JSON.stringify({
                  event_id: d.event_id,
                  event_type: d.event_type,
                  status: f.status,
                  error: f.error,
                  latency_ms: f.latencyMs,
                  event: JSON.parse(d.body),
                })}\n`,
              );
            } else {
              o.io.stdout(deliveryLine(d, f, new Date()));
            }
            await consoleRequest(auth, 'POST', `/listen/${resume}/ack`, {
              stream_id: streamId,
              acks: [{ delivery_id: d.delivery_id, status: f.status, duration_ms: f.latencyMs }],
            }).catch((err: Error) => {
              o.io.stderr(
                `Acknowledgement of ${d.event_id} failed (${err.message}); it will be sent again.\n`,
              );
            });
          } else if (m.event === 'end') {
            ended = true;
          }
        }
        if (ended) break;
      }
      if (ended) {
        o.io.stderr('The service ended the session; opening a new one.\n');
        resume = null;
      }
    } catch (err) {
      if (o.signal.aborted) break;
      if (err instanceof CliError) throw err;
      failures++;
      const delay = reconnectDelayMs(failures - 1);
      o.io.stderr(
        `Stream lost (${(err as Error).message}); reconnecting in ${(delay / 1000).toFixed(1)} s.\n`,
      );
      await sleep(delay, o.signal);
      continue;
    }
    if (o.signal.aborted) break;
    failures++;
    const delay = reconnectDelayMs(failures - 1);
    o.io.stderr(`Stream closed by the service; reconnecting in ${(delay / 1000).toFixed(1)} s.\n`);
    await sleep(delay, o.signal);
  }
  return { forwarded, subscriptionId: resume };
}

const CONSOLE_FLAGS = {
  url: {
    hint: 'origin',
    help: 'the service (default CALLCAP_URL, else http://localhost:PORT, PORT default 3000)',
  },
  email: { hint: 'email', help: 'sign in with this e-mail (default CALLCAP_EMAIL, else the saved session)' },
  password: { hint: 'password|-', help: '"-" reads it from stdin (default CALLCAP_PASSWORD, else a prompt)' },
};

export const LISTEN_COMMANDS: Command[] = [
  {
    words: ['login'],
    args: [],
    section: 'integrator',
    flags: CONSOLE_FLAGS,
    summary: 'sign in to the console and keep the session for listen and trigger (mode 0600)',
    details: [
      'The session goes to $XDG_CONFIG_HOME/callcap/session.json (default ~/.config/callcap), mode 0600.',
      'Without --email/--password (or CALLCAP_EMAIL/CALLCAP_PASSWORD) it prompts on a terminal.',
    ],
    run: async (c) => {
      let creds = await credentials(c);
      if (!creds) {
        if (!process.stdin.isTTY)
          throw usageError('give --email and --password (or CALLCAP_EMAIL and CALLCAP_PASSWORD).');
        creds = { email: await prompt('E-mail: '), password: await prompt('Password: ', true) };
      }
      const auth = await consoleLogin(consoleBase(c.io.env, str(c, 'url')), creds.email, creds.password);
      const file = await saveSession(c.io.env, auth);
      return { email: auth.email, organization_id: auth.organization_id, service: auth.base, saved_to: file };
    },
  },
  {
    words: ['logout'],
    args: [],
    section: 'integrator',
    flags: {},
    summary: 'end the saved console session and delete it',
    run: async (c) => {
      const saved = await loadSavedSession(c.io.env);
      if (saved) await consoleRequest(saved, 'POST', '/logout').catch(() => undefined);
      await removeSavedSession(c.io.env);
      return { logged_out: saved !== null, removed: sessionFile(c.io.env) };
    },
  },
  {
    words: ['listen'],
    args: [],
    section: 'integrator',
    flags: {
      'forward-to': {
        hint: 'url',
        required: true,
        help: 'your local receiver, e.g. http://localhost:4242/webhooks',
      },
      events: { hint: 'type,type', help: 'only these event types (default: every type)' },
      'print-json': {
        hint: '',
        boolean: true,
        help: 'one JSON object per event on stdout instead of a line',
      },
      ...CONSOLE_FLAGS,
    },
    summary: "forward your organization's webhook events to a local URL, signed, as they happen",
    details: [
      'Opens an event stream from the service (console session: "callcap login" or --email/--password)',
      "and prints the session's one-time signing secret; give it to your receiver. Every event is POSTed",
      'to --forward-to with the exact body and the service-signature, service-event-id and',
      'service-event-type headers, one line per event: time, type, event id, [local status], latency.',
      'The stream reconnects by itself and resumes the session: events sent while it was away arrive',
      'then (at least once, same event_id). ^C ends the session; a dropped one ends after 60 s.',
    ],
    run: async (c) => {
      const forwardTo = str(c, 'forward-to') as string;
      try {
        const u = new URL(forwardTo);
        if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
      } catch {
        throw usageError(`--forward-to must be an http(s) URL, got "${forwardTo}".`);
      }
      const { auth, relogin } = await resolveConsoleAuth(c);
      const abort = new AbortController();
      const stop = () => abort.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      let result: { forwarded: number; subscriptionId: string | null };
      try {
        result = await runListen({
          auth,
          relogin,
          forwardTo,
          events: list(str(c, 'events')) ?? [],
          printJson: c.flags['print-json'] === true,
          io: c.io,
          signal: abort.signal,
        });
      } finally {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
      }
      if (result.subscriptionId) {
        await consoleRequest(auth, 'DELETE', `/listen/${result.subscriptionId}`).catch(() => undefined);
      }
      c.io.stderr(`Session ended; ${result.forwarded} event(s) forwarded.\n`);
      return undefined;
    },
  },
  {
    words: ['trigger'],
    args: ['event_type'],
    section: 'integrator',
    flags: CONSOLE_FLAGS,
    summary:
      'send an event to your running "callcap listen" sessions (webhook.test, or replay the latest of a type)',
    details: [
      "webhook.test sends a fresh test event (as the console's Test action). Any other type sends the",
      "organization's most recent event of that type again, with its own event_id (404 when there is none).",
      ...TRIGGER_TEST_CALL_HELP,
    ],
    run: async (c) => {
      if (wantsTestCall(c)) return triggerTestCall(c);
      const { auth } = await resolveConsoleAuth(c);
      return consoleRequest(auth, 'POST', '/listen/trigger', { event_type: c.args[0] });
    },
  },
];
