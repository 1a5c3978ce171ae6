import type { FastifyInstance } from 'fastify';

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
