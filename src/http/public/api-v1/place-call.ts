import type { FastifyPluginAsync, preHandlerAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import { returnMinuteSlot, takeMinuteSlot } from '../../../accounts/rate-limit-windows.ts';
import { getCallView } from '../../../capture/call-list.ts';
import { placeCall, resolveCallDefaults } from '../../../capture/telephony/place-call.ts';
import type { Deps } from '../../../deps.ts';
import { toCallView } from '../../../domain/call-view.ts';
import type { TenantScope } from '../../../domain/tenant.ts';
import { AppError } from '../../../errors.ts';
import { keyScope, requireScope } from './auth.ts';
import { readBody } from './body.ts';
import { sendIdempotent } from './idempotency.ts';
import { readQuery } from './query.ts';
import { secondsUntil } from './rate-limit.ts';
import { ok } from './reply.ts';

const phone = z
  .string({ error: (iss) => (iss.input === undefined ? 'is required (a string)' : 'must be a string') })
  .trim()
  .min(1, 'must not be empty')
  .max(64, 'must be at most 64 characters');

/** POST /calls' body (spec/api-v1-additions.md "Placing calls"); types answer 400, unusable values 422. */
export const placeCallBody = z.strictObject({
  customer_phone: phone,
  agent_user_id: z.string({ error: 'must be a string (a user id)' }).max(64).optional(),
  agent_phone: phone.optional(),
  from_number: phone.optional(),
  recording_mode: z
    .enum(['normal', 'no_recording'], { error: 'must be "normal" or "no_recording"' })
    .optional(),
});

/** The per-organization, per-environment cap's bucket in rate_limit_windows. */
export const capBucket = (scope: TenantScope) => `calls:${scope.organizationId}:${scope.environment}`;

/**
 * POST /calls (scope write.calls): places an outbound call through placeCall, the service function
 * the web app and the operator API use (capture/telephony/place-call.ts), after the defaults of
 * resolveCallDefaults. 201 with the Call. Honours Idempotency-Key. Besides the hourly request limits
 * every request counts against, the organization may place PLACE_CALLS_PER_MINUTE calls a minute
 * per environment (429 RATE_LIMITED with that cap's X-RateLimit-* and Retry-After); a request
 * refused with 422 gives its slot back.
 */
export function placeCallRoutes(deps: Deps, auth: preHandlerAsyncHookHandler): FastifyPluginAsync {
  const cap = deps.config.PLACE_CALLS_PER_MINUTE;
  return async (app) => {
    app.post('/calls', { preHandler: auth }, async (req, reply) => {
      const p = requireScope(req, 'write.calls');
      readQuery(req.url, {});
      const body = readBody(req, placeCallBody);
      const scope = keyScope(p);
      return sendIdempotent(deps, req, reply, scope, 'placeCall', body, async () => {
        const now = deps.clock.now();
        const slot = await takeMinuteSlot(deps.db, capBucket(scope), cap, now);
        if (!slot.taken) {
          reply.headers({
            'x-ratelimit-limit': String(cap),
            'x-ratelimit-remaining': '0',
            'x-ratelimit-reset': slot.reset.toISOString(),
          });
          throw new AppError(
            'RATE_LIMITED',
            `This organization has placed ${cap} calls in the current minute, the most POST /calls places per minute; retry after Retry-After seconds.`,
            { retryAfterSeconds: secondsUntil(now, slot.reset) },
          );
        }
        try {
          const input = await resolveCallDefaults(deps, scope, p.userId, {
            customerPhone: body.customer_phone,
            agentUserId: body.agent_user_id,
            agentPhone: body.agent_phone,
            fromNumber: body.from_number,
            recordingMode: body.recording_mode,
          });
          const placed = await placeCall(deps, scope, input);
          const row = await getCallView(deps.db, scope, placed.call_id);
          if (!row) throw new Error(`the call ${placed.call_id} just placed cannot be read`);
          return { status: 201, payload: ok(deps.clock, toCallView(row, deps.config.publicBaseUrl)) };
        } catch (err) {
          if (err instanceof AppError && err.code === 'VALIDATION_ERROR') {
            await returnMinuteSlot(deps.db, capBucket(scope), now);
          }
          throw err;
        }
      });
    });
  };
}
