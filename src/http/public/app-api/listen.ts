import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { Deps } from '../../../deps.ts';
import { badRequest, notFound, parseInput } from '../../../errors.ts';
import { newId } from '../../../ids.ts';
import {
  ackListenDeliveries,
  claimListenDeliveries,
  endListenSession,
  LISTEN_GRACE_MS,
  LISTEN_HEARTBEAT_MS,
  type ListenDelivery,
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
    /** Wakes every stream of this process on a webhook_deliveries notification (one LISTEN). */
    const wakers = new Set<() => void>();
    const streams = new Set<() => void>();
    let unlisten: Promise<() => Promise<void>> | null = null;
    const ensureListening = () => {
      unlisten ??= deps.db
        .listen('webhook_deliveries', () => {
          for (const w of wakers) w();
        })
        .catch((err: Error) => {
          deps.log.warn({ err: err.message }, 'listen streams: LISTEN failed; polling only');
          return async () => {};
        });
      return unlisten;
    };
    app.addHook('preClose', async () => {
      for (const end of streams) end();
    });
    app.addHook('onClose', async () => {
      if (unlisten) await (await unlisten)();
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
      const session = await openListenSession(deps, {
        organizationId: s.organizationId,
        eventTypes: events,
        resumeId: q.resume,
      });
      await ensureListening();
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
      let wake: () => void = () => {};
      const end = () => {
        if (!open) return;
        open = false;
        wake();
        res.end();
      };
      streams.add(end);
      res.on('close', end);
      const waker = () => wake();
      wakers.add(waker);

      const send = (d: ListenDelivery) => res.write(sseEvent('delivery', d, d.delivery_id));
      let lastBeat = Date.now();
      try {
        while (open) {
          const batch = await claimListenDeliveries(deps, { subscriptionId, owner });
          for (const d of batch) if (open) send(d);
          if (Date.now() - lastBeat >= LISTEN_HEARTBEAT_MS) {
            lastBeat = Date.now();
            if (!(await touchListenSession(deps.db, subscriptionId, deps.clock.now()))) {
              res.write(sseEvent('end', { reason: 'session_deleted' }));
              break;
            }
            res.write(': keep-alive\n\n');
          }
          if (batch.length > 0 || !open) continue;
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, LISTEN_POLL_MS);
            wake = () => {
              clearTimeout(t);
              resolve();
            };
          });
          wake = () => {};
        }
      } catch (err) {
        req.log.error({ subscriptionId, err: (err as Error).message }, 'listen stream failed');
      } finally {
        wakers.delete(waker);
        streams.delete(end);
        end();
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
              organizationId: s.organizationId,
              subscriptionId: req.params.id,
              streamId: body.stream_id,
              acks,
            });
      return { acknowledged: n };
    });

    app.delete<{ Params: { id: string } }>('/listen/:id', async (req, reply) => {
      const s = requireSession(req);
      const ok = isIdParam(req.params.id) && (await endListenSession(deps, s.organizationId, req.params.id));
      if (!ok) throw notFound(`No listen session ${req.params.id} in your organization.`);
      return reply.code(204).send();
    });

    app.post('/listen/trigger', async (req, reply) => {
      const s = requireSession(req);
      const body = parseInput(triggerBody, req.body ?? {});
      const r = await triggerListenEvent(deps, {
        organizationId: s.organizationId,
        eventType: body.event_type,
      });
      return reply.code(202).send(r);
    });
  };
}
