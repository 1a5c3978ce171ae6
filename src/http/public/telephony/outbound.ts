import type { FastifyPluginAsync } from 'fastify';
import { handleOutboundCallback } from '../../../capture/telephony/twilio/outbound.ts';
import { isOutboundCallbackKind } from '../../../capture/telephony/twilio/outbound-callbacks.ts';
import type { Deps } from '../../../deps.ts';
import { notFound } from '../../../errors.ts';
import { pathId } from '../../operator/path-id.ts';
import { twilioRequest } from './twilio-auth.ts';

/**
 * The callbacks of an outbound (click-to-call) call: the URLs the service names in its REST call
 * and TwiML (capture/telephony/twilio/outbound.ts), signature-checked by twilio-auth.ts like every
 * /telephony/twilio route. POST /telephony/twilio/calls/{id}/outbound/{kind}, kind one of answer,
 * confirm, agent-status, customer-status, dial-ended; the answer is TwiML.
 */
export function outboundTelephonyRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Params: { id: string; kind: string } }>('/calls/:id/outbound/:kind', async (req, reply) => {
      const { kind } = req.params;
      const id = pathId(req.params.id, 'call');
      if (!isOutboundCallbackKind(kind)) throw notFound('No outbound call callback at this URL.');
      const { account, params } = twilioRequest(req);
      const xml = await handleOutboundCallback(deps, account, id, kind, params);
      return reply.code(200).header('content-type', 'text/xml; charset=utf-8').send(xml);
    });
  };
}
