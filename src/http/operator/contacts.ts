import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { createContact, updateContact } from '../../contacts/contacts.ts';
import { createContactSchema, updateContactSchema } from '../../contacts/schemas.ts';
import type { Deps } from '../../deps.ts';
import { ANY_TENANT, ENVIRONMENTS, tenantScope } from '../../domain/tenant.ts';
import { notFound, parseInput } from '../../errors.ts';
import { isUuid } from '../../ids.ts';

/** The operator's contact: the contact's fields and its data environment (default live). */
const operatorContactSchema = createContactSchema.extend({ environment: z.enum(ENVIRONMENTS).optional() });

/** POST /organizations/{org}/contacts and PATCH /contacts/{id} (under /admin/v1, operator token). */
export function contactOperatorRoutes(deps: Deps): FastifyPluginAsync {
  return async (app) => {
    app.post<{ Params: { org: string } }>('/organizations/:org/contacts', async (req, reply) => {
      if (!isUuid(req.params.org)) throw notFound(`No organization ${req.params.org}.`);
      const { environment, ...body } = parseInput(operatorContactSchema, req.body);
      const contact = await createContact(deps, tenantScope(req.params.org, environment ?? 'live'), body);
      return reply.code(201).send({ contact_id: contact.contact_id });
    });

    app.patch<{ Params: { id: string } }>('/contacts/:id', async (req) => {
      const body = parseInput(updateContactSchema, req.body);
      return updateContact(deps, ANY_TENANT, req.params.id, body);
    });
  };
}
