/**
 * The processing providers' contracts (speech-to-text and analysis, ProviderError). They are
 * defined in src/domain/capture-providers.ts so that Deps (src/deps.ts) can name them without
 * every folder importing capture/; this file keeps the providers' import path.
 */
export * from '../../domain/capture-providers.ts';
