import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.ts';
import { recordingRoutes } from '../recordings/routes.ts';

/** Everything under /api/v1. The REST routes and the recording routes share one encapsulation. */
export function apiRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    await app.register(recordingRoutes(deps));
  };
}
