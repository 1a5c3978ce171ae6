import type { FastifyPluginAsync } from 'fastify';
import type { Deps } from '../deps.ts';

/** GET /calls/{id}/recording-url and the link target GET /calls/{id}/recording.mp3 (under /api/v1). */
export function recordingRoutes(_deps: Deps): FastifyPluginAsync {
  return async (_app) => {};
}
