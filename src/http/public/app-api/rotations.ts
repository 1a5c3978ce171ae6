import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { sessionScope } from '../../../accounts/sessions.ts';
import type { Deps } from '../../../deps.ts';
import { notFound, parseInput } from '../../../errors.ts';
import {
  activateRotation,
  listRotations,
  startRotation,
  testRotation,
} from '../../../webhooks/subscriptions/rotation.ts';
import { getSubscription } from '../../../webhooks/subscriptions/subscriptions.ts';
import { requireSession } from './auth.ts';
import { isIdParam } from './path-id.ts';

const startBody = z.object({ emergency: z.boolean().optional() });

type Params = { Params: { id: string; rid?: string } };

/** Signing-secret rotations of one subscription: start (standard or emergency), test, activate, list. */
export function rotationRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    const ids = (p: Params['Params']) => {
      if (!isIdParam(p.id)) throw notFound(`No webhook subscription ${p.id} in your organization.`);
      if (p.rid !== undefined && !isIdParam(p.rid))
        throw notFound(`No rotation ${p.rid} on this webhook subscription.`);
      return { subscriptionId: p.id, rotationId: p.rid ?? '' };
    };

    app.get<Params>('/webhook-subscriptions/:id/rotations', async (req) => {
      const s = requireSession(req);
      const { subscriptionId } = ids(req.params);
      if (!(await getSubscription(deps.db, sessionScope(s), subscriptionId, deps.clock.now()))) {
        throw notFound(`No webhook subscription ${subscriptionId} in your organization.`);
      }
      return { items: await listRotations(deps.db, sessionScope(s), subscriptionId) };
    });

    app.post<Params>('/webhook-subscriptions/:id/rotations', async (req, reply) => {
      const s = requireSession(req);
      const { subscriptionId } = ids(req.params);
      const body = parseInput(startBody, req.body ?? {});
      const r = await startRotation(deps, {
        scope: sessionScope(s),
        subscriptionId,
        emergency: body.emergency ?? false,
      });
      return reply.code(201).send(r);
    });

    app.post<Params>('/webhook-subscriptions/:id/rotations/:rid/test', async (req, reply) => {
      const s = requireSession(req);
      const r = await testRotation(deps, { scope: sessionScope(s), ...ids(req.params) });
      return reply.code(202).send(r);
    });

    app.post<Params>('/webhook-subscriptions/:id/rotations/:rid/activate', async (req) => {
      const s = requireSession(req);
      return activateRotation(deps, { scope: sessionScope(s), ...ids(req.params) });
    });
  };
}
