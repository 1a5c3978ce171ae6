/**
 * The service side of `npm run bench:test-mode` (bench/test-mode.ts forks it): the public app on a
 * real loopback socket and the worker role (processing jobs, webhook deliveries, periodic jobs) as
 * `callcap serve` starts them (src/server.ts: startWorkers with its default poll interval), on a fresh
 * PostgreSQL database (BENCH_DATABASE_URL), with the system clock — so the simulated carrier's steps
 * fall due in real time. The receiver runs in the driver's process.
 *
 * Driven over IPC (process.send): the driver sends {cmd, …}; every command answers {reply: cmd, …}.
 *   setup {receiverUrl} -> { port, apiKey, secret }   a US organization without telephony, a test
 *                                                      key (write.calls, read.calls) and a test
 *                                                      subscription to the receiver
 *   ping                -> { eventId, sentAt }         one webhook.test to the subscription, as the
 *                                                      web app's Test button enqueues it
 *   timeline {callIds}  -> { started, events,         per call: the simulated call's start, each
 *                            recordingPut,             event's created_at, when its MP3 reached the
 *                            synthesisMs }             store (ms since the epoch); and the MP3's
 *                                                      generation timed alone (median of 3, now)
 *   close                                             stops everything and exits
 * (the protocol and the process: ./service-process.ts)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Command, serveCommands, serviceEnv } from './service-process.ts';

const PG = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
process.env.TEST_DATABASE_URL = PG;

const { systemClock } = await import('../src/clock.ts');
const { captureProvidersFromConfig } = await import('../src/capture/jobs/providers.ts');
const { tenantScope } = await import('../src/domain/tenant.ts');
const { parseScript, timeline } = await import('../src/domain/simulated-call.ts');
const { synthesiseRecording } = await import('../src/capture/telephony/simulated/audio.ts');
const { startWorkers } = await import('../src/worker.ts');
const { buildPublicApp } = await import('../src/http/public/app.ts');
const { enqueueTestEvent } = await import('../src/webhooks/subscriptions/test-event.ts');
const { createTestDb } = await import('../test/helpers/db.ts');
const { testDeps } = await import('../test/helpers/deps.ts');
const { insertApiKey, insertOrg } = await import('../test/helpers/fixtures.ts');
const { insertSubscription } = await import('../test/helpers/webhooks.ts');

const db = await createTestDb();
const dataDir = await mkdtemp(join(tmpdir(), 'callcap-bench-tm-'));
const base = testDeps(db, dataDir, serviceEnv());
// as the product wires them, but on the system clock (testDeps' fake clock would never move)
// bench only: when each simulated recording reached the store (its MP3 just generated), by call id
const recordingPut = new Map<string, number>();
const store: typeof base.store = Object.assign(Object.create(base.store) as typeof base.store, {
  put: (key: string, body: Parameters<typeof base.store.put>[1]) => {
    const m = /^simulated\/[^/]+\/([^/]+)\.mp3$/.exec(key);
    if (m) recordingPut.set(m[1]!, Date.now());
    return base.store.put(key, body);
  },
});
const deps = {
  ...base,
  store,
  clock: systemClock,
  capture: captureProvidersFromConfig(base.config, systemClock),
};
const app = await buildPublicApp(deps);
await app.ready();
await app.listen({ port: 0, host: '127.0.0.1' });
const stopWorkers = await startWorkers(deps);

let org: { orgId: string; subscriptionId: string; secretId: string } | null = null;

async function handle(m: Command): Promise<Record<string, unknown>> {
  switch (m.cmd) {
    case 'setup': {
      // as test/helpers/simulated.ts simOrg: no telephony account, no service number
      const { orgId, ownerId } = await insertOrg(db, { country: 'US' });
      const { key } = await insertApiKey(db, {
        orgId,
        userId: ownerId,
        environment: 'test',
        scopes: ['read.calls', 'write.calls'],
        rateLimit: 100_000,
      });
      const sub = await insertSubscription(deps, {
        orgId,
        url: String(m.receiverUrl),
        environment: 'test',
        at: new Date(),
      });
      org = { orgId, subscriptionId: sub.subscriptionId, secretId: sub.secretId };
      const { port } = app.server.address() as { port: number };
      return { port, apiKey: key, secret: sub.secret };
    }
    case 'ping': {
      const o = org!;
      const sentAt = Date.now();
      const r = await db.transaction((tx) =>
        enqueueTestEvent(tx, {
          scope: tenantScope(o.orgId, 'test'),
          subscriptionId: o.subscriptionId,
          secretId: o.secretId,
          now: new Date(sentAt),
          publicBaseUrl: deps.config.publicBaseUrl,
        }),
      );
      return { eventId: r.event_id, sentAt };
    }
    case 'timeline': {
      const ids = m.callIds as string[];
      const sims = await db.query<{ call_id: string; started_at: Date }>(
        'SELECT call_id, started_at FROM simulated_calls WHERE call_id = ANY($1)',
        [ids],
      );
      const events = await db.query<{ call_id: string; event_type: string; created_at: Date }>(
        'SELECT call_id, event_type, created_at FROM events WHERE call_id = ANY($1)',
        [ids],
      );
      // the recording generation alone, for the same script, three times now (median), past the cache
      const script = await db.query<{ script: string; target_seconds: number | null }>(
        'SELECT script, target_seconds FROM simulated_calls WHERE call_id = $1',
        [ids[0]],
      );
      const turns = timeline(
        parseScript(script.rows[0]!.script) ?? [],
        script.rows[0]!.target_seconds ?? undefined,
      );
      const synth: number[] = [];
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        await synthesiseRecording(turns, 2, 'outbound');
        synth.push(performance.now() - t0);
      }
      return {
        synthesisMs: synth.sort((a, b) => a - b)[1],
        recordingPut: Object.fromEntries(ids.map((id) => [id, recordingPut.get(id) ?? null])),
        started: Object.fromEntries(sims.rows.map((r) => [r.call_id, new Date(r.started_at).getTime()])),
        events: events.rows.map((r) => ({
          callId: r.call_id,
          type: r.event_type,
          at: new Date(r.created_at).getTime(),
        })),
      };
    }
    default:
      throw new Error(`unknown command ${m.cmd}`);
  }
}

serveCommands(handle, async () => {
  await stopWorkers();
  await app.close();
  await db.close();
  await rm(dataDir, { recursive: true, force: true });
});
