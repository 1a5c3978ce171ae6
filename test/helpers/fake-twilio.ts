/**
 * A fake Twilio for tests and local development: a real HTTP server on 127.0.0.1 (port 0) that
 * speaks the parts of Twilio's REST API the service uses, and a driver that plays Twilio's side of
 * a call against the service — correctly signed form-encoded callbacks, following the URLs in the
 * TwiML the service answers. Never part of the product.
 *
 * REST (Basic auth = account SID : auth token; a wrong one answers 401 with Twilio's JSON error):
 *   POST   /2010-04-01/Accounts/{AC}/Calls.json            201 {sid, status: "queued", to, from, …};
 *          every request is kept in `createdCalls` (its form parameters); `failNextCreateCall()`
 *          makes the next one answer an error
 *   GET    /2010-04-01/Accounts/{AC}/Recordings/{RE}.mp3   the recording's bytes (streamed), 404 when
 *          deleted or unknown; served as `contentType` (audio/mpeg by default) with a Content-Length
 *          when the recording declares one (`contentLength`); `failRecordingDownloads = 500` makes
 *          it answer that status until set back to null
 *   DELETE /2010-04-01/Accounts/{AC}/Recordings/{RE}.json  204, or 404 {code: 20404} when already gone;
 *          `failRecordingDeletes = 500` makes it fail until set back to null; the next DELETE
 *          after `holdRecordingDeletes = promise` is answered once the promise settles (one in flight)
 *   Every REST request is logged in `restRequests` ({method, path, authorized}).
 *
 * Callbacks: `signedPost(url, params)` POSTs params form-encoded to a service URL with
 * X-Twilio-Signature computed by the official `twilio` package (getExpectedTwilioSignature — the
 * independent check of the service's own verifier). Service URLs are built on the service's
 * PUBLIC_BASE_URL (`publicBaseUrl`, what is signed); the request is sent to `serviceOrigin` (the real
 * socket), as a proxy in front of the service would.
 *
 * Calls: `inboundCall({from, to, …})` starts a call at the Voice URL and answers a `FakeCall` that
 * walks the TwiML it got back, one step at a time, as Twilio would:
 *   call.twiml / call.verbs         the last TwiML answer and its parsed verbs
 *   call.pressDigits('9')           answer the pending <Gather> with Digits (POST to its action)
 *   call.gatherTimeout()            let the <Gather> time out: continue with the next verb (<Redirect>)
 *   call.answerDial({recording})    the <Dial>ed number answers; the call ends completed: the recording
 *                                   status callback (completed, dual-channel) and the <Dial action>
 *                                   (DialCallStatus=completed) are posted. `voices: {caller, answerer}`
 *                                   instead of `recording` says what each person says (a tone, see
 *                                   stereo-mp3.ts) and the fake records it as Twilio does: the caller's
 *                                   call (the parent) on the first channel, the <Dial>ed phone (the
 *                                   child) on the second (dualChannelRecording)
 *   call.dialUnanswered('no-answer')  the <Dial> is not answered: <Dial action> with that status
 *   call.recordVoicemail({recording}) the <Record> ends: its action, then its recording callback
 *   call.hangup()                   the status callback (CallStatus=completed) to the number's status URL
 * Recordings are served from this fake's REST origin (RecordingUrl without extension, as Twilio
 * sends it). Every step answers the service's HTTP reply. Outbound legs (twilio-out) build on
 * `signedPost`, `createdCalls`, `parseTwiml` and `FakeCall`.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import twilio from 'twilio';
import { stereoMp3 } from './stereo-mp3.ts';

export const { getExpectedTwilioSignature, validateRequest } = twilio;

export const sid = (prefix: string) => prefix + randomBytes(16).toString('hex');

export interface TwilioAccount {
  accountSid: string;
  authToken: string;
}

export interface TwimlVerb {
  name: string;
  attrs: Record<string, string>;
  text: string;
  children: TwimlVerb[];
}

export interface ServiceReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface StoredRecording {
  sid: string;
  accountSid: string;
  callSid: string;
  /** bytes, or a factory of a fresh stream per download (large recordings) */
  audio: Buffer | (() => Readable);
  /** the Content-Type served (default audio/mpeg) */
  contentType?: string;
  /** a Content-Length header to send with a streamed recording (Twilio declares its files' size) */
  contentLength?: number;
  deleted: boolean;
  downloads: number;
}

export interface RestRequest {
  method: string;
  path: string;
  authorized: boolean;
}

export interface FakeTwilioOptions {
  /** PUBLIC_BASE_URL of the service: what callback signatures cover */
  publicBaseUrl: string;
  /** where the service really listens (http://127.0.0.1:port); defaults to publicBaseUrl */
  serviceOrigin?: string;
}

export interface FakeTwilio {
  /** this fake's REST origin: the service's TWILIO_API_BASE_URL */
  url: string;
  /** where callbacks are really sent (set it once the service listens) */
  serviceOrigin: string;
  /** the default account (more with addAccount) */
  account: TwilioAccount;
  addAccount(a?: Partial<TwilioAccount>): TwilioAccount;
  restRequests: RestRequest[];
  createdCalls: { accountSid: string; sid: string; params: Record<string, string | string[]> }[];
  /** the next POST …/Calls.json answers this status and Twilio error body */
  failNextCreateCall(status: number, code: number, message: string): void;
  recordings: Map<string, StoredRecording>;
  /** while set, DELETE …/Recordings/{RE}.json answers this status (Twilio unavailable) */
  failRecordingDeletes: number | null;
  /** the next DELETE …/Recordings/{RE}.json is answered only once this promise settles (then unset) */
  holdRecordingDeletes: Promise<void> | null;
  /** while set, GET …/Recordings/{RE}.mp3 answers this status (Twilio unavailable) */
  failRecordingDownloads: number | null;
  /** a recording on this fake; answers its sid and RecordingUrl (no extension) */
  addRecording(r: {
    accountSid?: string;
    callSid: string;
    audio: StoredRecording['audio'];
    sid?: string;
    contentType?: string;
    contentLength?: number;
  }): {
    sid: string;
    url: string;
  };
  /** the service URL for a path (PUBLIC_BASE_URL + path) */
  serviceUrl(path: string): string;
  /** a form POST signed as Twilio signs it; `signature` overrides the header (null: none sent) */
  signedPost(
    url: string,
    params: Record<string, string>,
    opts?: { account?: TwilioAccount; signature?: string | null },
  ): Promise<ServiceReply>;
  inboundCall(c: {
    from: string;
    to: string;
    callerName?: string;
    forwardedFrom?: string;
    account?: TwilioAccount;
    voiceUrl?: string;
    statusUrl?: string;
  }): Promise<FakeCall>;
  close(): Promise<void>;
}

const API = '/2010-04-01/Accounts/';

/**
 * A dual-channel recording of a two-leg call as Twilio makes it: the PARENT call on the first
 * channel, the CHILD call (the leg a <Dial> created) on the second — Twilio's Call resource,
 * RecordingChannels: "The first channel of a dual-channel recording contains the parent call and
 * the second channel contains the child call." Each leg says a tone (Hz, stereo-mp3.ts) or nothing.
 */
export function dualChannelRecording(legs: {
  parent: number | null;
  child: number | null;
  seconds: number;
}): Buffer {
  return stereoMp3({ seconds: legs.seconds, left: legs.parent, right: legs.child });
}

export async function startFakeTwilio(opts: FakeTwilioOptions): Promise<FakeTwilio> {
  const accounts = new Map<string, string>();
  const restRequests: RestRequest[] = [];
  const createdCalls: FakeTwilio['createdCalls'] = [];
  const recordings = new Map<string, StoredRecording>();
  let nextCreateFailure: { status: number; code: number; message: string } | null = null;

  const authorized = (req: IncomingMessage, accountSid: string): boolean => {
    const h = req.headers.authorization ?? '';
    if (!h.startsWith('Basic ')) return false;
    const [user, pass] = Buffer.from(h.slice(6), 'base64').toString('utf8').split(':');
    return user === accountSid && accounts.get(accountSid) === pass && pass !== undefined;
  };
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const twilioError = (res: ServerResponse, status: number, code: number, message: string) =>
    json(res, status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const m = url.pathname.startsWith(API)
        ? /^\/2010-04-01\/Accounts\/([^/]+)\/(Calls\.json|Recordings\/([^/.]+)\.(mp3|json))$/.exec(
            url.pathname,
          )
        : null;
      const accountSid = m?.[1] ?? '';
      const ok = m !== null && authorized(req, accountSid);
      restRequests.push({ method: req.method ?? '', path: url.pathname, authorized: ok });
      if (!m) return twilioError(res, 404, 20404, 'The requested resource was not found');
      if (!ok) return twilioError(res, 401, 20003, 'Authenticate');
      if (m[2] === 'Calls.json' && req.method === 'POST') {
        const params: Record<string, string | string[]> = {};
        for (const [k, v] of new URLSearchParams(Buffer.concat(chunks).toString('utf8'))) {
          const prev = params[k];
          params[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
        }
        if (nextCreateFailure) {
          const f = nextCreateFailure;
          nextCreateFailure = null;
          return twilioError(res, f.status, f.code, f.message);
        }
        const callSid = sid('CA');
        createdCalls.push({ accountSid, sid: callSid, params });
        return json(res, 201, {
          sid: callSid,
          account_sid: accountSid,
          to: params.To,
          from: params.From,
          status: 'queued',
          direction: 'outbound-api',
        });
      }
      const rec = m[3] ? recordings.get(m[3]) : undefined;
      const live = rec && rec.accountSid === accountSid && !rec.deleted ? rec : undefined;
      if (m[4] === 'mp3' && req.method === 'GET') {
        if (!live) return twilioError(res, 404, 20404, 'The requested resource was not found');
        if (fake.failRecordingDownloads !== null) {
          return twilioError(res, fake.failRecordingDownloads, 20500, 'Internal Server Error');
        }
        live.downloads++;
        res.writeHead(200, {
          'content-type': live.contentType ?? 'audio/mpeg',
          ...(live.contentLength === undefined ? {} : { 'content-length': String(live.contentLength) }),
        });
        if (Buffer.isBuffer(live.audio)) return res.end(live.audio);
        live.audio().pipe(res);
        return;
      }
      if (m[4] === 'json' && req.method === 'DELETE') {
        const answer = () => {
          if (fake.failRecordingDeletes !== null) {
            return twilioError(res, fake.failRecordingDeletes, 20500, 'Internal Server Error');
          }
          if (!live) return twilioError(res, 404, 20404, 'The requested resource was not found');
          live.deleted = true;
          return res.writeHead(204).end();
        };
        const held = fake.holdRecordingDeletes;
        fake.holdRecordingDeletes = null;
        if (held) held.then(answer, answer);
        else answer();
        return;
      }
      return twilioError(res, 405, 20004, 'Method not allowed');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const addAccount = (a: Partial<TwilioAccount> = {}): TwilioAccount => {
    const account = {
      accountSid: a.accountSid ?? sid('AC'),
      authToken: a.authToken ?? randomBytes(16).toString('hex'),
    };
    accounts.set(account.accountSid, account.authToken);
    return account;
  };
  const account = addAccount();
  const base = opts.publicBaseUrl.replace(/\/+$/, '');

  const fake: FakeTwilio = {
    url,
    serviceOrigin: (opts.serviceOrigin ?? base).replace(/\/+$/, ''),
    account,
    addAccount,
    restRequests,
    createdCalls,
    failNextCreateCall(status, code, message) {
      nextCreateFailure = { status, code, message };
    },
    recordings,
    failRecordingDeletes: null,
    holdRecordingDeletes: null,
    failRecordingDownloads: null,
    addRecording(r) {
      const recordingSid = r.sid ?? sid('RE');
      const accountSid = r.accountSid ?? account.accountSid;
      recordings.set(recordingSid, {
        sid: recordingSid,
        accountSid,
        callSid: r.callSid,
        audio: r.audio,
        contentType: r.contentType,
        contentLength: r.contentLength,
        deleted: false,
        downloads: 0,
      });
      return { sid: recordingSid, url: `${url}${API}${accountSid}/Recordings/${recordingSid}` };
    },
    serviceUrl: (path) => base + path,
    async signedPost(target, params, o = {}) {
      const acct = o.account ?? account;
      const signature =
        o.signature === undefined ? getExpectedTwilioSignature(acct.authToken, target, params) : o.signature;
      if (!target.startsWith(base)) throw new Error(`fake Twilio: ${target} is not on ${base}`);
      const headers: Record<string, string> = {
        'content-type': 'application/x-www-form-urlencoded',
        'user-agent': 'TwilioProxy/1.1',
      };
      if (signature !== null) headers['x-twilio-signature'] = signature;
      const res = await fetch(fake.serviceOrigin.replace(/\/+$/, '') + target.slice(base.length), {
        method: 'POST',
        headers,
        body: new URLSearchParams(params).toString(),
      });
      const replyHeaders: Record<string, string> = {};
      res.headers.forEach((value, name) => {
        replyHeaders[name] = value;
      });
      return { status: res.status, headers: replyHeaders, body: await res.text() };
    },
    async inboundCall(c) {
      const acct = c.account ?? account;
      const call = new FakeCall(fake, acct, {
        callSid: sid('CA'),
        from: c.from,
        to: c.to,
        statusUrl: c.statusUrl ?? fake.serviceUrl('/telephony/twilio/status'),
      });
      const params: Record<string, string> = {
        CallSid: call.callSid,
        AccountSid: acct.accountSid,
        From: c.from,
        To: c.to,
        CallStatus: 'ringing',
        Direction: 'inbound',
        ApiVersion: '2010-04-01',
        Caller: c.from,
        Called: c.to,
      };
      if (c.callerName !== undefined) params.CallerName = c.callerName;
      if (c.forwardedFrom !== undefined) params.ForwardedFrom = c.forwardedFrom;
      await call.request(c.voiceUrl ?? fake.serviceUrl('/telephony/twilio/voice'), params);
      return call;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

/** One call as Twilio plays it: the TwiML it holds and the steps that follow its URLs. */
export class FakeCall {
  readonly fake: FakeTwilio;
  readonly account: TwilioAccount;
  readonly callSid: string;
  readonly from: string;
  readonly to: string;
  readonly statusUrl: string;
  /** Twilio's Direction parameter: inbound, outbound-api (a REST-created leg), outbound-dial (a <Dial> child) */
  readonly direction: string;
  /** every service reply, in order */
  readonly replies: ServiceReply[] = [];
  twiml = '';
  verbs: TwimlVerb[] = [];

  constructor(
    fake: FakeTwilio,
    account: TwilioAccount,
    c: { callSid: string; from: string; to: string; statusUrl: string; direction?: string },
  ) {
    this.fake = fake;
    this.account = account;
    this.callSid = c.callSid;
    this.from = c.from;
    this.to = c.to;
    this.statusUrl = c.statusUrl;
    this.direction = c.direction ?? 'inbound';
  }

  /** The parameters Twilio sends with every request of this call. */
  base(extra: Record<string, string> = {}): Record<string, string> {
    return {
      AccountSid: this.account.accountSid,
      CallSid: this.callSid,
      From: this.from,
      To: this.to,
      Direction: this.direction,
      ApiVersion: '2010-04-01',
      ...extra,
    };
  }

  /** POSTs to a service URL; a TwiML answer becomes the call's current TwiML. */
  async request(url: string, params: Record<string, string>): Promise<ServiceReply> {
    const reply = await this.fake.signedPost(url, params, { account: this.account });
    this.replies.push(reply);
    if (reply.status === 200 && (reply.headers['content-type'] ?? '').includes('xml')) {
      this.twiml = reply.body;
      this.verbs = parseTwiml(reply.body);
    }
    return reply;
  }

  verb(name: string): TwimlVerb {
    const v = this.verbs.find((x) => x.name === name);
    if (!v) throw new Error(`fake Twilio: no <${name}> in ${this.twiml}`);
    return v;
  }

  async pressDigits(digits: string): Promise<ServiceReply> {
    const g = this.verb('Gather');
    return this.request(
      g.attrs.action!,
      this.base({ CallStatus: 'in-progress', Digits: digits, FinishedOnKey: '' }),
    );
  }

  /** No key pressed: Twilio continues with the verb after <Gather>, here a <Redirect>. */
  async gatherTimeout(): Promise<ServiceReply> {
    const i = this.verbs.findIndex((x) => x.name === 'Gather');
    const next = this.verbs[i + 1];
    if (next?.name !== 'Redirect' || !next)
      throw new Error(`fake Twilio: no <Redirect> after <Gather> in ${this.twiml}`);
    return this.request(next.text, this.base({ CallStatus: 'in-progress' }));
  }

  /**
   * The <Dial>ed number answers and the conversation ends: the recording callback (if the Dial
   * records) with a recording served by the fake, then the <Dial action> with DialCallStatus completed.
   * The recording is `recording` as given, or — with `voices` — what the caller (this call, the
   * parent leg) and the answering phone (the <Dial>'s child leg) said, laid out as Twilio does.
   */
  async answerDial(
    o: {
      recording?: StoredRecording['audio'];
      voices?: { caller: number | null; answerer: number | null };
      duration?: number;
      recordingUrl?: string;
    } = {},
  ) {
    const dial = this.verb('Dial');
    const dialCallSid = sid('CA');
    const out: {
      recordingSid: string | null;
      recordingReply: ServiceReply | null;
      actionReply: ServiceReply;
    } = {
      recordingSid: null,
      recordingReply: null,
      actionReply: undefined as unknown as ServiceReply,
    };
    if (dial.attrs.record && dial.attrs.recordingStatusCallback) {
      const audio = o.voices
        ? dualChannelRecording({
            parent: o.voices.caller,
            child: o.voices.answerer,
            seconds: o.duration ?? 10,
          })
        : (o.recording ?? Buffer.alloc(0));
      const rec = this.fake.addRecording({
        accountSid: this.account.accountSid,
        callSid: this.callSid,
        audio,
      });
      out.recordingSid = rec.sid;
      out.recordingReply = await this.recordingCallback(dial.attrs.recordingStatusCallback, {
        RecordingSid: rec.sid,
        RecordingUrl: o.recordingUrl ?? rec.url,
        RecordingStatus: 'completed',
        RecordingDuration: String(o.duration ?? 10),
        RecordingChannels: dial.attrs.record.endsWith('dual') ? '2' : '1',
        RecordingSource: 'DialVerb',
      });
    }
    out.actionReply = await this.request(
      dial.attrs.action!,
      this.base({
        CallStatus: 'in-progress',
        DialCallSid: dialCallSid,
        DialCallStatus: 'completed',
        DialCallDuration: String(o.duration ?? 10),
        ...(out.recordingSid ? { RecordingSid: out.recordingSid } : {}),
      }),
    );
    return out;
  }

  async dialUnanswered(status: 'no-answer' | 'busy' | 'failed' | 'canceled' = 'no-answer') {
    const dial = this.verb('Dial');
    return this.request(
      dial.attrs.action!,
      this.base({
        CallStatus: 'in-progress',
        DialCallSid: sid('CA'),
        DialCallStatus: status,
        DialCallDuration: '0',
      }),
    );
  }

  /** The caller speaks after the beep and hangs up: <Record action>, then its recording callback. */
  async recordVoicemail(o: {
    recording: StoredRecording['audio'];
    duration?: number;
    recordingUrl?: string;
  }) {
    const record = this.verb('Record');
    const rec = this.fake.addRecording({
      accountSid: this.account.accountSid,
      callSid: this.callSid,
      audio: o.recording,
    });
    const url = o.recordingUrl ?? rec.url;
    const actionReply = await this.request(
      record.attrs.action!,
      this.base({
        CallStatus: 'completed',
        RecordingSid: rec.sid,
        RecordingUrl: url,
        RecordingDuration: String(o.duration ?? 10),
        Digits: 'hangup',
      }),
    );
    const recordingReply = await this.recordingCallback(record.attrs.recordingStatusCallback!, {
      RecordingSid: rec.sid,
      RecordingUrl: url,
      RecordingStatus: 'completed',
      RecordingDuration: String(o.duration ?? 10),
      RecordingChannels: '1',
      RecordingSource: 'RecordVerb',
    });
    return { recordingSid: rec.sid, recordingUrl: url, actionReply, recordingReply };
  }

  /** A recording status callback (the parameters Twilio sends), posted to `url`. */
  async recordingCallback(url: string, p: Record<string, string>): Promise<ServiceReply> {
    const params = {
      AccountSid: this.account.accountSid,
      CallSid: this.callSid,
      RecordingStartTime: new Date().toUTCString(),
      ...p,
    };
    const reply = await this.fake.signedPost(url, params, { account: this.account });
    this.replies.push(reply);
    return reply;
  }

  /** The call's status callback (to the number's status URL). */
  async status(callStatus: string, extra: Record<string, string> = {}): Promise<ServiceReply> {
    const reply = await this.fake.signedPost(
      this.statusUrl,
      this.base({ CallStatus: callStatus, ...extra }),
      { account: this.account },
    );
    this.replies.push(reply);
    return reply;
  }

  hangup(duration = 12): Promise<ServiceReply> {
    return this.status('completed', { CallDuration: String(duration) });
  }
}

/** A minimal TwiML (XML) reader: elements, attributes, text; enough for <Response> documents. */
export function parseTwiml(xml: string): TwimlVerb[] {
  const body = xml.replace(/^<\?xml[^>]*\?>/, '').trim();
  const decode = (s: string) =>
    s.replace(
      /&(lt|gt|quot|apos|amp);/g,
      (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[e]!,
    );
  const root: TwimlVerb = { name: '#root', attrs: {}, text: '', children: [] };
  const stack: TwimlVerb[] = [root];
  const re = /<(\/?)([A-Za-z]+)((?:\s+[A-Za-z]+="[^"]*")*)\s*(\/?)>|([^<]+)/g;
  for (const m of body.matchAll(re)) {
    const top = stack.at(-1)!;
    if (m[5] !== undefined) {
      top.text += decode(m[5]);
      continue;
    }
    if (m[1]) {
      if (top.name !== m[2])
        throw new Error(`fake Twilio: bad TwiML, </${m[2]}> closes <${top.name}>: ${xml}`);
      stack.pop();
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of m[3]!.matchAll(/([A-Za-z]+)="([^"]*)"/g)) attrs[a[1]!] = decode(a[2]!);
    const el: TwimlVerb = { name: m[2]!, attrs, text: '', children: [] };
    top.children.push(el);
    if (!m[4]) stack.push(el);
  }
  const response = root.children[0];
  if (response?.name !== 'Response' || stack.length !== 1) {
    throw new Error(`fake Twilio: not a TwiML <Response>: ${xml}`);
  }
  return response.children;
}

/**
 * Outbound (click-to-call) legs, added by twilio-out: the call the service placed through
 * POST …/Calls.json (an entry of `createdCalls`), played from Twilio's side. The agent leg is the
 * created call (its Url answers TwiML, its StatusCallback gets the agent's progress); after the key
 * press the service's <Dial><Number> names the customer leg's status callback, the <Dial action>
 * and the recording callback. Every step is one signed POST answering the service's reply, so a
 * test can send them in any order, twice, or late.
 *   outbound.agentStatus('ringing')      the agent leg's StatusCallback (CallStatus …)
 *   outbound.answer({answeredBy})        the agent picks up: Twilio fetches the Url (TwiML: <Gather>)
 *   outbound.pressDigits('1') / noKey()  the <Gather action> with Digits, or empty (actionOnEmptyResult)
 *   outbound.customerStatus('ringing')   the customer leg's <Number statusCallback>
 *   outbound.dialEnded('completed')      the <Dial action> with DialCallStatus (and DialCallSid)
 *   outbound.recording({audio})          the <Dial recordingStatusCallback>: completed (a recording
 *                                        served by this fake) or `{status: 'absent'}`; with
 *                                        `voices: {agent, customer}` the recording is what each says,
 *                                        the agent leg (the parent) on the first channel, the
 *                                        customer leg (the <Dial>'s child) on the second
 */
export class FakeOutboundCall extends FakeCall {
  readonly created: FakeTwilio['createdCalls'][number];
  /** the customer leg (the <Dial> child) */
  readonly customerSid = sid('CA');
  /** the <Dial> of the last confirm, once the agent pressed a key */
  dial: TwimlVerb | null = null;
  private sequence = 0;

  constructor(fake: FakeTwilio, account: TwilioAccount, created: FakeTwilio['createdCalls'][number]) {
    const p = (k: string) => String(created.params[k] ?? '');
    super(fake, account, {
      callSid: created.sid,
      from: p('From'),
      to: p('To'),
      statusUrl: p('StatusCallback'),
      direction: 'outbound-api',
    });
    this.created = created;
  }

  /** The agent leg's status callback, as Twilio numbers them (SequenceNumber, CallDuration when over). */
  agentStatus(callStatus: string, extra: Record<string, string> = {}): Promise<ServiceReply> {
    return this.status(callStatus, { SequenceNumber: String(this.sequence++), ...extra });
  }

  /** The agent picks up: Twilio requests the Url; the TwiML answer becomes current. */
  answer(o: { answeredBy?: string } = {}): Promise<ServiceReply> {
    const url = String(this.created.params.Url);
    return this.request(
      url,
      this.base({ CallStatus: 'in-progress', ...(o.answeredBy ? { AnsweredBy: o.answeredBy } : {}) }),
    );
  }

  /** The key press: the <Gather action> with Digits; a <Dial> answered is kept for the customer leg. */
  override async pressDigits(digits: string): Promise<ServiceReply> {
    const reply = await super.pressDigits(digits);
    this.dial = this.verbs.find((v) => v.name === 'Dial') ?? this.dial;
    return reply;
  }

  /** No key within the <Gather> timeout: with actionOnEmptyResult its action is requested with empty Digits. */
  noKey(): Promise<ServiceReply> {
    const g = this.verb('Gather');
    return this.request(g.attrs.action!, this.base({ CallStatus: 'in-progress', Digits: '' }));
  }

  private dialVerb(): TwimlVerb {
    if (!this.dial) throw new Error('fake Twilio: the agent has not confirmed; no <Dial> yet');
    return this.dial;
  }

  /** The customer leg's status callback (<Number statusCallback>): CallSid = the child, ParentCallSid = the agent leg. */
  async customerStatus(callStatus: string, extra: Record<string, string> = {}): Promise<ServiceReply> {
    const number = this.dialVerb().children.find((c) => c.name === 'Number');
    if (!number?.attrs.statusCallback) throw new Error('fake Twilio: the <Number> has no statusCallback');
    const reply = await this.fake.signedPost(
      number.attrs.statusCallback,
      {
        AccountSid: this.account.accountSid,
        CallSid: this.customerSid,
        ParentCallSid: this.callSid,
        From: this.dialVerb().attrs.callerId ?? this.from,
        To: number.text,
        Direction: 'outbound-dial',
        ApiVersion: '2010-04-01',
        CallStatus: callStatus,
        SequenceNumber: String(this.sequence++),
        ...extra,
      },
      { account: this.account },
    );
    this.replies.push(reply);
    return reply;
  }

  /** The <Dial action>: the customer leg is over with DialCallStatus. */
  dialEnded(dialCallStatus: string, duration = 0): Promise<ServiceReply> {
    return this.request(
      this.dialVerb().attrs.action!,
      this.base({
        CallStatus: 'in-progress',
        DialCallSid: this.customerSid,
        DialCallStatus: dialCallStatus,
        DialCallDuration: String(duration),
      }),
    );
  }

  /**
   * The <Dial recordingStatusCallback>: a completed recording served by this fake, or absent. The
   * recording is `audio` as given, or — with `voices` — what the agent (this call, the parent leg)
   * and the customer (the <Dial>'s child leg) said, laid out as Twilio does.
   */
  async recording(
    o: {
      audio?: StoredRecording['audio'];
      voices?: { agent: number | null; customer: number | null };
      duration?: number;
      status?: 'completed' | 'absent';
    } = {},
  ): Promise<{ recordingSid: string | null; reply: ServiceReply }> {
    const dial = this.dialVerb();
    if (!dial.attrs.recordingStatusCallback) throw new Error('fake Twilio: the <Dial> does not record');
    if (o.status === 'absent') {
      const reply = await this.recordingCallback(dial.attrs.recordingStatusCallback, {
        RecordingSid: sid('RE'),
        RecordingStatus: 'absent',
        RecordingSource: 'DialVerb',
      });
      return { recordingSid: null, reply };
    }
    const audio = o.voices
      ? dualChannelRecording({
          parent: o.voices.agent,
          child: o.voices.customer,
          seconds: o.duration ?? 10,
        })
      : (o.audio ?? Buffer.alloc(0));
    const rec = this.fake.addRecording({ accountSid: this.account.accountSid, callSid: this.callSid, audio });
    const reply = await this.recordingCallback(dial.attrs.recordingStatusCallback, {
      RecordingSid: rec.sid,
      RecordingUrl: rec.url,
      RecordingStatus: 'completed',
      RecordingDuration: String(o.duration ?? 10),
      RecordingChannels: dial.attrs.record?.endsWith('dual') ? '2' : '1',
      RecordingSource: 'DialVerb',
    });
    return { recordingSid: rec.sid, reply };
  }
}

/** The outbound call the service placed last (or the `index`th) through POST …/Calls.json. */
export function outboundCallOf(fake: FakeTwilio, account: TwilioAccount, index = -1): FakeOutboundCall {
  const created = fake.createdCalls.at(index);
  if (!created) throw new Error('fake Twilio: the service placed no call');
  return new FakeOutboundCall(fake, account, created);
}
