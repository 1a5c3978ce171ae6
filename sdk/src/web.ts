/**
 * `@callcap/sdk/web`: everything that runs with only Web Crypto and `fetch` (Cloudflare Workers, Deno,
 * Bun, browsers, Node). Imports no `node:` built-in; verification is asynchronous
 * (`verifyWebhookAsync`, `WebhookVerifier#verifyAsync`, `handleWebhook`).
 */
export * from './api-errors.ts';
export * from './api-types.ts';
export * from './client.ts';
export * from './webhooks/core.ts';
