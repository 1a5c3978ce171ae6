import type { StageHandler, StageHandlers } from '../jobs/types.ts';
import { simulatedDownloadStage } from './simulated/download.ts';
import { simulateStage } from './simulated/play.ts';
import { downloadStage } from './twilio/download.ts';

/**
 * The download stage of every carrier: the recording callback names the carrier in the job's input
 * when it is not Twilio (the simulated carrier's recordings are in its own store); no input, or any
 * other, is Twilio's. No extra statement: the claim brought the input.
 */
export const carrierDownloadStage: StageHandler = (ctx) =>
  ctx.job.input?.carrier === 'simulated' ? simulatedDownloadStage(ctx) : downloadStage(ctx);

/** The processing stages telephony owns, added to capture's by the composition root. */
export function telephonyStageHandlers(): StageHandlers {
  return { download: carrierDownloadStage, simulate: simulateStage };
}
