/** The portable part of the webhook toolkit: no `node:` import anywhere below this module. */
export * from '../crypto/provider.ts';
export * from '../crypto/subtle.ts';
export * from './bytes.ts';
export * from './dedupe.ts';
export * from './errors.ts';
export * from './event-data.ts';
export * from './events.ts';
export * from './handle.ts';
export * from './handshake.ts';
export * from './headers.ts';
export * from './verifier.ts';
