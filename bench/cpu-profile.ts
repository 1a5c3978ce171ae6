/**
 * Summarises a V8 CPU profile (node:inspector Profiler) of the service's main thread by capture
 * stage, for bench/capture.ts. Each sample is classified by its stack:
 *   1. the MP3 decoder (mpg123-decoder, its WebAssembly and its common module) on the stack: "decode";
 *   2. else the innermost frame of the service's own code (src/…, looking through the src/db query
 *      wrapper): the stage that file belongs to (the SQL a stage sends — pg's query serialisation,
 *      the socket write — counts to that stage);
 *   3. else (no service frame on the stack: a reply being parsed, a socket callback) the library the
 *      leaf is in: pg replies, HTTP client replies/bodies (undici, or node:http with a client frame on
 *      the stack), fastify's request parsing, or the runtime.
 * Idle samples are left out; the shares are of the busy samples. A sample's time is the gap to the
 * next one, so the profiler's own interval drift does not bias a category.
 */

export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

export interface StageRow {
  stage: string;
  /** share of the busy (non-idle) sampled time, 0..1 */
  share: number;
}

export interface ProfileSummary {
  stages: StageRow[];
  /** the hottest functions by self time, "file:function" with their share, for reading a run */
  top: StageRow[];
}

const DECODE = 'transcribe: MP3 decode (mpg123 WebAssembly)';
const DB_CLIENT = 'database client: queries sent outside a stage (src/db, pg)';
const HTTP_CLIENT = 'HTTP client: replies, bodies (undici, node:http; no service frame)';
const HTTP_SERVER = 'HTTP server: parsing, routing (no service frame)';

/** The service's files, by the stage they run in (first match wins). */
const SRC: [RegExp, string][] = [
  // decodeInto calls mpg123's WebAssembly itself (no mpg123-decoder frame on the stack)
  [/src\/recordings\/decoders\.ts/, DECODE],
  [/src\/recordings\/talk-activity\.ts/, 'transcribe: talk metrics (voice activity levels)'],
  [/src\/recordings\/silence\.ts/, 'transcribe: redaction silencing (re-encode)'],
  [/src\/capture\/providers\/wav\.ts/, 'transcribe: PCM + WAV writing'],
  // the main thread's side of the split in its worker thread: the recording's chunks posted to it
  [/src\/capture\/providers\/split-(thread|worker)\.ts/, 'transcribe: the split handed to its thread'],
  [/src\/recordings\/channels\.ts/, 'transcribe: channel count (music-metadata)'],
  [
    /src\/capture\/providers\/(openai-transcription|deepgram|http|transcript)\.ts|src\/capture\/jobs\/stages\/transcribe\.ts/,
    'transcribe: speech-to-text requests + transcript',
  ],
  [/src\/recordings\/measure\.ts/, 'download: duration measurement (music-metadata)'],
  [
    /src\/capture\/(recording-ingest|telephony\/twilio\/(download|rest))\.ts|src\/recordings\/|src\/capture\/telephony\/accounts\.ts/,
    'download: fetch, blob write, stored-recording transaction',
  ],
  [
    /src\/capture\/(analyzer|text-rules|language|followup-draft|transcript-text)\.ts|src\/capture\/providers\/(openai-analysis|analysis-schema|index)\.ts|src\/capture\/jobs\/stages\/analyse\.ts|src\/domain\/analysis/,
    'analyse: analysis (rules analyzer)',
  ],
  [
    /src\/capture\/(completion|pipeline|trackers|call-record)\.ts|src\/webhooks\/outbox\/|src\/capture\/jobs\/stages\/complete\.ts|src\/domain\/call-view/,
    'completion: analysis stored, events emitted (outbox)',
  ],
  [/src\/capture\/jobs\//, 'job runner: claims, leases, outcome transactions'],
  [/src\/webhooks\//, 'webhook delivery worker (not in the timed path)'],
  [/src\/(http|capture\/telephony)\//, 'telephony callbacks: routes, signature, TwiML'],
  [/src\//, 'other service code'],
];

/** Libraries, for samples with no service frame on the stack. */
const LIBS: [RegExp, string][] = [
  [/mpg123-decoder|@wasm-audio-decoders/, DECODE],
  [/node_modules\/pg(-protocol|-pool|-types|-connection-string)?\//, 'pg client: replies (no service frame)'],
  [/undici|_http_client|_http_agent/, HTTP_CLIENT],
  [
    /fastify|find-my-way|avvio|light-my-request|_http_server|_http_common|_http_incoming|_http_outgoing/,
    HTTP_SERVER,
  ],
  [/music-metadata|strtok3|token-types|peek-readable/, 'music-metadata (no service frame)'],
];

export function summariseProfile(profile: CpuProfile): ProfileSummary {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const cache = new Map<number, string | null>();

  const classify = (id: number): string | null => {
    const hit = cache.get(id);
    if (hit !== undefined) return hit;
    const leaf = byId.get(id)!.callFrame;
    let out: string | null;
    if (leaf.functionName === '(idle)' || leaf.functionName === '(root)') out = null;
    else if (leaf.functionName === '(garbage collector)') out = 'garbage collection';
    else if (leaf.functionName === '(program)') out = 'runtime: native (event loop, I/O, profiler)';
    else {
      let lib: string | null = null;
      let src: string | null = null;
      let client = false;
      for (let at: number | undefined = id; at !== undefined && !src; at = parent.get(at)) {
        const url = byId.get(at)!.callFrame.url;
        if (!url) continue;
        // node:http's parser and messages serve both sides: a client's frame below says which
        if (/_http_client|_http_agent/.test(url)) client = true;
        lib ??= LIBS.find(([re]) => re.test(url))?.[1] ?? null;
        // src/db is the query wrapper every stage calls through: the stage above it gets the sample
        // src/capture/http-client.ts is the client the providers and the Twilio DELETE call through: the caller decides
        if (/\/src\//.test(url) && !/node_modules|\/src\/db\/|\/src\/capture\/http-client\.ts/.test(url))
          src = SRC.find(([re]) => re.test(url))![1];
        else if (/\/src\/db\//.test(url)) lib ??= DB_CLIENT;
        else if (/\/src\/capture\/http-client\.ts/.test(url)) lib ??= HTTP_CLIENT;
      }
      if (client && lib === HTTP_SERVER) lib = HTTP_CLIENT;
      out =
        lib === DECODE ? DECODE : (src ?? lib ?? 'runtime: streams, timers, promises, fs (no service frame)');
    }
    cache.set(id, out);
    return out;
  };

  const stageTime = new Map<string, number>();
  const selfTime = new Map<string, number>();
  let busy = 0;
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    const dt = timeDeltas[i + 1] ?? 0;
    const stage = classify(samples[i]!);
    if (stage === null) continue;
    busy += dt;
    stageTime.set(stage, (stageTime.get(stage) ?? 0) + dt);
    const f = byId.get(samples[i]!)!.callFrame;
    const where = `${f.url.replace(/^.*\/(node_modules|src)\//, '$1/') || '(native)'}:${f.functionName || '(anonymous)'}`;
    selfTime.set(where, (selfTime.get(where) ?? 0) + dt);
  }
  const rows = (m: Map<string, number>) =>
    [...m.entries()]
      .map(([stage, t]) => ({ stage, share: busy > 0 ? t / busy : 0 }))
      .sort((a, b) => b.share - a.share);
  return { stages: rows(stageTime), top: rows(selfTime).slice(0, 25) };
}
