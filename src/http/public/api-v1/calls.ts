import type { FastifyPluginAsync, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { callByIdPiggyback, listCalls } from '../../../capture/call-list.ts';
import type { Deps } from '../../../deps.ts';
import { type CallViewRow, toCallView } from '../../../domain/call-view.ts';
import { notFound } from '../../../errors.ts';
import { isUuid } from '../../../ids.ts';
import { authenticate, keyScope, requireScope } from './auth.ts';
import { readListCallsQuery } from './calls-params.ts';
import { readQuery } from './query.ts';
import { ok } from './reply.ts';

const NOT_FOUND = 'No call with this id exists in your organization.';

const callIdParam = (req: FastifyRequest): string | null => {
  const { id } = req.params as { id: string };
  return isUuid(id) ? id : null;
};

/**
 * GET /calls (listCalls) and GET /calls/{id} (getCall), scope read.calls. The scope is checked
 * before the query string (403 before 400), the query string before the call (400 before 404).
 * GET /calls/{id} reads its call in the authentication round trip (one query per request).
 */
export function callRoutes(deps: Deps, auth: preHandlerAsyncHookHandler): FastifyPluginAsync {
  const base = deps.config.publicBaseUrl;
  const authWithCall = authenticate(deps, { piggyback: { ...callByIdPiggyback, param: callIdParam } });
  return async (app) => {
    app.get('/calls', { preHandler: auth, exposeHeadRoute: false }, async (req) => {
      const p = requireScope(req, 'read.calls');
      const filter = readListCallsQuery(req.url);
      const { rows, hasMore } = await listCalls(deps.db, keyScope(p), filter);
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
