import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { addPhoneNumber, setTelephonyAccount } from '../../capture/telephony/accounts.ts';
import type { Deps } from '../../deps.ts';
import { parseInput } from '../../errors.ts';
import { pathId } from './path-id.ts';

/**
 * operator-api.md "Telephony and processing providers": the organization's telephony account
 * (the auth token is never echoed, logged or stored in clear) and its service numbers.
 */
const schemas = {
  account: z.strictObject({
    provider: z.enum(['twilio'], { error: 'must be "twilio"' }),
    account_sid: z.string({ error: 'must be a string' }),
    auth_token: z.string({ error: 'must be a string' }),
  }),
  phoneNumber: z.strictObject({
    number: z.string({ error: 'must be a string' }),
    ring_to: z.string({ error: 'must be a string or null' }).nullish(),
    recording_mode: z
      .enum(['normal', 'no_recording'], { error: 'must be "normal" or "no_recording"' })
      .optional(),
  }),
};

type OrgParams = { Params: { org: string } };

export function telephonyOperatorRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.put<OrgParams>('/organizations/:org/telephony', async (req) => {
      const organizationId = pathId(req.params.org, 'organization');
      const b = parseInput(schemas.account, req.body);
      return setTelephonyAccount(deps, organizationId, {
        provider: b.provider,
        accountSid: b.account_sid,
        authToken: b.auth_token,
      });
    });

    app.post<OrgParams>('/organizations/:org/phone-numbers', async (req, reply) => {
      const organizationId = pathId(req.params.org, 'organization');
      const b = parseInput(schemas.phoneNumber, req.body);
      const created = await addPhoneNumber(deps, organizationId, {
        number: b.number,
        ringTo: b.ring_to ?? null,
        recordingMode: b.recording_mode,
      });
      return reply.code(201).send(created);
    });
  };
}
