import { randomUUID } from 'node:crypto';
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../clock.ts';
import { DatabaseError } from '../db/types.ts';
import { AppError } from '../errors.ts';
import { REQUEST_ID_HEADER } from './request-id.ts';

/** What an error body may add to the spec's (optional fields, allowed within v1). */
export interface ErrorExtras {
  /** the request id (X-Request-Id), as meta.request_id */
  requestId?: string;
  /** the query parameter, body field or header a 400 or 422 is about, as error.param */
  param?: string;
  /** CONTACT_EXISTS: the contact holding the number, as error.contact_id */
  contactId?: string;
}

/** The error body of every listener (spec "Errors"), plus the optional error.param and meta.request_id. */
export function errorBody(code: string, message: string, now: Date, extras: ErrorExtras = {}) {
  return {
    success: false as const,
    error: {
      code,
      message,
      ...(extras.param === undefined ? {} : { param: extras.param }),
      ...(extras.contactId === undefined ? {} : { contact_id: extras.contactId }),
    },
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
      return reply
        .code(err.status)
        .send(errorBody(err.code, err.message, now, { ...ids, param: err.param, contactId: err.contactId }));
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
    const status = fe.statusCode;
    if (fe.validation || (status && status >= 400 && status < 500)) {
      // Fastify's own client errors (body parsing, media type, size): the spec's shape, a fitting code.
      const { code, message } = frameworkClientError(fe, req);
      return reply.code(status ?? 400).send(errorBody(code, message, now, ids));
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

/** Code and message of a 4xx Fastify raises itself (while reading or parsing the body). */
function frameworkClientError(fe: FastifyError, req: FastifyRequest): { code: string; message: string } {
  const type = String(req.headers['content-type'] ?? '')
    .split(';')[0]
    .trim();
  switch (fe.statusCode) {
    case 413: {
      const limit = req.routeOptions.bodyLimit;
      return {
        code: 'PAYLOAD_TOO_LARGE',
        message: `The request body is too large: this operation accepts at most ${limit} bytes.`,
      };
    }
    case 415:
      return {
        code: 'UNSUPPORTED_MEDIA_TYPE',
        message: `Unsupported Content-Type "${type}"; send the body as JSON with Content-Type: application/json.`,
      };
    default:
      if (fe.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || fe instanceof SyntaxError) {
        return {
          code: 'BAD_REQUEST',
          message:
            'The request body is not valid JSON; send a JSON object with Content-Type: application/json.',
        };
      }
      return { code: 'BAD_REQUEST', message: fe.message };
  }
}

/**
 * Answers to requests Node's HTTP parser rejects before Fastify sees them (Fastify's
 * clientErrorHandler option, the server's 'clientError' event): headers over the size limit 431,
 * a request that took too long to arrive 408, anything unparsable (bytes not allowed in the request
 * line or a header, a malformed Content-Length …) 400. Written straight to the socket, in the
 * spec's error shape, then the connection is closed (its framing can no longer be trusted).
 */
export function clientErrorHandler(clock: Clock) {
  return (err: NodeJS.ErrnoException & { bytesParsed?: number }, socket: Socket): void => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    let status = 400;
    let message = `The request is not valid HTTP/1.1 (${err.code ?? 'parse error'}): check the request line and the headers.`;
    if (err.code === 'HPE_HEADER_OVERFLOW') {
      status = 431;
      message = `The request headers are too large: at most ${maxHeaderSize} bytes in total are accepted.`;
    } else if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      status = 408;
      message = 'The request did not arrive in time; send it again.';
    }
    // No request could be read, so no caller's id either: a fresh one, as on every other answer.
    const requestId = randomUUID();
    const body = JSON.stringify(errorBody('BAD_REQUEST', message, clock.now(), { requestId }));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
          'Content-Type: application/json; charset=utf-8\r\n' +
          `X-Request-Id: ${requestId}\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n` +
          'Cache-Control: no-store\r\n' +
          'Connection: close\r\n\r\n' +
          body,
      );
    }
    socket.destroy();
  };
}

/**
 * Fastify's own early errors (a malformed percent-encoding in the path, say) are answered in the
 * spec's error shape too, instead of Fastify's default body.
 */
/** The one answer to a /telephony callback that is not verifiably Twilio's (src/http/public/telephony/twilio-auth.ts). */
export const TELEPHONY_FORBIDDEN_MESSAGE = 'Missing or invalid X-Twilio-Signature, or unknown AccountSid.';

export function frameworkErrors(clock: Clock) {
  return (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    if (req.url.startsWith('/telephony/')) {
      // Twilio never sends a malformed URL: under /telephony that is a caller that is not Twilio.
      return reply
        .code(403)
        .header(REQUEST_ID_HEADER, req.id)
        .send(errorBody('FORBIDDEN', TELEPHONY_FORBIDDEN_MESSAGE, clock.now(), { requestId: req.id }));
    }
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
