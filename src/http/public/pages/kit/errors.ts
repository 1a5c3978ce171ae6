import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../../../deps.ts';
import { AppError } from '../../../../errors.ts';
import { errorBody } from '../../../error-handler.ts';
import { REQUEST_ID_HEADER } from '../../../request-id.ts';
import { html } from './html.ts';
import { renderPage } from './layout.ts';

const TITLES: Record<number, string> = {
  400: 'That did not work',
  401: 'Please sign in',
  402: 'Subscription inactive',
  403: 'Not allowed',
  404: 'Page not found',
  409: 'Not possible right now',
  413: 'Too much data',
  415: 'That did not work',
  429: 'Too many requests',
};

/**
 * Errors of the pages become pages: the status, a title and the AppError's message (which is
 * written for people and never holds internals); anything else is logged and shown as a generic
 * 500 page. The request id is on the page, so a user can quote it to support.
 */
export function pageErrorHandler() {
  return (err: FastifyError | AppError | Error, req: FastifyRequest, reply: FastifyReply) => {
    let status = 500;
    let message = 'Something went wrong on our side. Please try again in a moment.';
    if (err instanceof AppError) {
      status = err.status;
      if (status < 500) message = err.message;
      else req.log.error({ err: err.cause ?? err }, 'page failed');
      if (err.retryAfterSeconds !== undefined) reply.header('retry-after', String(err.retryAfterSeconds));
    } else {
      const code = (err as FastifyError).statusCode;
      if (code && code >= 400 && code < 500) {
        status = code;
        message =
          code === 413 ? 'The form sent too much data.' : 'The request could not be read. Please try again.';
      } else {
        req.log.error({ err }, 'page failed');
      }
    }
    reply.header(REQUEST_ID_HEADER, req.id);
    return renderPage(reply, {
      title: TITLES[status] ?? 'Something went wrong',
      user: req.pageUser ?? null,
      status,
      notice: { kind: 'error', text: message },
      body: html`<p><a href="/app/calls">Back to the calls</a></p>
        <p class="muted">Reference: ${req.id}</p>`,
    });
  };
}

/** Unknown addresses under /app: a page, except under /app/api, which keeps the JSON error shape. */
export function pageNotFound(deps: Deps) {
  return (req: FastifyRequest, reply: FastifyReply) => {
    const path = req.url.split('?')[0] as string;
    if (path === '/app/api' || path.startsWith('/app/api/')) {
      return reply
        .code(404)
        .send(
          errorBody('NOT_FOUND', `No route ${req.method} ${path}.`, deps.clock.now(), { requestId: req.id }),
        );
    }
    return renderPage(reply, {
      title: TITLES[404] as string,
      user: null,
      status: 404,
      notice: { kind: 'error', text: 'There is no page at this address.' },
      body: html`<p><a href="/app/calls">Go to the calls</a></p>`,
    });
  };
}
