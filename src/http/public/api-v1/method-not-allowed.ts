import type { FastifyInstance } from 'fastify';
import { AppError } from '../../../errors.ts';

/** Methods Fastify routes; the ones a path does not serve answer 405 there. */
const METHODS = ['DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT'] as const;

/**
 * 405 METHOD_NOT_ALLOWED with an Allow header for a known /api/v1 path asked with a method it does
 * not serve (the REST API is read-only: POST /calls, DELETE /calls/{id}, HEAD /me, OPTIONS …).
 * Unknown paths stay 404. Call track() before registering the routes, then answer() after: every
 * route registered in between (the recordings' included) gets its siblings. The 405 is thrown in
 * onRequest, so no body is parsed and no key is checked first (routing precedes authentication).
 */
export function methodNotAllowed(app: FastifyInstance) {
  const served = new Map<string, Set<string>>();
  const marker = Symbol('405');
  return {
    track() {
      app.addHook('onRoute', (route) => {
        if ((route.config as Record<symbol, unknown> | undefined)?.[marker]) return;
        const methods = Array.isArray(route.method) ? route.method : [route.method];
        const set = served.get(route.url) ?? new Set<string>();
        for (const m of methods) set.add(m.toUpperCase());
        served.set(route.url, set);
      });
    },
    answer() {
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
            reply.header('allow', allow);
            throw new AppError(
              'METHOD_NOT_ALLOWED',
              `${req.method} is not allowed on ${path}; this path answers ${allow} only (the REST API is read-only).`,
            );
          },
          handler: async () => undefined,
        });
      }
    },
  };
}
