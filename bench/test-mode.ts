/**
 * npm run bench:test-mode — the time from `POST /api/v1/calls` with a test key to the verified
 * `call.completed` at the integrator's receiver (issue 17: median ≤ 10 s on a quiet machine).
 *
 * Two processes: the service (bench/test-mode-service.ts, forked: the public app on a loopback
 * socket and the worker role on a fresh PostgreSQL database, system clock) and this one, which plays
 * the integrator — a test key (write.calls, read.calls), a test webhook subscription to a receiver
 * here on 127.0.0.1 that verifies every delivery with the SDK's verifyWebhook, and BENCH_CALLS
 * sequential POST /api/v1/calls to the magic number +12025550000 (the simulated carrier's connected
 * 30 s conversation: recorded, transcribed from its script, analysed, completed). Each call is
 * placed once the previous one's call.completed arrived.
 *
 * Printed: per call the wall time from sending the POST to the receiver holding the verified
 * call.completed; median, p90, max; the arrival of each event type of the call (median, from the
 * POST); where the time goes — the simulated carrier's deliberate pacing (its last step, the
 * recording callback, is due 5.5 s after the call starts: domain/simulated-call.ts) against the
 * service's own processing (POST → simulated call started; recording step due → call.completed
 * written; written → delivered); a same-run baseline: the bare POST /calls answer time and the
 * round trip of a webhook.test (enqueued as the web app's Test button does → verified at the
 * receiver); the load average at start and end.
 *
 * BENCH_CALLS (default 10), BENCH_NUMBER (default +12025550000), BENCH_DATABASE_URL (default
 * postgres://postgres@127.0.0.1:5432/test; a fresh database is created and dropped).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { verifyWebhook } from '../sdk/src/webhooks/verify.ts';
import { cpuMsOf, forkService } from './service-process.ts';

const CALLS = Number(process.env.BENCH_CALLS) || 10;
const NUMBER = process.env.BENCH_NUMBER ?? '+12025550000';
/** When the simulated 0000 call's last carrier step (the completed recording) falls due, s after its start. */
const PACING_S = 5.5;
/** When its connected-status step (which writes call.outbound.attempted) falls due. */
const ATTEMPTED_S = 5;
const log = (s: string) => process.stdout.write(`${s}\n`);
const la = () =>
  loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

interface Arrival {
  type: string;
  callId: string | null;
  eventId: string;
  at: number;
}

/** A signed-webhook receiver on loopback: every delivery verified (SDK) before it counts. */
async function startReceiver() {
  let secret = '';
  const arrivals: Arrival[] = [];
  const waiters: { match: (a: Arrival) => boolean; resolve: (a: Arrival) => void }[] = [];
  let rejected = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let e: ReturnType<typeof verifyWebhook>;
      try {
        e = verifyWebhook(body, req.headers, secret);
      } catch {
        rejected++;
        res.writeHead(400).end();
        return;
      }
      res.writeHead(200).end();
      const a: Arrival = {
        type: e.event_type,
        callId: (e.data as { call_id?: string }).call_id ?? null,
        eventId: e.event_id,
        at: Date.now(),
      };
      arrivals.push(a);
      for (const w of waiters.splice(0)) {
        if (w.match(a)) w.resolve(a);
        else waiters.push(w);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    arrivals,
    rejected: () => rejected,
    setSecret(s: string) {
      secret = s;
    },
    /** The first arrival (past or future) that matches. */
    waitFor(match: (a: Arrival) => boolean, timeoutMs = 60_000): Promise<Arrival> {
      const seen = arrivals.find(match);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () =>
            reject(
              new Error(
                `no matching delivery in ${timeoutMs / 1000} s (${arrivals.length} verified: ${arrivals.map((a) => a.type).join(', ') || 'none'}; ${rejected} rejected)`,
              ),
            ),
          timeoutMs,
        );
        waiters.push({
          match,
          resolve: (a) => {
            clearTimeout(timer);
            resolve(a);
          },
        });
      });
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) => {
  const s = sorted(xs);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? Number.NaN;
};
const median = (xs: number[]) => {
  const s = sorted(xs);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const msf = (ms: number) => `${ms.toFixed(0)} ms`;

async function main() {
  const loadStart = la();
  const receiver = await startReceiver();
  // the per-minute cap of POST /calls (default 10) is the abuse bound, not what is measured
  const service = await forkService(new URL('./test-mode-service.ts', import.meta.url), {
    PLACE_CALLS_PER_MINUTE: '10000',
  });
  try {
    const { port, apiKey, secret } = await service.call<{ port: number; apiKey: string; secret: string }>(
      'setup',
      { receiverUrl: receiver.url },
    );
    receiver.setSecret(secret);
    const base = `http://127.0.0.1:${port}/api/v1`;

    const post = async () => {
      const t0 = Date.now();
      const res = await fetch(`${base}/calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ customer_phone: NUMBER }),
      });
      const body = (await res.json()) as { data?: { call_id?: string } };
      if (res.status !== 201 || !body.data?.call_id) {
        throw new Error(`POST /calls answered ${res.status}: ${JSON.stringify(body)}`);
      }
      return { t0, answered: Date.now(), id: body.data.call_id };
    };
    const ping = async () => {
      const { eventId, sentAt } = await service.call<{ eventId: string; sentAt: number }>('ping');
      const a = await receiver.waitFor((x) => x.eventId === eventId);
      return a.at - sentAt;
    };

    // warm-up (not counted): one call end to end and one webhook.test, so the first measured call
    // does not pay for the first-use costs (JIT, connections, the speech synthesis module's load);
    // every call places the same script, so the measured calls' MP3 comes from the carrier's cache
    // (simulated/audio.ts cachedRecordings), synthesised once by the warm-up
    const warm = await post();
    await receiver.waitFor((a) => a.callId === warm.id && a.type === 'call.completed');
    await ping();

    const calls: { id: string; t0: number; answerMs: number; totalMs: number }[] = [];
    const pings: number[] = [];
    const cpu0 = cpuMsOf(service.pid);
    for (let i = 0; i < CALLS; i++) {
      pings.push(await ping());
      const p = await post();
      const done = await receiver.waitFor((a) => a.callId === p.id && a.type === 'call.completed');
      calls.push({ id: p.id, t0: p.t0, answerMs: p.answered - p.t0, totalMs: done.at - p.t0 });
      log(
        `call ${String(i + 1).padStart(2)}: POST answered ${msf(p.answered - p.t0).padStart(7)}, call.completed verified after ${sec(done.at - p.t0)}`,
      );
    }
    const cpuMs = cpuMsOf(service.pid) - cpu0;
    // the last events of the last call (call.followup_email.drafted may trail call.completed)
    await new Promise((r) => setTimeout(r, 1000));
    const loadEnd = la();

    const tl = await service.call<{
      synthesisMs: number;
      recordingPut: Record<string, number | null>;
      started: Record<string, number>;
      events: { callId: string; type: string; at: number }[];
    }>('timeline', { callIds: calls.map((c) => c.id) });

    const totals = calls.map((c) => c.totalMs);
    log('');
    log(`test mode, POST /api/v1/calls ${NUMBER} → verified call.completed at a loopback receiver`);
    log(`  ${CALLS} sequential calls (after 1 warm-up), PostgreSQL, service in its own process`);
    log(`  load average at start ${loadStart}, at end ${loadEnd}`);
    log(
      `  POST → call.completed: median ${sec(median(totals))}, p90 ${sec(pct(totals, 90))}, max ${sec(Math.max(...totals))}, min ${sec(Math.min(...totals))}`,
    );

    log(
      '  arrival at the receiver, from the POST (median over the calls; server-side created_at beside it):',
    );
    const types = [
      'call.outbound.attempted',
      'call.recording.ready',
      'call.transcribed',
      'call.completed',
      'call.followup_email.drafted',
    ];
    for (const type of types) {
      const arrived: number[] = [];
      const written: number[] = [];
      for (const c of calls) {
        const a = receiver.arrivals.find((x) => x.callId === c.id && x.type === type);
        if (a) arrived.push(a.at - c.t0);
        const w = tl.events.find((x) => x.callId === c.id && x.type === type);
        if (w) written.push(w.at - c.t0);
      }
      if (arrived.length === 0 && written.length === 0) continue;
      log(
        `    ${type.padEnd(28)} arrived ${arrived.length ? sec(median(arrived)) : '—'}  (written ${written.length ? sec(median(written)) : '—'}, ${arrived.length}/${calls.length} calls)`,
      );
    }

    // pacing vs processing, per call then medians
    const startLag: number[] = [];
    const pickupLag: number[] = [];
    const toReady: number[] = [];
    const toPut: number[] = [];
    const putToReady: number[] = [];
    const readyToCompleted: number[] = [];
    const afterPacing: number[] = [];
    const deliveryLag: number[] = [];
    for (const c of calls) {
      const started = tl.started[c.id];
      const completedAt = tl.events.find((x) => x.callId === c.id && x.type === 'call.completed')?.at;
      const arrived = receiver.arrivals.find((x) => x.callId === c.id && x.type === 'call.completed')?.at;
      if (started === undefined || completedAt === undefined || arrived === undefined) continue;
      startLag.push(started - c.t0);
      const written = (type: string) => tl.events.find((x) => x.callId === c.id && x.type === type)?.at;
      const attempted = written('call.outbound.attempted');
      const ready = written('call.recording.ready');
      if (attempted !== undefined) pickupLag.push(attempted - (started + ATTEMPTED_S * 1000));
      if (ready !== undefined) {
        toReady.push(ready - (started + PACING_S * 1000));
        const put = tl.recordingPut[c.id];
        if (put) {
          toPut.push(put - (started + PACING_S * 1000));
          putToReady.push(ready - put);
        }
        readyToCompleted.push(completedAt - ready);
      }
      afterPacing.push(completedAt - (started + PACING_S * 1000));
      deliveryLag.push(arrived - completedAt);
    }
    const med = median(totals);
    log('  where the time goes (medians):');
    log(`    POST sent → simulated call started       ${msf(median(startLag)).padStart(8)}`);
    log(
      `    carrier pacing (recording step due at)   ${msf(PACING_S * 1000).padStart(8)}  (${((PACING_S * 1000 * 100) / med).toFixed(0)} % of the median)`,
    );
    log(
      `    step due → call.completed written        ${msf(median(afterPacing)).padStart(8)}  (step pickup, recording synthesis + store, download, transcribe, analyse, complete)`,
    );
    log(
      `      of which: waiting job picked up late   ${msf(median(pickupLag)).padStart(8)}  (call.outbound.attempted written − its step, due at ${ATTEMPTED_S} s; the runner polls waiting jobs every second)`,
    );
    log(
      `      step due → call.recording.ready written ${msf(median(toReady)).padStart(6)}  (pickup, the MP3 synthesised and stored, the download stage)`,
    );
    log(
      `        step due → MP3 in the store          ${msf(median(toPut)).padStart(6)}  (pickup of the waiting job, then the MP3 from the cache; synthesised anew: ${msf(tl.synthesisMs)} timed alone after the run)`,
    );
    log(
      `        MP3 stored → call.recording.ready     ${msf(median(putToReady)).padStart(6)}  (the download stage)`,
    );
    log(
      `      call.recording.ready → call.completed    ${msf(median(readyToCompleted)).padStart(6)}  (transcribe from the script, analyse, complete)`,
    );
    log(`    call.completed written → verified         ${msf(median(deliveryLag)).padStart(8)}`);

    const answers = calls.map((c) => c.answerMs);
    log('  same-run baseline:');
    log(
      `    bare POST /calls answer                  median ${msf(median(answers))}, p90 ${msf(pct(answers, 90))}, max ${msf(Math.max(...answers))}`,
    );
    log(
      `    webhook.test enqueued → verified          median ${msf(median(pings))}, p90 ${msf(pct(pings, 90))}, max ${msf(Math.max(...pings))}`,
    );
    log(
      `  service process CPU: ${msf(cpuMs / CALLS)} per call (${(cpuMs / 1000).toFixed(1)} s over the ${CALLS} calls; PostgreSQL's not counted)`,
    );
    if (receiver.rejected() > 0) log(`  ${receiver.rejected()} deliveries failed verification`);
  } finally {
    await service.close();
    await receiver.close();
  }
}

await main();
