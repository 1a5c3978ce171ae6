import type { FastifyPluginAsync, preHandlerAsyncHookHandler } from 'fastify';
import { z } from 'zod';
import { takeMinuteSlot } from '../../../accounts/rate-limit-windows.ts';
import { getCallView } from '../../../capture/call-list.ts';
import { MAX_SCRIPT_CHARS, startInboundTestCall } from '../../../capture/telephony/simulated/carrier.ts';
import type { Deps } from '../../../deps.ts';
import { toCallView } from '../../../domain/call-view.ts';
import { INBOUND_SCENARIOS } from '../../../domain/simulated-call.ts';
import { AppError } from '../../../errors.ts';
import { keyScope, requireScope } from './auth.ts';
import { readBody } from './body.ts';
import { capBucket } from './place-call.ts';
import { readQuery } from './query.ts';
import { secondsUntil } from './rate-limit.ts';
import { ok } from './reply.ts';

/** POST /test-helpers/inbound-calls' body (spec/api-v1-additions.md "Inbound test calls"). */
export const inboundTestCallBody = z.strictObject({
  scenario: z.enum(INBOUND_SCENARIOS, { error: `must be one of ${INBOUND_SCENARIOS.join(', ')}` }).optional(),
  caller_phone: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(64).optional(),
  caller_name: z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(100).optional(),
  script: z
    .string({ error: 'must be a string' })
    .min(1, 'must not be empty')
    .max(MAX_SCRIPT_CHARS, `must be at most ${MAX_SCRIPT_CHARS} characters`)
    .optional(),
});

export const TEST_KEYS_ONLY =
  'Test helpers take a test key (cc_test_…): they create test calls, which a live key cannot see. Create a test key in the web app (Settings → Integrations) or with POST /admin/v1/organizations/{org}/api-keys and environment "test".';

/**
 * POST /test-helpers/inbound-calls (test keys only, scope write.calls): the simulated carrier rings
 * the organization's test number and plays the scenario through the real pipeline
 * (capture/telephony/simulated/carrier.ts); 201 with the Call as it is when the call starts. Order:
 * 403 scope → 400 query or body → 403 a live key → 429 the calls-per-minute cap POST /calls has
 * (shared) → 422.
 */
export function testHelperRoutes(deps: Deps, auth: preHandlerAsyncHookHandler): FastifyPluginAsync {
  const cap = deps.config.PLACE_CALLS_PER_MINUTE;
  return async (app) => {
    app.post('/test-helpers/inbound-calls', { preHandler: auth }, async (req, reply) => {
      const p = requireScope(req, 'write.calls');
      readQuery(req.url, {});
      const body = readBody(req, inboundTestCallBody);
      if (p.environment !== 'test') throw new AppError('FORBIDDEN', TEST_KEYS_ONLY);
      const scope = keyScope(p);
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
          `This organization has started ${cap} calls in the current minute, the most POST /calls and test calls start per minute; retry after Retry-After seconds.`,
          { retryAfterSeconds: secondsUntil(now, slot.reset) },
        );
      }
      const id = await startInboundTestCall(deps, scope, {
        scenario: body.scenario,
        callerPhone: body.caller_phone,
        callerName: body.caller_name,
        script: body.script,
      });
      const row = await getCallView(deps.db, scope, id);
      if (!row) throw new Error(`the test call ${id} just started cannot be read`);
      return reply.code(201).send(ok(deps.clock, toCallView(row, deps.config.publicBaseUrl)));
    });
  };
}
