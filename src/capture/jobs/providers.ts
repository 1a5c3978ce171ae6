import type { Clock } from '../../clock.ts';
import type { CaptureProviders } from '../../deps.ts';
import { ruleBasedAnalyzer } from '../analyzer.ts';
import {
  analysisProviderFromConfig,
  type ProviderConfig,
  transcriptionProviderFromConfig,
} from '../providers/index.ts';

/** The providers the settings name (TRANSCRIPTION_PROVIDER, ANALYSIS_PROVIDER): what deps.capture holds. */
export function captureProvidersFromConfig(config: ProviderConfig, clock: Clock): CaptureProviders {
  return {
    transcription: transcriptionProviderFromConfig(config, clock),
    analysis: analysisProviderFromConfig(config, clock),
  };
}

/**
 * The providers without any setting: the built-in rule-based analysis, no speech-to-text (uploaded
 * audio waits for a transcript posted by an adapter, as with TRANSCRIPTION_PROVIDER=none). Tests
 * put it back after swapping deps.capture for fakes.
 */
export function builtInCaptureProviders(): CaptureProviders {
  return { transcription: null, analysis: { name: 'rules', ...ruleBasedAnalyzer() } };
}
