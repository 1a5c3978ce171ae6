import type { FastifyInstance } from 'fastify';

/**
 * Largest request body of both listeners, 1 MiB: their bodies are small JSON objects (the largest, an
 * imported call with its transcript, is tens of KiB). Only the operator's audio upload
 * (PUT /admin/v1/calls/{id}/recording) sets its own limit, MAX_RECORDING_BYTES.
 */
export const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * The one JSON body parser of both listeners: Fastify's own (prototype poisoning refused), except
 * that an empty body (or only whitespace) with `Content-Type: application/json` is no body at all,
 * as if the header were absent. Clients that set the header on every request can call body-less
 * actions (POST …/trash, …/restore, console actions); an operation that needs fields still answers
 * 400 naming them. Registered on the root instance, so every route inherits it.
 */
export function installJsonParser(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if ((body as string).trim() === '') {
      done(null, undefined);
      return;
    }
    parse(req, body as string, done);
  });
}
