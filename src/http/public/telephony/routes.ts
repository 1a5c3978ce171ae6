import type { FastifyPluginAsync } from 'fastify';
import { createJobRunner } from '../../../capture/jobs/runner.ts';
import type { StageHandlers } from '../../../capture/jobs/types.ts';
import { carrierDownloadStage } from '../../../capture/telephony/download-stage.ts';
import type { Deps } from '../../../deps.ts';
import { notFound } from '../../../errors.ts';
import { inboundRoutes } from './inbound.ts';
import { outboundTelephonyRoutes } from './outbound.ts';
import { installTwilioAuth } from './twilio-auth.ts';

/**
 * /telephony/twilio: the Twilio callbacks (operator-api.md "Callbacks"), every one form-encoded
 * and signed (twilio-auth.ts). Each area registers its routes here.
 */
export function telephonyRoutes(deps: Deps, opts: { chainStages?: StageHandlers } = {}): FastifyPluginAsync {
  return async (app) => {
    installTwilioAuth(app, deps);
    // The recording downloads the callbacks queue (processing stage `download`) run right after
    // Twilio has its answer, through the processing job runner: claimed under a lease like any
    // job, a failure retried by the workers with the job's backoff. Closing the app stops it:
    // a download cut off is handed back to the queue, never lost. In a process that is a worker
    // too, the stages after it (chainStages) run on here as the download's chain
    // (capture/jobs/runner.ts): no claim, no NOTIFY, no second runner woken; it claims downloads only.
    const jobs = createJobRunner(deps, {
      handlers: { ...opts.chainStages, download: carrierDownloadStage },
      claimStages: ['download'],
    });
    app.addHook('onClose', () => jobs.stop());
    // An unknown path under /telephony/twilio goes through the signature check too: unsigned 403,
    // signed 404 (no route answers anything to a caller that is not Twilio).
    app.setNotFoundHandler(async (req) => {
      throw notFound(`No route ${req.method} ${req.url.split('?')[0]}.`);
    });
    await app.register(inboundRoutes(deps, { jobs }));
    await app.register(outboundTelephonyRoutes(deps));
  };
}
