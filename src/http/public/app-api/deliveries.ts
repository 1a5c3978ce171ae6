import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { sessionScope } from '../../../accounts/sessions.ts';
import type { Deps } from '../../../deps.ts';
import { notFound, parseInput } from '../../../errors.ts';
import { EVENT_TYPES } from '../../../webhooks/outbox/event-types.ts';
import {
  DELIVERY_LOG_DEFAULT_LIMIT,
  DELIVERY_LOG_MAX_LIMIT,
  DELIVERY_STATUSES,
  listDeliveries,
} from '../../../webhooks/subscriptions/delivery-log.ts';
import { bulkResend, RESENDABLE, resendDelivery } from '../../../webhooks/subscriptions/resend.ts';
import { requireSession } from './auth.ts';
import { isIdParam } from './path-id.ts';

const logQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional(),
  event_type: z.enum(EVENT_TYPES).optional(),
  limit: z.coerce.number().int().min(1).max(DELIVERY_LOG_MAX_LIMIT).default(DELIVERY_LOG_DEFAULT_LIMIT),
  cursor: z.string().min(1).optional(),
});

const dateTime = z.iso.datetime({ offset: true }).transform((s) => new Date(s));

const bulkBody = z.object({
  from: dateTime,
  to: dateTime,
  statuses: z.array(z.enum(RESENDABLE)).min(1).optional(),
  event_type: z.enum(EVENT_TYPES).optional(),
  dry_run: z.boolean().optional(),
});

type IdParams = { Params: { id: string } };

/** The delivery log and resend (single and bulk). */
export function deliveryRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get<IdParams>('/webhook-subscriptions/:id/deliveries', async (req) => {
      const s = requireSession(req);
      const q = parseInput(logQuery, req.query, 'query');
      if (!isIdParam(req.params.id))
        throw notFound(`No webhook subscription ${req.params.id} in your organization.`);
      const { event_type: eventType, ...rest } = q;
      return listDeliveries(deps.db, {
        scope: sessionScope(s),
        subscriptionId: req.params.id,
        eventType,
        ...rest,
      });
    });

    app.post<IdParams>('/deliveries/:id/resend', async (req, reply) => {
      const s = requireSession(req);
      if (!isIdParam(req.params.id)) throw notFound(`No delivery ${req.params.id} in your organization.`);
      return reply.code(202).send(await resendDelivery(deps, sessionScope(s), req.params.id));
    });

    app.post<IdParams>('/webhook-subscriptions/:id/deliveries/resend', async (req, reply) => {
      const s = requireSession(req);
      const body = parseInput(bulkBody, req.body ?? {});
      if (!isIdParam(req.params.id))
        throw notFound(`No webhook subscription ${req.params.id} in your organization.`);
      const r = await bulkResend(deps, sessionScope(s), req.params.id, {
        from: body.from,
        to: body.to,
        statuses: body.statuses ? [...new Set(body.statuses)] : [...RESENDABLE],
        eventType: body.event_type,
        dryRun: body.dry_run ?? false,
      });
      return reply.code(r.dry_run ? 200 : 202).send(r);
    });
  };
}
