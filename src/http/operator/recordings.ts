import type { Readable } from 'node:stream';
import type { FastifyPluginAsync, onRequestAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import type { JobRunner } from '../../capture/jobs/runner.ts';
import { storeRecording } from '../../capture/recording-ingest.ts';
import { deleteRecording, refuseRecording } from '../../capture/recording-lifecycle.ts';
import type { Deps } from '../../deps.ts';
import { AppError, parseInput } from '../../errors.ts';
import { MAX_RECORDING_BYTES, tooLarge } from '../../recordings/measure.ts';

const deleteBody = z.object({
  deletion_kind: z.enum(['hard_deleted', 'provider_404'], {
    error: 'must be "hard_deleted" or "provider_404"',
  }),
  reason: z
    .string({ error: 'must be a string or null' })
    .max(500, 'must be at most 500 characters')
    .nullish(),
});

const putQuery = z.object({
  recording_sid: z
    .string({ error: 'must be given once, as a string' })
    .min(1, 'must not be empty')
    .max(128, 'must be at most 128 characters')
    .optional(),
});

/** Before the body is read: only raw MP3 bytes of an acceptable size are let through. */
const audioOnly: onRequestAsyncHookHandler = async (req) => {
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (type !== 'audio/mpeg') {
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      'Send the recording as raw MP3 bytes with Content-Type: audio/mpeg.',
    );
  }
  const length = Number(req.headers['content-length']);
  if (Number.isFinite(length) && length > MAX_RECORDING_BYTES) throw tooLarge(MAX_RECORDING_BYTES);
};

/** PUT /calls/{id}/recording, POST /calls/{id}/recording-refused, POST /calls/{id}/recording/delete. */
export function recordingOperatorRoutes(deps: Deps, opts: { jobs: JobRunner }): FastifyPluginAsync {
  return async (app) => {
    // The raw stream goes straight to the BlobStore; nothing is buffered (size capped in ingest).
    app.addContentTypeParser('audio/mpeg', (_req, payload, done) => done(null, payload));

    app.put(
      '/calls/:id/recording',
      { onRequest: audioOnly, bodyLimit: MAX_RECORDING_BYTES },
      async (req, reply) => {
        const { id } = req.params as { id: string };
        const query = parseInput(putQuery, req.query, 'query');
        const stored = await storeRecording(deps, id, req.body as Readable, {
          recordingSid: query.recording_sid,
        });
        // The transcription queued with the audio runs right after the response (or in a worker).
        if (stored.transcriptionQueued) opts.jobs.soon(id);
        return reply.code(204).send();
      },
    );

    app.post('/calls/:id/recording-refused', async (req, reply) => {
      const { id } = req.params as { id: string };
      await refuseRecording(deps, id);
      return reply.code(204).send();
    });

    app.post('/calls/:id/recording/delete', async (req, reply) => {
      const { id } = req.params as { id: string };
      const body = parseInput(deleteBody, req.body);
      await deleteRecording(deps, id, { deletionKind: body.deletion_kind, reason: body.reason ?? null });
      return reply.code(204).send();
    });
  };
}
