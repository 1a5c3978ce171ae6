import type { FastifyPluginAsync, onRequestAsyncHookHandler } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { MESSAGES, recordingAvailability } from '../../../domain/recording-availability.ts';
import { AppError } from '../../../errors.ts';
import { factsOf, findRecordingCall } from '../../../recordings/call-recording.ts';
import { mintRecordingLink, REST_LINK_TTL_MS } from '../../../recordings/links.ts';
import { authenticate, keyScope, requireScope } from './auth.ts';
import { readQuery } from './query.ts';
import { downloadHandler } from './recording-download.ts';
import { ok } from './reply.ts';

/** Sets Cache-Control before anything else runs, so error answers (401, 403, 429 …) carry it too. */
const cacheControl =
  (value: string): onRequestAsyncHookHandler =>
  async (_req, reply) => {
    reply.header('cache-control', value);
  };

/** GET /calls/{id}/recording-url and the link target GET /calls/{id}/recording.mp3 (under /api/v1). */
export function recordingRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.get(
      '/calls/:id/recording-url',
      { onRequest: cacheControl('no-store'), preHandler: authenticate(deps) },
      async (req) => {
        const principal = requireScope(req, 'read.recordings');
        readQuery(req.url, {});
        const { id } = req.params as { id: string };
        const call = await findRecordingCall(deps.db, id, { scope: keyScope(principal) });
        if (!call) throw new AppError('NOT_FOUND', MESSAGES.NOT_FOUND);
        const a = recordingAvailability(factsOf(call));
        if (!a.available) throw new AppError(a.code, a.message);
        const link = mintRecordingLink(deps, call.id, REST_LINK_TTL_MS);
        return ok(deps.clock, link);
      },
    );

    app.route({
      method: ['GET', 'HEAD'],
      url: '/calls/:id/recording.mp3',
      onRequest: cacheControl('private, no-store'),
      handler: downloadHandler(deps),
    });
  };
}
