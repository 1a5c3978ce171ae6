import type { FastifyPluginAsync } from 'fastify';
import { createCall } from '../../capture/calls.ts';
import { cancelDeletion, eraseCall, scheduleDeletion, setTrashed } from '../../capture/deletion.ts';
import type { JobRunner } from '../../capture/jobs/runner.ts';
import { applyLifecycle } from '../../capture/lifecycle.ts';
import { submitTranscript } from '../../capture/pipeline.ts';
import {
  createCallSchema,
  lifecycleSchema,
  scheduleDeletionSchema,
  transcriptSchema,
} from '../../capture/schemas.ts';
import type { Deps } from '../../deps.ts';
import { ANY_TENANT, tenantScope } from '../../domain/tenant.ts';
import { notFound, parseInput } from '../../errors.ts';
import { isUuid } from '../../ids.ts';

type IdParams = { Params: { id: string } };

/**
 * Call ingestion (spec/operator-api.md "Call ingestion"): what a telephony adapter reports. Each
 * operation is a domain transition that writes its change and its events in one transaction (the
 * services in src/capture and src/contacts). Success bodies are plain objects, like all of the
 * operator API. Transcripts are analysed by the processing jobs (deps.capture.analysis).
 */
export function ingestionRoutes(deps: Deps, opts: { jobs: JobRunner }): FastifyPluginAsync {
  // A queued analysis runs right after the 202 in this process (jobs.soon), or in a worker,
  // whichever claims it first; a crash leaves the job row for the worker (src/capture/jobs/).
  const analyseSoon = (callId: string) => opts.jobs.soon(callId);
  return async (app) => {
    app.post<{ Params: { org: string } }>('/organizations/:org/calls', async (req, reply) => {
      if (!isUuid(req.params.org)) throw notFound(`No organization ${req.params.org}.`);
      const body = parseInput(createCallSchema, req.body);
      const scope = tenantScope(req.params.org.toLowerCase(), body.environment ?? 'live');
      const created = await createCall(deps, scope, body);
      if (created.queued) analyseSoon(created.call_id);
      return reply.code(201).send({ call_id: created.call_id });
    });

    app.post<IdParams>('/calls/:id/transcript', async (req, reply) => {
      const body = parseInput(transcriptSchema, req.body);
      const r = await submitTranscript(deps, req.params.id, {
        text: body.text,
        language: body.language ?? null,
      });
      if (r.processing_state === 'queued') analyseSoon(r.call_id);
      return reply.code(202).send({ call_id: r.call_id, processing_state: r.processing_state });
    });

    app.post<IdParams>('/calls/:id/lifecycle', async (req) => {
      const body = parseInput(lifecycleSchema, req.body);
      return applyLifecycle(deps, req.params.id, {
        state: body.state,
        failureReason: body.failure_reason ?? null,
      });
    });

    app.post<IdParams>('/calls/:id/trash', async (req, reply) => {
      await setTrashed(deps, ANY_TENANT, req.params.id, true);
      return reply.code(204).send();
    });

    app.post<IdParams>('/calls/:id/restore', async (req, reply) => {
      await setTrashed(deps, ANY_TENANT, req.params.id, false);
      return reply.code(204).send();
    });

    app.post<IdParams>('/calls/:id/schedule-deletion', async (req, reply) => {
      const body = parseInput(scheduleDeletionSchema, req.body);
      await scheduleDeletion(deps, ANY_TENANT, req.params.id, {
        reason: body.reason,
        pendingDeletionAt: body.pending_deletion_at ? new Date(body.pending_deletion_at) : null,
      });
      return reply.code(204).send();
    });

    app.post<IdParams>('/calls/:id/cancel-deletion', async (req, reply) => {
      await cancelDeletion(deps, ANY_TENANT, req.params.id);
      return reply.code(204).send();
    });

    app.post<IdParams>('/calls/:id/erase', async (req, reply) => {
      await eraseCall(deps, ANY_TENANT, req.params.id);
      return reply.code(204).send();
    });
  };
}
