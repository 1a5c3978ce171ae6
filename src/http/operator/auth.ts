import { timingSafeEqual } from 'node:crypto';
import type { onRequestAsyncHookHandler } from 'fastify';
import type { Deps } from '../../deps.ts';
import { unauthorized } from '../../errors.ts';
import { sha256Hex } from '../../keys.ts';

/** Bearer ADMIN_TOKEN, compared in constant time (hashes have equal length whatever the input). */
export function operatorAuth(deps: Deps): onRequestAsyncHookHandler {
  const expected = Buffer.from(sha256Hex(deps.adminToken), 'hex');
  return async (req) => {
    const m = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    if (!m || !timingSafeEqual(Buffer.from(sha256Hex(m[1]), 'hex'), expected)) {
      throw unauthorized('Missing or invalid operator token: send Authorization: Bearer <ADMIN_TOKEN>.');
    }
  };
}
