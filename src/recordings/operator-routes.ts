import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.ts';

/** PUT /calls/{id}/recording, POST /calls/{id}/recording-refused, POST /calls/{id}/recording/delete. */
export function recordingOperatorRoutes(_deps: Deps): FastifyPluginAsync {
  return async (_app) => {};
}
