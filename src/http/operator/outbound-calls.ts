import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { placeCall } from '../../capture/telephony/place-call.ts';
import type { Deps } from '../../deps.ts';
import { tenantScope } from '../../domain/tenant.ts';
import { parseInput } from '../../errors.ts';
import { pathId } from './path-id.ts';

/**
 * POST /admin/v1/organizations/{org}/outbound-calls (operator-api.md "Telephony and processing
 * providers"): click-to-call. The service stores the call and asks Twilio to ring the agent
 * (placeCall, the function the web app and the public POST /api/v1/calls use too; live data).
 * 201 {call_id, outbound_lifecycle, failure_reason}: ringing_agent, or failed_to_initiate with its
 * failure_reason when Twilio refused the REST call (the call exists and its events went out).
 */
const phone = z.string({ error: 'must be a string' }).trim().min(1, 'must not be empty').max(64);
const schema = z.strictObject({
  agent_user_id: z.guid({ error: 'must be a user id (UUID)' }),
  agent_phone: phone,
  customer_phone: phone,
  from_number: phone,
  recording_mode: z
    .enum(['normal', 'no_recording'], { error: 'must be "normal" or "no_recording"' })
    .optional(),
});

export function outboundCallRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Params: { org: string } }>('/organizations/:org/outbound-calls', async (req, reply) => {
      const organizationId = pathId(req.params.org, 'organization');
      const b = parseInput(schema, req.body);
      const placed = await placeCall(deps, tenantScope(organizationId), {
        agentUserId: b.agent_user_id.toLowerCase(),
        agentPhone: b.agent_phone,
        customerPhone: b.customer_phone,
        fromNumber: b.from_number,
        recordingMode: b.recording_mode,
      });
      return reply.code(201).send(placed);
    });
  };
}
