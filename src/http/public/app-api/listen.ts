import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { sessionScope } from '../../../accounts/sessions.ts';
import type { Deps } from '../../../deps.ts';
import { badRequest, notFound, parseInput } from '../../../errors.ts';
import { newId } from '../../../ids.ts';
import { startHeartbeat } from '../../../periodic.ts';
import { kickedRounds, startWakeups } from '../../../queue.ts';
import { DELIVERY_CHANNEL } from '../../../webhooks/delivery/worker.ts';
import {
  ackListenDeliveries,
  claimListenDeliveries,
  endListenSession,
  LISTEN_CLAIM_BATCH,
  LISTEN_GRACE_MS,
  LISTEN_HEARTBEAT_MS,
  leaseOwnerOf,
  openListenSession,
  releaseListenLeases,
  touchListenSession,
  triggerListenEvent,
} from '../../../webhooks/subscriptions/listen.ts';
import { requireSession } from './auth.ts';
import { isIdParam } from './path-id.ts';

/** How often a stream looks for due deliveries when no notification woke it. */
export const LISTEN_POLL_MS = 1000;

const streamQuery = z.object({
  /** comma-separated event types; empty or absent = every type */
  events: z.string().max(2000).optional(),
  /** the subscription_id of a session to resume after a dropped stream */
  resume: z.string().optional(),
});

const ackBody = z.object({
  stream_id: z.string().min(1).max(100),
  acks: z
    .array(
      z.object({
        delivery_id: z.string(),
        status: z.number().int().min(100).max(599).nullable(),
        duration_ms: z.number().int().min(0).max(3_600_000),
      }),
    )
    .min(1)
    .max(500),
});

const triggerBody = z.object({ event_type: z.string().min(1).max(100) });

/** One server-sent event (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export function sseEvent(event: string, data: unknown, id?: string): string {
  // JSON.stringify never emits a raw newline, so the data fits one `data:` line.
  return `${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * `callcap listen` (docs/cli.md, src/webhooks/subscriptions/listen.ts):
 * - GET /listen?events=a,b[&resume=<id>]: a text/event-stream. First `ready` {subscription_id,
 *   stream_id, secret (new sessions only), event_types, grace_seconds}, then one `delivery` event per
 *   delivery {delivery_id, event_id, event_type, headers, body}, `: keep-alive` comments between.
 * - POST /listen/:id/ack {stream_id, acks:[{delivery_id, status, duration_ms}]}: marks them delivered.
 * - DELETE /listen/:id: ends the session now.
 * - POST /listen/trigger {event_type}: a test (or replayed) event to the connected sessions.
 */
export function listenRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    /**
     * The streams of this process share one set of wake-ups (src/queue.ts: a LISTEN on the
     * deliveries channel, re-kicked after a lost connection, and the poll), started with the first
     * stream; each stream's kick runs its claim rounds.
     */
    const kicks = new Set<() => void>();
    const streams = new Set<() => void>();
    let wakeups: Promise<() => Promise<void>> | null = null;
    const ensureWakeups = () => {
      wakeups ??= startWakeups(deps, {
        channel: DELIVERY_CHANNEL,
        pollIntervalMs: LISTEN_POLL_MS,
        kick: () => {
          for (const k of kicks) k();
        },
        pollOnlyOnListenFailure: (err) =>
          deps.log.warn({ err: err.message }, 'listen streams: LISTEN failed; polling only'),
      });
      return wakeups;
    };
    app.addHook('preClose', async () => {
      for (const end of streams) end();
    });
    app.addHook('onClose', async () => {
      if (wakeups) await (await wakeups)();
    });

    app.get('/listen', async (req, reply) => {
      const s = requireSession(req);
      const q = parseInput(streamQuery, req.query, 'query');
      // The stream is for an event-stream client (EventSource and the CLI send this Accept): a plain
      // request is told so rather than left waiting on a response that never ends.
      if (!/(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(String(req.headers.accept ?? ''))) {
        throw badRequest(
          'This is an event stream: send "Accept: text/event-stream" (callcap listen does).',
          'accept',
        );
      }
      if (q.resume !== undefined && !isIdParam(q.resume))
        throw notFound(`No listen session ${q.resume} in your organization.`);
      const events = q.events
        ?.split(',')
        .map((t) => t.trim())
        .filter(Boolean);
      const session = await openListenSession(deps, sessionScope(s), {
        eventTypes: events,
        resumeId: q.resume,
      });
      await ensureWakeups();
      const streamId = newId();
      const owner = leaseOwnerOf(streamId);
      const subscriptionId = session.subscription_id;
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-store',
        'x-accel-buffering': 'no',
        'x-request-id': String(req.id),
      });
      res.write(
        sseEvent('ready', {
          subscription_id: subscriptionId,
          stream_id: streamId,
          secret: session.secret,
          event_types: session.event_types,
          resumed: session.resumed,
          grace_seconds: LISTEN_GRACE_MS / 1000,
        }),
      );
      req.log.info({ subscriptionId, streamId, resumed: session.resumed }, 'listen stream opened');

      let open = true;
      let closed: () => void = () => {};
      const done = new Promise<void>((resolve) => {
        closed = resolve;
      });
      const end = () => {
        if (!open) return;
        open = false;
        res.end();
        closed();
      };
      const failed = (err: Error) => {
        req.log.error({ subscriptionId, err: err.message }, 'listen stream failed');
        end();
      };
      streams.add(end);
      res.on('close', end);

      // Claim rounds (src/queue.ts kickedRounds): each wake-up claims what is due for this session
      // under the stream's lease and sends it; a full batch claims again at once.
      const rounds = kickedRounds({
        round: async () => {
          if (!open) return false;
          const batch = await claimListenDeliveries(deps, { subscriptionId, owner });
          for (const d of batch) if (open) res.write(sseEvent('delivery', d, d.delivery_id));
          return open && batch.length === LISTEN_CLAIM_BATCH;
        },
        onError: failed,
      });
      // The session is seen while the stream is connected (src/periodic.ts startHeartbeat, on the
      // service's clock); a session deleted meanwhile (DELETE, the grace sweep) ends the stream.
      const stopHeartbeat = startHeartbeat(deps.clock, {
        periodMs: LISTEN_HEARTBEAT_MS,
        beat: async () => {
          if (!open) return;
          try {
            if (!(await touchListenSession(deps.db, subscriptionId, deps.clock.now()))) {
              if (open) res.write(sseEvent('end', { reason: 'session_deleted' }));
              end();
            } else if (open) res.write(': keep-alive\n\n');
          } catch (err) {
            failed(err as Error);
          }
        },
      });
      kicks.add(rounds.kick);
      rounds.kick();
      try {
        await done;
      } finally {
        kicks.delete(rounds.kick);
        streams.delete(end);
        await rounds.stop();
        await stopHeartbeat();
        const now = deps.clock.now();
        // Hand back what was sent but not acknowledged, and start the grace period now.
        await releaseListenLeases(deps.db, subscriptionId, owner, now).catch(() => {});
        await touchListenSession(deps.db, subscriptionId, now).catch(() => false);
        req.log.info({ subscriptionId, streamId }, 'listen stream closed');
      }
    });

    app.post<{ Params: { id: string } }>('/listen/:id/ack', async (req) => {
      const s = requireSession(req);
      const body = parseInput(ackBody, req.body ?? {});
      if (!isIdParam(req.params.id))
        throw notFound(`No listen session ${req.params.id} in your organization.`);
      const acks = body.acks.filter((a) => isIdParam(a.delivery_id));
      const n =
        acks.length === 0
          ? 0
          : await ackListenDeliveries(deps, {
              scope: sessionScope(s),
              subscriptionId: req.params.id,
              streamId: body.stream_id,
              acks,
            });
      return { acknowledged: n };
    });

    app.delete<{ Params: { id: string } }>('/listen/:id', async (req, reply) => {
      const s = requireSession(req);
      const ok = isIdParam(req.params.id) && (await endListenSession(deps, sessionScope(s), req.params.id));
      if (!ok) throw notFound(`No listen session ${req.params.id} in your organization.`);
      return reply.code(204).send();
    });

    app.post('/listen/trigger', async (req, reply) => {
      const s = requireSession(req);
      const body = parseInput(triggerBody, req.body ?? {});
      const r = await triggerListenEvent(deps, {
        scope: sessionScope(s),
        eventType: body.event_type,
      });
      return reply.code(202).send(r);
    });
  };
}
