import type { FastifyPluginAsync, preHandlerAsyncHookHandler } from 'fastify';
import { createContact, findContacts, getContact, updateContact } from '../../../contacts/contacts.ts';
import type { Deps } from '../../../deps.ts';
import { notFound } from '../../../errors.ts';
import { keyScope, requireScope } from './auth.ts';
import { readBody } from './body.ts';
import {
  checkEmail,
  createContactBody,
  readListContactsQuery,
  updateContactBody,
} from './contacts-params.ts';
import { sendIdempotent } from './idempotency.ts';
import { readQuery } from './query.ts';
import { ok } from './reply.ts';

const NOT_FOUND = 'No contact with this id exists in your organization.';

/**
 * The contacts API (spec/api-v1-additions.md "Contacts"): GET /contacts and GET /contacts/{id}
 * (scope read.contacts), POST /contacts and PATCH /contacts/{id} (scope write.contacts). Every read
 * and write goes through the contacts area with the key's scope (keyScope): another organization's
 * or environment's contact is absent there, so it answers 404. Order: 403 scope → 400 query or
 * Idempotency-Key → 400 body → 404 → 422 → 409.
 */
export function contactRoutes(deps: Deps, auth: preHandlerAsyncHookHandler): FastifyPluginAsync {
  return async (app) => {
    app.get('/contacts', { preHandler: auth, exposeHeadRoute: false }, async (req) => {
      const p = requireScope(req, 'read.contacts');
      const filter = readListContactsQuery(req.url);
      const page = await findContacts(deps.db, keyScope(p), filter);
      return ok(deps.clock, { ...page, page: filter.page, limit: filter.limit });
    });

    app.get<{ Params: { id: string } }>(
      '/contacts/:id',
      { preHandler: auth, exposeHeadRoute: false },
      async (req) => {
        const p = requireScope(req, 'read.contacts');
        readQuery(req.url, {});
        const contact = await getContact(deps.db, keyScope(p), req.params.id);
        if (!contact) throw notFound(NOT_FOUND);
        return ok(deps.clock, contact);
      },
    );

    app.post('/contacts', { preHandler: auth }, async (req, reply) => {
      const p = requireScope(req, 'write.contacts');
      readQuery(req.url, {});
      const body = readBody(req, createContactBody);
      const scope = keyScope(p);
      return sendIdempotent(deps, req, reply, scope, 'createContact', body, async () => {
        checkEmail(body.email);
        const contact = await createContact(deps, scope, body, { uniquePhone: true });
        return { status: 201, payload: ok(deps.clock, contact) };
      });
    });

    app.patch<{ Params: { id: string } }>('/contacts/:id', { preHandler: auth }, async (req) => {
      const p = requireScope(req, 'write.contacts');
      readQuery(req.url, {});
      const body = readBody(req, updateContactBody);
      const scope = keyScope(p);
      checkEmail(body.email);
      const contact = await updateContact(deps, scope, req.params.id, body, { uniquePhone: true });
      return ok(deps.clock, contact);
    });
  };
}
