import { type Clock, systemClock } from '../../clock.ts';
import type { Config } from '../../config.ts';
import { ruleBasedAnalyzer } from '../analyzer.ts';
import { deepgramTranscription } from './deepgram.ts';
import { openAiAnalysis } from './openai-analysis.ts';
import { openAiTranscription } from './openai-transcription.ts';
import type { AnalysisProvider, TranscriptionProvider } from './types.ts';

/**
 * The providers the settings name (docs/capture.md "Speech-to-text and analysis providers"). The
 * composition root calls these once and hands the result to the job runner.
 */

export type ProviderConfig = Pick<
  Config,
  | 'TRANSCRIPTION_PROVIDER'
  | 'TRANSCRIPTION_BASE_URL'
  | 'TRANSCRIPTION_API_KEY'
  | 'TRANSCRIPTION_MODEL'
  | 'TRANSCRIPTION_MAX_UPLOAD_BYTES'
  | 'TRANSCRIPTION_TIMEOUT_MS'
  | 'ANALYSIS_PROVIDER'
  | 'ANALYSIS_BASE_URL'
  | 'ANALYSIS_API_KEY'
  | 'ANALYSIS_MODEL'
  | 'ANALYSIS_TIMEOUT_MS'
  | 'PROVIDER_MAX_ANSWER_BYTES'
>;

/** The speech-to-text provider, or null for TRANSCRIPTION_PROVIDER=none (transcripts come through the operator API). */
export function transcriptionProviderFromConfig(
  config: ProviderConfig,
  clock: Clock = systemClock,
): TranscriptionProvider | null {
  const common = {
    baseUrl: config.TRANSCRIPTION_BASE_URL,
    apiKey: config.TRANSCRIPTION_API_KEY,
    model: config.TRANSCRIPTION_MODEL,
    maxUploadBytes: config.TRANSCRIPTION_MAX_UPLOAD_BYTES,
    timeoutMs: config.TRANSCRIPTION_TIMEOUT_MS,
    maxAnswerBytes: config.PROVIDER_MAX_ANSWER_BYTES,
    clock,
  };
  switch (config.TRANSCRIPTION_PROVIDER) {
    case 'openai':
      return openAiTranscription(common);
    case 'deepgram':
      return deepgramTranscription(common);
    case 'none':
      return null;
  }
}

/** The analysis provider: the built-in rules (offline) or a chat-completions model. */
export function analysisProviderFromConfig(
  config: ProviderConfig,
  clock: Clock = systemClock,
): AnalysisProvider {
  switch (config.ANALYSIS_PROVIDER) {
    case 'openai':
      return openAiAnalysis({
        baseUrl: config.ANALYSIS_BASE_URL,
        apiKey: config.ANALYSIS_API_KEY,
        model: config.ANALYSIS_MODEL,
        timeoutMs: config.ANALYSIS_TIMEOUT_MS,
        maxAnswerBytes: config.PROVIDER_MAX_ANSWER_BYTES,
        clock,
      });
    case 'rules':
      return { name: 'rules', ...ruleBasedAnalyzer() };
  }
}

export type { AnalysisProvider, TranscriptionProvider } from './types.ts';
export { ProviderError } from './types.ts';
