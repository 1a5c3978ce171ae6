import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { type CallViewRow, toCallView } from '../../../domain/call-view.ts';
import { notFound } from '../../../errors.ts';
import { isUuid } from '../../../ids.ts';
import { authenticate, requireScope } from './auth.ts';
import { callByIdPiggyback, listCallsPiggyback, piggybackPage } from './call-queries.ts';
import { type ListCallsFilter, readListCallsQuery } from './calls-params.ts';
import { readQuery } from './query.ts';
import { ok } from './reply.ts';

const NOT_FOUND = 'No call with this id exists in your organization.';

const callIdParam = (req: FastifyRequest): string | null => {
  const { id } = req.params as { id: string };
  return isUuid(id) ? id : null;
};

/** GET /calls' query string, read once per request (by the authentication's piggyback). */
const listFilters = new WeakMap<FastifyRequest, ListCallsFilter>();

/**
 * GET /calls (listCalls) and GET /calls/{id} (getCall), scope read.calls. The scope is checked
 * before the query string (403 before 400), the query string before the call (400 before 404).
 * Both read their calls in the authentication round trip (one query per request); a list request
 * whose query string is invalid authenticates alone, and its handler answers 400. When the list's
 * statement fails, the request is authenticated and counted alone and answered with the list's
 * error after the scope check, as when the list was a query of its own.
 */
export function callRoutes(deps: Deps): FastifyPluginAsync {
  const base = deps.config.publicBaseUrl;
  const authWithCall = authenticate(deps, {
    piggyback: (req) => ({ ...callByIdPiggyback, params: [callIdParam(req)] }),
  });
  const authWithList = authenticate(deps, {
    piggyback: (req) => {
      let filter: ListCallsFilter;
      try {
        filter = readListCallsQuery(req.url);
      } catch {
        return null;
      }
      listFilters.set(req, filter);
      return listCallsPiggyback(filter);
    },
    countWhenReadFails: true,
  });
  return async (app) => {
    app.get('/calls', { preHandler: authWithList, exposeHeadRoute: false }, async (req) => {
      requireScope(req, 'read.calls');
      const filter = listFilters.get(req) ?? readListCallsQuery(req.url);
      if (req.piggybackError) throw req.piggybackError;
      const { rows, hasMore } = piggybackPage(req.piggyback, filter);
      return ok(deps.clock, {
        items: rows.map((r) => toCallView(r, base)),
        has_more: hasMore,
        page: filter.page,
        limit: filter.limit,
      });
    });

    app.get('/calls/:id', { preHandler: authWithCall, exposeHeadRoute: false }, async (req) => {
      requireScope(req, 'read.calls');
      readQuery(req.url, {});
      // A malformed id cannot name an existing call: 404 like any unknown id (it was not looked up).
      const row = req.piggyback as CallViewRow | null;
      if (!row) throw notFound(NOT_FOUND);
      return ok(deps.clock, toCallView(row, base));
    });
  };
}
