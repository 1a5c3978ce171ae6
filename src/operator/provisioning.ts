import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.ts';

export function provisioningRoutes(_deps: Deps): FastifyPluginAsync {
  return async (_app) => {};
}
