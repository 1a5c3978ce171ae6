/** `@callcap/sdk`: everything, for Node (the synchronous verifier uses `node:crypto`). */
export * from './api-errors.ts';
export * from './api-types.ts';
export * from './client.ts';
export * from './webhooks/index.ts';
