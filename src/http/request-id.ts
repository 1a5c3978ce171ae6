import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type FastifyInstance, LogController } from 'fastify';

/** The header a request id is accepted from and answered in, on both listeners. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * A caller's id is kept when it is 1 to 128 characters of letters, digits and `. _ : -` (a UUID, a
 * trace id, `req-42`); anything else (empty, longer, spaces, non-ASCII, repeated header) is replaced
 * by a fresh UUID, so the id is always safe to log and to echo.
 */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's genReqId: the caller's well-formed X-Request-Id, otherwise a fresh UUID. */
export function requestIdOf(raw: IncomingMessage): string {
  const given = raw.headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/**
 * The Fastify options of both listeners: the id above (never Fastify's own header reading, which
 * takes any value), logged as `request_id` with every line of the request.
 */
export function requestIdOptions() {
  return {
    genReqId: requestIdOf,
    requestIdHeader: false as const,
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
  };
}

/** Every answer carries X-Request-Id (set first, so that errors raised by later hooks carry it too). */
export function installRequestIds(app: FastifyInstance): void {
  app.addHook('onRequest', async (req, reply) => {
    reply.header(REQUEST_ID_HEADER, req.id);
  });
}
