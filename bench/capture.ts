/**
 * npm run bench:capture — inbound calls per second from Twilio's recording callback to
 * call.completed enqueued, beside a baseline measured in the same run: the same number of bare
 * INSERTs of a call plus its outbox row. And the memory of the recording download: RSS while ten
 * 50 MB recordings stream from (fake) Twilio into the blob store at once.
 *
 * Everything on loopback: the service's public app on a real socket, the fake Twilio of the tests
 * (test/helpers/fake-twilio.ts: signed callbacks, recordings served over REST), an instant
 * speech-to-text server speaking the openai protocol (answers at once, after reading the upload),
 * the rules analyzer, PostgreSQL from BENCH_DATABASE_URL (a fresh database per run, dropped after).
 *
 * BENCH_CALLS (default 200), BENCH_CONCURRENCY (default 10).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';

const PG = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
process.env.TEST_DATABASE_URL = PG;

const { newId } = await import('../src/ids.ts');
const { startWorkers } = await import('../src/worker.ts');
const { connectOrg, startTelephony } = await import('../test/helpers/telephony.ts');
const { INBOUND_TONES, stereoMp3 } = await import('../test/helpers/stereo-mp3.ts');
const { mp3Frames } = await import('../test/helpers/mp3.ts');

const CALLS = Number(process.env.BENCH_CALLS) || 200;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY) || 10;
const log = (s: string) => process.stdout.write(`${s}\n`);

/** An openai-compatible /audio/transcriptions that answers at once with one short segment. */
async function instantTranscriber() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          text: 'Hello, I need a plumber tomorrow morning.',
          language: 'english',
          duration: 3,
          segments: [{ id: 0, start: 0, end: 2.5, text: ' Hello, I need a plumber tomorrow morning.' }],
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function pool<T>(items: T[], n: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}

async function main() {
  const stt = await instantTranscriber();
  const t = await startTelephony({
    TRANSCRIPTION_PROVIDER: 'openai',
    TRANSCRIPTION_BASE_URL: stt.url,
    TRANSCRIPTION_API_KEY: 'bench',
    PROCESSING_CONCURRENCY: String(CONCURRENCY),
  });
  const stopWorkers = await startWorkers(t.h.deps, { jobsPollIntervalMs: 50 });
  try {
    const db = t.h.db;
    const org = await connectOrg(t, { ringTo: '+14155550100' });
    const audio = stereoMp3({ seconds: 5, ...INBOUND_TONES });
    log(`Capture benchmark — ${new Date().toISOString()} — ${CALLS} calls, concurrency ${CONCURRENCY}`);

    // Baseline: a call row and its outbox event, bare INSERTs in one transaction each.
    const t0 = performance.now();
    await pool(
      Array.from({ length: CALLS }, (_, i) => i),
      CONCURRENCY,
      async () => {
        await db.transaction(async (tx) => {
          const id = newId();
          await tx.query(
            `INSERT INTO calls (id, organization_id, direction, caller_phone, created_at, updated_at)
             VALUES ($1, $2, 'inbound', '+14155552671', now(), now())`,
            [id, org.orgId],
          );
          await tx.query(
            `INSERT INTO events (id, organization_id, event_type, resource_id, call_id, body, created_at)
             VALUES ($1, $2, 'call.completed', $3, $3, '{}', now())`,
            [newId(), org.orgId, id],
          );
        });
      },
    );
    const baselineSeconds = (performance.now() - t0) / 1000;
    const baseline = CALLS / baselineSeconds;

    // The calls ring in (untimed): Voice URL answered with a <Dial> of the ring-to number.
    const calls = [];
    for (let i = 0; i < CALLS; i++) {
      calls.push(
        await t.fake.inboundCall({
          from: `+1415555${String(3000 + i).padStart(4, '0')}`,
          to: org.number,
          account: org.account,
        }),
      );
    }
    // Timed: the dialled number answers and hangs up — the recording callback, then the download,
    // transcription, analysis and completion as durable jobs, until every call.completed is queued.
    const completed = async () =>
      Number(
        (
          await db.query<{ n: string }>(
            `SELECT count(*) AS n FROM events WHERE organization_id = $1 AND event_type = 'call.completed'
               AND call_id IN (SELECT id FROM calls WHERE telephony_provider = 'twilio')`,
            [org.orgId],
          )
        ).rows[0]?.n,
      );
    const t1 = performance.now();
    await pool(calls, CONCURRENCY, async (call) => {
      await call.answerDial({ recording: audio });
    });
    for (;;) {
      const n = await completed();
      if (n >= CALLS) break;
      if (performance.now() - t1 > 600_000)
        throw new Error(`only ${n} of ${CALLS} calls completed in 10 minutes`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const captureSeconds = (performance.now() - t1) / 1000;
    const rate = CALLS / captureSeconds;

    log('');
    log('scenario                                                   calls/s   vs base');
    log(
      `baseline: INSERT call + outbox row                         ${baseline.toFixed(0).padStart(7)}     100 %`,
    );
    log(
      `recording callback -> call.completed enqueued               ${rate.toFixed(1).padStart(7)}   ${((rate / baseline) * 100).toFixed(1).padStart(5)} %   (target >= 30 %)`,
    );
  } finally {
    await stopWorkers();
    await t.close();
    await stt.close();
  }
  await memory();
}

/** Ten 50 MB recordings downloaded at once: RSS sampled every 20 ms, growth over the start. */
async function memory() {
  const t = await startTelephony();
  try {
    const org = await connectOrg(t, { ringTo: '+14155550100' });
    const frames = Math.ceil((50 * 1024 * 1024) / 417);
    const chunk = mp3Frames(2400); // ~1 MB of frames, repeated
    const big = () => {
      let left = frames;
      return Readable.from(
        (function* () {
          while (left > 0) {
            const n = Math.min(left, 2400);
            left -= n;
            yield n === 2400 ? chunk : chunk.subarray(0, n * 417);
          }
        })(),
      );
    };
    const calls = [];
    for (let i = 0; i < 10; i++) {
      calls.push(
        await t.fake.inboundCall({
          from: `+1415555${String(4000 + i).padStart(4, '0')}`,
          to: org.number,
          account: org.account,
        }),
      );
    }
    global.gc?.();
    const start = process.memoryUsage().rss;
    let peak = start;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 20);
    const t0 = performance.now();
    try {
      await Promise.all(calls.map((c) => c.answerDial({ recording: big })));
      for (;;) {
        const { rows } = await t.h.db.query<{ n: string }>(
          `SELECT count(*) AS n FROM calls WHERE organization_id = $1 AND recording_state = 'available'`,
          [org.orgId],
        );
        if (Number(rows[0]?.n) >= 10) break;
        if (performance.now() - t0 > 600_000) throw new Error('downloads did not finish in 10 minutes');
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      clearInterval(sampler);
    }
    const growth = (peak - start) / 1048576;
    log(
      `memory: ten ${((frames * 417) / 1048576).toFixed(0)} MB recordings streamed at once in ${((performance.now() - t0) / 1000).toFixed(1)} s; RSS ${Math.round(start / 1048576)} -> peak ${Math.round(peak / 1048576)} MB (growth ${growth.toFixed(0)} MB, target <= 50 MB)`,
    );
  } finally {
    await t.close();
  }
}

await main();
