import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { callProcessing, reprocessCall } from '../../capture/jobs/processing.ts';
import type { JobRunner } from '../../capture/jobs/runner.ts';
import type { Deps } from '../../deps.ts';
import { parseInput } from '../../errors.ts';

type IdParams = { Params: { id: string } };

const reprocessBody = z.strictObject({
  stages: z.enum(['failed', 'all'], { error: 'must be "failed" (the default) or "all"' }).optional(),
});

/**
 * GET /calls/{id}/processing: the call's processing stages with state, attempts, last error and
 * next attempt. POST /calls/{id}/reprocess (body optional, `{stages: "failed" | "all"}`): 202
 * `{call_id, requeued}`; the re-queued stages run right after the response in this process (or in
 * a worker, whichever claims them first). docs/capture.md "Processing jobs".
 */
export function callProcessingRoutes(deps: Deps, opts: { jobs: JobRunner }): FastifyPluginAsync {
  return async (app) => {
    app.get<IdParams>('/calls/:id/processing', async (req) => callProcessing(deps, req.params.id));

    app.post<IdParams>('/calls/:id/reprocess', async (req, reply) => {
      const body = parseInput(reprocessBody, req.body ?? {});
      const r = await reprocessCall(deps, req.params.id, body.stages ?? 'failed');
      opts.jobs.soon(r.call_id);
      return reply.code(202).send(r);
    });
  };
}
