import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../../errors.ts';

/** Methods Fastify routes; the ones a path does not serve answer 405 there. */
const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const;

/**
 * 405 METHOD_NOT_ALLOWED with an Allow header for a known /api/v1 path asked with a method it does
 * not serve (DELETE /calls/{id}, PUT /contacts/{id}, HEAD /me, OPTIONS …).
 * Unknown paths stay 404. Call track() before registering the routes, then answer() after: every
 * route registered in between (the recordings' included) gets its siblings. The 405 is thrown in
 * onRequest, so no body is parsed. A Bearer key the request carries is counted first (answer's
 * `before`, routes.ts), which may turn the answer into 429.
 */
export function methodNotAllowed(app: FastifyInstance) {
  const served = new Map<string, Set<string>>();
  const marker = Symbol('405');
  return {
    /** true when the request was routed to one of the 405 answers */
    isAnswer: (req: FastifyRequest) =>
      (req.routeOptions.config as unknown as Record<symbol, unknown> | undefined)?.[marker] === true,
    track() {
      app.addHook('onRoute', (route) => {
        if ((route.config as Record<symbol, unknown> | undefined)?.[marker]) return;
        const methods = Array.isArray(route.method) ? route.method : [route.method];
        const set = served.get(route.url) ?? new Set<string>();
        for (const m of methods) set.add(m.toUpperCase());
        served.set(route.url, set);
      });
    },
    /** `before` runs ahead of each 405 answer (routes.ts counts the request's key there). */
    answer(before?: (req: FastifyRequest, reply: FastifyReply) => Promise<void>) {
      for (const [url, set] of served) {
        const missing = METHODS.filter((m) => !set.has(m));
        if (missing.length === 0) continue;
        const allow = [...set].sort().join(', ');
        const path = url.replace(/:(\w+)/g, '{$1}');
        app.route({
          method: missing,
          url: url.slice(app.prefix.length) || '/',
          config: { [marker]: true },
          onRequest: async (req, reply) => {
            await before?.(req, reply);
            reply.header('allow', allow);
            throw new AppError(
              'METHOD_NOT_ALLOWED',
              `${req.method} is not allowed on ${path}; this path answers ${allow} only.`,
            );
          },
          handler: async () => undefined,
        });
      }
    },
  };
}
