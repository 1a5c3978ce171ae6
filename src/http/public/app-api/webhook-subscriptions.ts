import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { sessionScope } from '../../../accounts/sessions.ts';
import type { Deps } from '../../../deps.ts';
import { ENVIRONMENTS, tenantScope } from '../../../domain/tenant.ts';
import { notFound, parseInput } from '../../../errors.ts';
import { verifySubscription } from '../../../webhooks/subscriptions/handshake.ts';
import {
  createSubscription,
  deleteSubscription,
  getSubscription,
  listSubscriptions,
  lockSubscription,
} from '../../../webhooks/subscriptions/subscriptions.ts';
import { enqueueTestEvent, subscriptionInactive } from '../../../webhooks/subscriptions/test-event.ts';
import { requireSession } from './auth.ts';
import { isIdParam } from './path-id.ts';

const createBody = z.object({
  url: z.string().min(1),
  event_types: z.array(z.string()).optional(),
  verification_mode: z.enum(['permissive', 'strict']).optional(),
  /** the environment whose events it receives; default: the session's (live unless switched to test mode) */
  environment: z.enum(ENVIRONMENTS).optional(),
});

type IdParams = { Params: { id: string } };
const missing = (id: string) => notFound(`No webhook subscription ${id} in your organization.`);

/** Webhook subscriptions: list, create (+ handshake), read, re-verify, test, delete. */
export function subscriptionRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/webhook-subscriptions', async (req) => {
      const s = requireSession(req);
      return { items: await listSubscriptions(deps.db, sessionScope(s), deps.clock.now()) };
    });

    app.post('/webhook-subscriptions', async (req, reply) => {
      const s = requireSession(req);
      const body = parseInput(createBody, req.body ?? {});
      const scope = tenantScope(s.organizationId, body.environment ?? s.environment);
      const created = await createSubscription(deps, scope, {
        url: body.url,
        eventTypes: body.event_types,
        verificationMode: body.verification_mode,
      });
      return reply.code(201).send({ ...created, environment: scope.environment });
    });

    app.get<IdParams>('/webhook-subscriptions/:id', async (req) => {
      const s = requireSession(req);
      const sub = isIdParam(req.params.id)
        ? await getSubscription(deps.db, sessionScope(s), req.params.id, deps.clock.now())
        : null;
      if (!sub) throw missing(req.params.id);
      return sub;
    });

    app.post<IdParams>('/webhook-subscriptions/:id/verify', async (req) => {
      const s = requireSession(req);
      if (!isIdParam(req.params.id)) throw missing(req.params.id);
      return verifySubscription(deps, sessionScope(s), req.params.id);
    });

    app.post<IdParams>('/webhook-subscriptions/:id/test', async (req, reply) => {
      const s = requireSession(req);
      if (!isIdParam(req.params.id)) throw missing(req.params.id);
      const id = req.params.id;
      const queued = await deps.db.transaction(async (tx) => {
        const sub = await lockSubscription(tx, sessionScope(s), id);
        if (sub.state !== 'active') throw subscriptionInactive();
        return enqueueTestEvent(tx, {
          scope: sessionScope(s),
          subscriptionId: id,
          secretId: null,
          now: deps.clock.now(),
          publicBaseUrl: deps.config.publicBaseUrl,
        });
      });
      return reply.code(202).send(queued);
    });

    app.delete<IdParams>('/webhook-subscriptions/:id', async (req, reply) => {
      const s = requireSession(req);
      const ok = isIdParam(req.params.id) && (await deleteSubscription(deps, sessionScope(s), req.params.id));
      if (!ok) throw missing(req.params.id);
      return reply.code(204).send();
    });
  };
}
