/**
 * Fake speech-to-text and analysis providers: ONE real HTTP server on 127.0.0.1 (port 0) speaking
 * the three protocols the service uses. Start it, point the settings at it, close it in `finally`.
 *
 *   const fake = await startFakeProviders();
 *   // settings: TRANSCRIPTION_PROVIDER=openai  TRANSCRIPTION_BASE_URL=fake.openaiBaseUrl
 *   //           TRANSCRIPTION_PROVIDER=deepgram TRANSCRIPTION_BASE_URL=fake.deepgramBaseUrl
 *   //           ANALYSIS_PROVIDER=openai        ANALYSIS_BASE_URL=fake.openaiBaseUrl
 *   ... fake.requests ...   // every request received, in order (see FakeRequest)
 *   await fake.close();
 *
 * Routes:
 * - `POST /v1/audio/transcriptions` (OpenAI, multipart, parsed with undici's FormData reader): the
 *   uploaded audio (WAV or MP3) is decoded and its tone looked up in `fake.tones`; the answer is
 *   verbose_json with that tone's segments (unknown tone or silence: empty text).
 * - `POST /v1/listen` (Deepgram): the MP3 body is decoded; with `multichannel=true` each channel's
 *   tone gives that channel's utterances, otherwise the left channel's tone gives diarized
 *   utterances (a segment's `voice` is its Deepgram speaker number). Each utterance carries its
 *   words (spread evenly over it, `word` lower-cased and bare, `punctuated_word` as written), as
 *   Deepgram answers them.
 * - `POST /v1/chat/completions` (OpenAI): answers `fake.chat(request)` as the message content;
 *   by default a valid analysis that fits the request's schema (sampleAnalysisAnswer).
 *
 * Defaults match test/helpers/stereo-mp3.ts: the agent's tone (440 Hz) is heard as AGENT_SEGMENTS,
 * the customer's (1000 Hz) as CUSTOMER_SEGMENTS, whichever channel carries it; so a dual-channel
 * recording with each side on its channel for the call's direction (INBOUND_TONES, OUTBOUND_TONES,
 * or the fake Twilio's `voices`) is transcribed by either speech-to-text route as STEREO_TRANSCRIPT;
 * monoMp3() (700 Hz) as VOICEMAIL_TRANSCRIPT.
 *
 * Scripting: `fake.script(route, ...steps)` queues one step per coming request to that route
 * ('transcriptions' | 'listen' | 'chat'); when the queue is empty the default answer is used.
 * A step is one of
 *   { ok: body }                      200 with this JSON body (for chat: `{ content }` is wrapped, see below)
 *   { content: string | object }      chat only: 200, a completion whose message content is this
 *   { status, body?, headers? }       that status, a JSON body (or text), headers such as retry-after
 *   { hang: true }                    never answers (the client's time-out fires); ended by close()
 *   'default'                         the default answer
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MPEGDecoder } from 'mpg123-decoder';
import { AGENT_TONE_HZ, CUSTOMER_TONE_HZ, toneOf, VOICEMAIL_TONE_HZ } from './stereo-mp3.ts';

export type Route = 'transcriptions' | 'listen' | 'chat';

export interface FakeSegment {
  start: number;
  end: number;
  text: string;
  /** Deepgram speaker number on a mono (diarized) answer; default 0 */
  voice?: number;
}

export interface FakeTranscript {
  /** what OpenAI's verbose_json says ("english") or Deepgram's detected_language ("en") */
  language: string;
  segments: FakeSegment[];
}

export interface FakeRequest {
  route: Route | 'unknown';
  method: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** JSON body (chat) */
  json?: unknown;
  /** multipart fields (transcriptions), file excluded */
  fields?: Record<string, string>;
  /** the uploaded file (transcriptions) */
  file?: { filename: string; type: string; bytes: Buffer };
  /** tone(s) the fake heard: one per channel */
  tones?: (number | null)[];
}

export type Step =
  | 'default'
  | { ok: unknown }
  | { content: unknown }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { hang: true };

export interface FakeProviders {
  url: string;
  /** TRANSCRIPTION_BASE_URL / ANALYSIS_BASE_URL for the openai providers */
  openaiBaseUrl: string;
  /** TRANSCRIPTION_BASE_URL for the deepgram provider */
  deepgramBaseUrl: string;
  requests: FakeRequest[];
  /** tone (Hz) → transcript; add or replace entries freely */
  tones: Map<number, FakeTranscript>;
  /** the chat answer's content when no step is scripted */
  chat: (req: FakeRequest) => unknown;
  script(route: Route, ...steps: Step[]): void;
  /** requests of one route */
  of(route: Route): FakeRequest[];
  close(): Promise<void>;
}

export const AGENT_SEGMENTS: FakeSegment[] = [
  { start: 0.5, end: 2.0, text: 'Acme Plumbing, how can I help you?' },
  { start: 6.0, end: 7.5, text: 'Sure, we can come tomorrow at 9 am.' },
];
export const CUSTOMER_SEGMENTS: FakeSegment[] = [
  { start: 2.4, end: 4.0, text: 'Hi, my name is Jane Miller.' },
  { start: 4.1, end: 5.8, text: 'I need someone to fix my leaking water heater.' },
  { start: 7.8, end: 8.9, text: 'Great, thank you.' },
];
export const VOICEMAIL_SEGMENTS: FakeSegment[] = [
  {
    start: 0.3,
    end: 3.0,
    text: 'Hi, this is Bob Stone, please call me back about a quote for a new boiler.',
  },
];
/** The labelled transcript of a recording with the agent's and the customer's tones each on their side's channel. */
export const STEREO_TRANSCRIPT = [
  'Agent: Acme Plumbing, how can I help you?',
  'Customer: Hi, my name is Jane Miller. I need someone to fix my leaking water heater.',
  'Agent: Sure, we can come tomorrow at 9 am.',
  'Customer: Great, thank you.',
].join('\n');
/** The labelled transcript of monoMp3(). */
export const VOICEMAIL_TRANSCRIPT =
  'Customer: Hi, this is Bob Stone, please call me back about a quote for a new boiler.';

/** A valid analysis for a chat request, shaped by the JSON schema the request carries. */
export function sampleAnalysisAnswer(req: FakeRequest): Record<string, unknown> {
  const props = schemaProperties(req);
  const onlyNull = (k: string) => (props[k] as { type?: string } | undefined)?.type === 'null';
  return {
    caller_name: onlyNull('caller_name') ? null : 'Jane Miller',
    summary: 'The customer needs a leaking water heater fixed and agreed to a visit tomorrow at 9 am.',
    subject: 'Leaking water heater repair',
    service_needed: 'fix a leaking water heater',
    services_match: true,
    lead_score: 8,
    preferred_date: 'tomorrow at 9 am',
    client_city: null,
    client_address: null,
    additional_details: null,
    caller_location: null,
    client_country: null,
    counterparty_name: onlyNull('counterparty_name') ? null : 'Jane Miller',
    detected_language: 'en',
    proposal_items: [{ kind: 'appointment', text: 'Visit tomorrow at 9 am' }],
    followup_email: onlyNull('followup_email')
      ? null
      : {
          subject: 'Your water heater repair',
          body: 'Hello Jane,\n\nthank you for your call. We will come tomorrow at 9 am to fix your leaking water heater.',
        },
  };
}

function schemaProperties(req: FakeRequest): Record<string, unknown> {
  const j = req.json as {
    response_format?: { json_schema?: { schema?: { properties?: Record<string, unknown> } } };
  };
  return j?.response_format?.json_schema?.schema?.properties ?? {};
}

const known = [AGENT_TONE_HZ, CUSTOMER_TONE_HZ, VOICEMAIL_TONE_HZ];

export async function startFakeProviders(): Promise<FakeProviders> {
  const tones = new Map<number, FakeTranscript>([
    [AGENT_TONE_HZ, { language: 'english', segments: AGENT_SEGMENTS }],
    [CUSTOMER_TONE_HZ, { language: 'english', segments: CUSTOMER_SEGMENTS }],
    [VOICEMAIL_TONE_HZ, { language: 'english', segments: VOICEMAIL_SEGMENTS }],
  ]);
  const queues: Record<Route, Step[]> = { transcriptions: [], listen: [], chat: [] };
  const requests: FakeRequest[] = [];
  const fake = { chat: sampleAnalysisAnswer as (req: FakeRequest) => unknown };

  const transcriptFor = (tone: number | null): FakeTranscript | null => {
    if (tone === null) return null;
    const keys = [...new Set([...tones.keys(), ...known])];
    const nearest = keys.reduce((a, b) => (Math.abs(b - tone) < Math.abs(a - tone) ? b : a));
    return Math.abs(nearest - tone) / nearest < 0.1 ? (tones.get(nearest) ?? null) : null;
  };

  const defaults: Record<Route, (r: FakeRequest) => Promise<unknown>> = {
    async transcriptions(r) {
      const t = transcriptFor(r.tones?.[0] ?? null);
      const segments = t?.segments ?? [];
      return {
        task: 'transcribe',
        language: t?.language ?? 'english',
        duration: segments.at(-1)?.end ?? 0,
        text: segments.map((s) => s.text).join(' '),
        segments: segments.map((s, id) => ({ id, start: s.start, end: s.end, text: ` ${s.text}` })),
        // asked for word times: each segment's words spread evenly over it, as Whisper's list beside the segments
        ...(r.fields?.['timestamp_granularities[]']?.split(',').includes('word')
          ? { words: segments.flatMap((s) => fakeWords(s.text, s.start, s.end)) }
          : {}),
      };
    },
    async listen(r) {
      const multi = r.query.multichannel === 'true';
      const channelTones = multi ? (r.tones ?? []) : [r.tones?.[0] ?? null];
      const channels = channelTones.map((tone) => {
        const t = transcriptFor(tone);
        return {
          detected_language: t ? deepgramLanguage(t.language) : undefined,
          alternatives: [
            {
              transcript: t?.segments.map((s) => s.text).join(' ') ?? '',
              confidence: 0.99,
              words: (t?.segments ?? []).flatMap((s) => deepgramWords(s.text, s.start, s.end)),
            },
          ],
        };
      });
      const utterances = channelTones.flatMap((tone, channel) =>
        (transcriptFor(tone)?.segments ?? []).map((s) => ({
          start: s.start,
          end: s.end,
          confidence: 0.99,
          channel,
          transcript: s.text,
          words: deepgramWords(s.text, s.start, s.end),
          speaker: multi ? 0 : (s.voice ?? 0),
          id: `${channel}-${s.start}`,
        })),
      );
      utterances.sort((a, b) => a.start - b.start);
      return {
        metadata: { request_id: 'fake', channels: channels.length },
        results: { channels, utterances },
      };
    },
    async chat(r) {
      return completion(fake.chat(r));
    },
  };

  const pending = new Set<() => void>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const u = new URL(req.url ?? '/', 'http://fake');
      const route: Route | 'unknown' =
        u.pathname === '/v1/audio/transcriptions'
          ? 'transcriptions'
          : u.pathname === '/v1/listen'
            ? 'listen'
            : u.pathname === '/v1/chat/completions'
              ? 'chat'
              : 'unknown';
      const r: FakeRequest = {
        route,
        method: req.method ?? '',
        path: u.pathname,
        query: Object.fromEntries(u.searchParams),
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(r);
      try {
        if (route === 'unknown' || req.method !== 'POST') {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not found"}}');
          return;
        }
        await readRequest(r);
        const step = queues[route].shift() ?? 'default';
        if (step !== 'default' && 'hang' in step) {
          pending.add(() => res.destroy());
          return;
        }
        if (step !== 'default' && 'status' in step) {
          const text = typeof step.body === 'string' ? step.body : JSON.stringify(step.body ?? {});
          res.writeHead(step.status, { 'content-type': 'application/json', ...step.headers }).end(text);
          return;
        }
        const body =
          step === 'default'
            ? await defaults[route](r)
            : 'content' in step
              ? completion(step.content)
              : step.ok;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      } catch (err) {
        res
          .writeHead(500, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: String(err) } }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    deepgramBaseUrl: url,
    requests,
    tones,
    get chat() {
      return fake.chat;
    },
    set chat(f) {
      fake.chat = f;
    },
    script(route, ...steps) {
      queues[route].push(...steps);
    },
    of(route) {
      return requests.filter((r) => r.route === route);
    },
    async close() {
      for (const end of pending) end();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A chat completion whose first choice's message content is `content` (objects are JSON-encoded). */
export function completion(content: unknown): Record<string, unknown> {
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_781_000_000,
    model: 'fake',
    choices: [
      {
        index: 0,
        finish_reason: 'stop',
        message: {
          role: 'assistant',
          content: typeof content === 'string' ? content : JSON.stringify(content),
        },
      },
    ],
  };
}

async function readRequest(r: FakeRequest): Promise<void> {
  const type = String(r.headers['content-type'] ?? '');
  if (r.route === 'chat') {
    r.json = JSON.parse(r.body.toString('utf8'));
    return;
  }
  if (r.route === 'transcriptions') {
    const form = await new Response(new Uint8Array(r.body), { headers: { 'content-type': type } }).formData();
    r.fields = {};
    const entries: Array<[string, FormDataEntryValue]> = [];
    form.forEach((v, k) => {
      entries.push([k, v]);
    });
    for (const [k, v] of entries) {
      // a repeated field (timestamp_granularities[]) reads "segment,word"
      if (typeof v === 'string') r.fields[k] = k in r.fields ? `${r.fields[k]},${v}` : v;
      else r.file = { filename: v.name, type: v.type, bytes: Buffer.from(await v.arrayBuffer()) };
    }
    if (r.file) r.tones = await tonesOf(r.file.bytes);
    return;
  }
  r.tones = await tonesOf(r.body);
}

/** The tone of each channel of a WAV (16-bit PCM) or MP3. */
async function tonesOf(bytes: Buffer): Promise<(number | null)[]> {
  if (bytes.subarray(0, 4).toString('ascii') === 'RIFF') {
    const rate = bytes.readUInt32LE(24);
    const channels = bytes.readUInt16LE(22);
    const data = bytes.subarray(44);
    const n = Math.floor(data.length / 2 / channels);
    return Array.from({ length: channels }, (_, ch) => {
      const s = new Float32Array(n);
      for (let i = 0; i < n; i++) s[i] = data.readInt16LE((i * channels + ch) * 2) / 32768;
      return toneOf(s, rate);
    });
  }
  const decoder = new MPEGDecoder();
  await decoder.ready;
  try {
    const d = decoder.decode(new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    if (d.samplesDecoded === 0) return [null];
    return d.channelData.map((c) => toneOf(c, d.sampleRate));
  } finally {
    decoder.free();
  }
}

/** "english" → "en" for the few languages the fakes use; two-letter codes pass. */
function deepgramLanguage(l: string): string {
  const names: Record<string, string> = { english: 'en', german: 'de', french: 'fr', spanish: 'es' };
  return names[l.toLowerCase()] ?? l;
}

/** A segment's words spread evenly over its time: the shape of verbose_json's `words`. */
export function fakeWords(
  text: string,
  start: number,
  end: number,
): { word: string; start: number; end: number }[] {
  const words = text.split(/\s+/).filter(Boolean);
  const step = (end - start) / Math.max(1, words.length);
  return words.map((word, i) => ({ word, start: start + i * step, end: start + (i + 1) * step }));
}

/** Deepgram's words of an utterance, spread evenly over its time: `word` bare and lower-cased, `punctuated_word` as written. */
export function deepgramWords(text: string, start: number, end: number) {
  return fakeWords(text, start, end).map((w) => ({
    word: w.word.toLowerCase().replace(/^[\p{P}]+|[\p{P}]+$/gu, ''),
    start: w.start,
    end: w.end,
    confidence: 0.99,
    punctuated_word: w.word,
  }));
}
