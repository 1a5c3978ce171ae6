/** `@callcap/sdk/webhooks`: the webhook toolkit for Node, with the synchronous `node:crypto` verifier. */
export * from '../crypto/node.ts';
export * from './core.ts';
export * from './sign.ts';
export * from './verify.ts';
