import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.ts';

export function ingestionRoutes(_deps: Deps): FastifyPluginAsync {
  return async (_app) => {};
}
