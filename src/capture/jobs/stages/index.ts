import type { StageHandlers } from '../types.ts';
import { analyseStage } from './analyse.ts';
import { completeStage } from './complete.ts';
import { transcribeStage } from './transcribe.ts';

/**
 * The stages capture runs by itself. The download stage belongs to a telephony adapter: the
 * composition root adds its handler (`{ ...captureStageHandlers(), download: … }`, src/worker.ts),
 * so capture never imports telephony code.
 */
export function captureStageHandlers(): StageHandlers {
  return { transcribe: transcribeStage, analyse: analyseStage, complete: completeStage };
}
