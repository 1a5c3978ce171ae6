import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { JobRunner } from '../../../capture/jobs/runner.ts';
import {
  answerInboundCall,
  consentAnswered,
  dialEnded,
  voicemailEnded,
} from '../../../capture/telephony/twilio/inbound.ts';
import { recordingStatusCallback } from '../../../capture/telephony/twilio/recording.ts';
import { callStatusCallback } from '../../../capture/telephony/twilio/status.ts';
import type { Deps } from '../../../deps.ts';
import { pathId } from '../../operator/path-id.ts';
import { twilioRequest } from './twilio-auth.ts';

const xml = (reply: FastifyReply, body: string) => reply.code(200).type('text/xml; charset=utf-8').send(body);

type CallParams = { Params: { id: string } };

/**
 * Inbound calls (operator-api.md "Callbacks"): the Voice URL and status callback an operator sets
 * on each Twilio number, and the URLs the service itself names in its TwiML.
 */
export function inboundRoutes(
  deps: Deps,
  opts: { jobs: Pick<JobRunner, 'soon' | 'offer'> },
): FastifyPluginAsync {
  return async (app) => {
    app.post('/voice', async (req, reply) => {
      const { account, params } = twilioRequest(req);
      return xml(reply, await answerInboundCall(deps, account, params));
    });

    app.post('/status', async (req, reply) => {
      const { account, params } = twilioRequest(req);
      await callStatusCallback(deps, account, params);
      return reply.code(204).send();
    });

    app.post<CallParams>('/calls/:id/consent', async (req, reply) => {
      const { account, params } = twilioRequest(req);
      return xml(reply, await consentAnswered(deps, account, pathId(req.params.id, 'call'), params));
    });

    app.post<CallParams>('/calls/:id/dial-ended', async (req, reply) => {
      const { account, params } = twilioRequest(req);
      return xml(reply, await dialEnded(deps, account, pathId(req.params.id, 'call'), params));
    });

    app.post<CallParams>('/calls/:id/voicemail-ended', async (req, reply) => {
      const { account, params } = twilioRequest(req);
      return xml(reply, await voicemailEnded(deps, account, pathId(req.params.id, 'call'), params));
    });

    app.post<CallParams>('/calls/:id/recording', async (req, reply) => {
      const { account, params } = twilioRequest(req);
      const callId = pathId(req.params.id, 'call');
      // The download job is inserted leased to this listener's runner (no claim after the answer);
      // past its lease (30 s: this process died first) it is any runner's.
      const offer = opts.jobs.offer(callId);
      const { download } = await recordingStatusCallback(deps, account, callId, params, {
        chain: offer.chain,
      });
      // 204 for every recording callback, a refused one included: Twilio retries anything else.
      await reply.code(204).send();
      // After Twilio has its answer: the queued download job streams the MP3 into storage.
      if (download) opts.jobs.soon(callId, offer.job());
      return reply;
    });
  };
}
