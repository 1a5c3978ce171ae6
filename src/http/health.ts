import type { FastifyPluginAsync } from 'fastify';
import { checkReadiness } from '../db/readiness.ts';
import type { Deps } from '../deps.ts';
import { errorBody } from './error-handler.ts';

/**
 * GET /healthz (liveness: the process serves HTTP; the database is not asked, so a database outage
 * does not get healthy nodes restarted) and GET /readyz (readiness: the database answers and every
 * migration of this version is applied; 503 otherwise). On both listeners, outside /api/v1: no
 * authentication, no rate limit, never cached.
 */
export function healthRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
      return { status: 'ok' };
    });
    app.get('/readyz', async (_req, reply) => {
      reply.header('cache-control', 'no-store');
      const r = await checkReadiness(deps.db);
      if (r.ready) return { status: 'ready', database: 'ok', migrations: 'current' };
      const message =
        r.database === 'unreachable'
          ? 'Not ready: the database does not answer.'
          : `Not ready: the database schema is behind this version (${r.pending.length} migration(s) not applied: ${r.pending.join(', ')}); start the service once so that it migrates.`;
      return reply.code(503).send({
        ...errorBody('DATABASE_ERROR', message, deps.clock.now()),
        status: 'not_ready',
        database: r.database,
        migrations: r.database === 'unreachable' ? 'unknown' : 'behind',
      });
    });
  };
}
