export * from './dedupe.ts';
export * from './errors.ts';
export * from './events.ts';
export * from './handle.ts';
export * from './handshake.ts';
export * from './headers.ts';
export * from './sign.ts';
export * from './verify.ts';
