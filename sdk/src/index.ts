export * from './api-errors.ts';
export * from './api-types.ts';
export * from './client.ts';
export * from './webhooks/index.ts';
