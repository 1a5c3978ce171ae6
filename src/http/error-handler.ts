import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { DatabaseError } from '../db/types.ts';
import { AppError } from '../errors.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';

/** What an error body may add to the spec's (optional fields, allowed within v1). */
export interface ErrorExtras {
  /** the request id (X-Request-Id), as meta.request_id */
  requestId?: string;
  /** the query parameter or body field a 400 is about, as error.param */
  param?: string;
}

/** The error body of every listener (spec "Errors"), plus the optional error.param and meta.request_id. */
export function errorBody(code: string, message: string, now: Date, extras: ErrorExtras = {}) {
  return {
    success: false as const,
    error: { code, message, ...(extras.param === undefined ? {} : { param: extras.param }) },
    meta: {
      timestamp: now.toISOString(),
      ...(extras.requestId === undefined ? {} : { request_id: extras.requestId }),
    },
  };
}

/**
 * One handler renders every error in the spec's shape. 5xx bodies never carry internals: the
 * cause goes to the log (which never holds secrets), the client gets a stable code and message.
 */
export function installErrorHandling(app: FastifyInstance, clock: Clock): void {
  app.setErrorHandler((err: FastifyError | AppError | DatabaseError | Error, req, reply) => {
    const now = clock.now();
    reply.header(REQUEST_ID_HEADER, req.id);
    const ids = { requestId: req.id };
    if (err instanceof AppError) {
      if (err.status >= 500) req.log.error({ err: err.cause ?? err }, 'request failed');
      if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
      return reply.code(err.status).send(errorBody(err.code, err.message, now, { ...ids, param: err.param }));
    }
    if (err instanceof DatabaseError) {
      req.log.error({ err }, 'database error');
      return reply
        .code(500)
        .send(
          errorBody(
            'DATABASE_ERROR',
            'The service could not complete the request; retry with backoff.',
            now,
            ids,
          ),
        );
    }
    const fe = err as FastifyError;
    if (
      fe.validation ||
      fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ||
      fe.code === 'FST_ERR_CTP_EMPTY_JSON_BODY'
    ) {
      return reply.code(fe.statusCode ?? 400).send(errorBody('BAD_REQUEST', fe.message, now, ids));
    }
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send(errorBody('PAYLOAD_TOO_LARGE', 'Request body is too large.', now, ids));
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      // Malformed JSON and similar client errors raised by Fastify itself.
      return reply.code(fe.statusCode).send(errorBody('BAD_REQUEST', fe.message, now, ids));
    }
    req.log.error({ err }, 'unhandled error');
    return reply
      .code(500)
      .send(
        errorBody(
          'DATABASE_ERROR',
          'The service could not complete the request; retry with backoff.',
          now,
          ids,
        ),
      );
  });

  app.setNotFoundHandler((req, reply) => {
    reply.code(404).send(
      errorBody('NOT_FOUND', `No route ${req.method} ${req.url.split('?')[0]}.`, clock.now(), {
        requestId: req.id,
      }),
    );
  });
}

/**
 * Fastify's own early errors (a malformed percent-encoding in the path, say) are answered in the
 * spec's error shape too, instead of Fastify's default body.
 */
export function frameworkErrors(clock: Clock) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    reply
      .code(400)
      .header('cache-control', 'no-store')
      .header(REQUEST_ID_HEADER, req.id)
      .send(
        errorBody(
          'BAD_REQUEST',
          `The request URL is malformed (${err.code}): check its percent-encoding.`,
          clock.now(),
          { requestId: req.id },
        ),
      );
  };
}
