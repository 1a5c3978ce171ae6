import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { notFound } from '../../../errors.ts';
import { maintenanceError, maintenanceGate } from '../../../maintenance.ts';
import { nulRuleAppliedBy } from '../../nul-guard.ts';
import { authenticate, authenticatesWithKey, countWithoutOperation, duplicateAuthorization } from './auth.ts';
import { keepRawBodies } from './body.ts';
import { callRoutes } from './calls.ts';
import { contactRoutes } from './contacts.ts';
import { meRoutes } from './me.ts';
import { methodNotAllowed } from './method-not-allowed.ts';
import { buildOpenApiDocument } from './openapi/document.ts';
import { placeCallRoutes } from './place-call.ts';
import { recordingRoutes } from './recordings.ts';
import { testHelperRoutes } from './test-helpers.ts';

/** Route config flag: the route authenticates with an API key, so its requests count against it. */
const KEY_ROUTE = Symbol('key-route');

/**
 * Everything under /api/v1. The REST routes and the recording routes share one encapsulation, so the
 * hooks below apply to all of them. Order of checks (docs/decisions.md): 400 for two Authorization
 * headers (onRequest; nothing counted) → 503 maintenance (onRequest)
 * → routing 404/405 → 429 failed-authentication throttle → 401 → rate-limit count/429 → 402 (the
 * authenticate preHandler) → 403 scope → 400 query → 400 Idempotency-Key → 415/400 body → 404
 * resource → 422 → 409/410 (the handlers).
 *
 * Every request with an API key counts, whatever the answer (spec "Limits"): the 503, 404 and 405
 * answers, which come before authentication, count the key they carry in the onRequest hook below
 * (countWithoutOperation, the same single statement). A 404 or 405 over the limit answers 429; a
 * 503 stays 503. Requests the unauthenticated routes serve (openapi.json, signed downloads) never
 * count; a wrong method on their paths is a 405 like any other and counts.
 */
export function apiRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    const gate = maintenanceGate(deps);
    const allow = methodNotAllowed(app);
    // The NUL rule (nul-guard.ts) for the query is readQuery's (query.ts), at the "400 query" step of
    // the order above, after the key is counted; the signed download's token and exp can only match
    // a minted link (else 401). Bodies (the writes) are kept raw and read by body.ts's readBody at
    // the "400 body" step, which applies the rule too (the 405s answer in onRequest, unread).
    nulRuleAppliedBy(app, { query: true, body: true });
    keepRawBodies(app);
    app.addHook('onClose', async () => gate.dispose());
    app.addHook('onRoute', (route) => {
      if (authenticatesWithKey(route.preHandler)) route.config = { ...route.config, [KEY_ROUTE]: true };
    });
    app.addHook('onRequest', async (req, reply) => {
      // Authenticated answers are private and change with every request: never cached (routes may override).
      reply.header('cache-control', 'no-store');
      const duplicate = duplicateAuthorization(req);
      if (duplicate) throw duplicate;
      if (!(await gate.enabled())) {
        const config = req.routeOptions.config as unknown as Record<symbol, unknown> | undefined;
        if (req.is404 || allow.isAnswer(req) || config?.[KEY_ROUTE] === true) {
          await countDuringMaintenance(req, reply);
        }
        throw maintenanceError();
      }
      // Unknown paths are counted here (before any body is parsed), 405s in allow.answer below.
      if (req.is404) await countUnrouted(req, reply);
    });
    const countUnrouted = (req: FastifyRequest, reply: FastifyReply) =>
      countWithoutOperation(deps, req, reply, { enforce: true });
    /** Counting must not turn a 503 into a 500: the database may be what the maintenance is about. */
    const countDuringMaintenance = async (req: FastifyRequest, reply: FastifyReply) => {
      try {
        await countWithoutOperation(deps, req, reply, { enforce: false });
      } catch (err) {
        req.log.warn({ err }, 'could not count a request answered 503 for maintenance');
      }
    };
    app.setNotFoundHandler(async (req) => {
      throw notFound(
        `No operation ${req.method} ${req.url.split('?')[0]}; the operations are listed in ${deps.config.publicBaseUrl}/api/v1/openapi.json.`,
      );
    });

    allow.track();
    const auth = authenticate(deps);
    await app.register(meRoutes(deps, auth));
    await app.register(callRoutes(deps, auth));
    await app.register(placeCallRoutes(deps, auth));
    await app.register(testHelperRoutes(deps, auth));
    await app.register(contactRoutes(deps, auth));
    await app.register(recordingRoutes(deps));

    const openapi = JSON.stringify(buildOpenApiDocument({ publicBaseUrl: deps.config.publicBaseUrl }));
    app.get('/openapi.json', { exposeHeadRoute: false }, async (_req, reply) => {
      reply.header('cache-control', 'no-cache').type('application/json; charset=utf-8');
      return openapi;
    });
    allow.answer(countUnrouted);
  };
}
