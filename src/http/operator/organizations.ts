import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { createApiKey, listOrganizationApiKeys } from '../../accounts/api-keys.ts';
import {
  createOrganization,
  getOrganization,
  listOrganizations,
  ORG_LIST_MAX_LIMIT,
  updateOrganization,
} from '../../accounts/organizations.ts';
import { ROLES } from '../../accounts/roles.ts';
import { createTracker } from '../../accounts/trackers.ts';
import { createUser, listUsers } from '../../accounts/users.ts';
import type { Deps } from '../../deps.ts';
import { ENVIRONMENTS } from '../../domain/tenant.ts';
import { badRequest, notFound, parseInput } from '../../errors.ts';
import { pathId } from './path-id.ts';

/**
 * Operator provisioning (spec/operator-api.md "Provisioning"). Success bodies are plain objects
 * (no envelope) on the whole operator API; errors use the public error shape. Bodies are strict:
 * an unknown field is a 400 naming it, so a typo never silently changes nothing.
 */
const int32 = z.int().max(2_147_483_647);

const schemas = {
  createOrganization: z.strictObject({
    name: z.string(),
    owner_email: z.string(),
    owner_password: z.string(),
    country: z.string().nullable().optional(),
  }),
  updateOrganization: z.strictObject({
    name: z.string().optional(),
    entitlement: z.enum(['active', 'inactive']).optional(),
    retention_days: int32.positive().nullable().optional(),
    account_rate_limit_per_hour: int32.positive().optional(),
    max_active_subscriptions: int32.nonnegative().optional(),
    country: z.string().nullable().optional(),
    recording_consent: z
      .strictObject({
        enabled: z.boolean().optional(),
        text: z.string().nullable().optional(),
        language: z.string().nullable().optional(),
      })
      .optional(),
    redaction_enabled: z.boolean().optional(),
  }),
  // role: optional (accounts/roles.ts), admin when absent — what the spec's {email, password} made before roles.
  createUser: z.strictObject({ email: z.string(), password: z.string(), role: z.enum(ROLES).optional() }),
  createApiKey: z.strictObject({
    scopes: z.array(z.string()),
    user_id: z.string().optional(),
    rate_limit_per_hour: int32.positive().optional(),
    name: z.string().nullable().optional(),
    environment: z.enum(ENVIRONMENTS).optional(),
  }),
  createTracker: z.strictObject({ name: z.string(), terms: z.array(z.string()) }),
  listOrganizations: z.strictObject({
    page: z.coerce
      .number({ error: 'must be a whole number of at least 1' })
      .pipe(z.int({ error: 'must be a whole number of at least 1' }).min(1).max(1_000_000))
      .default(1),
    limit: z.coerce
      .number({ error: `must be a whole number from 1 to ${ORG_LIST_MAX_LIMIT}` })
      .pipe(
        z
          .int({ error: `must be a whole number from 1 to ${ORG_LIST_MAX_LIMIT}` })
          .min(1)
          .max(ORG_LIST_MAX_LIMIT),
      )
      .default(50),
  }),
};

type OrgParams = { Params: { org: string } };

/** Everything under /organizations: organizations, their users, API keys and trackers. */
export function organizationRoutes(deps: Deps): FastifyPluginAsync {
  const { db, clock } = deps;
  return async (app) => {
    app.post('/organizations', async (req, reply) => {
      const b = parseInput(schemas.createOrganization, req.body);
      const created = await db.transaction((tx) =>
        createOrganization(tx, {
          name: b.name,
          ownerEmail: b.owner_email,
          ownerPassword: b.owner_password,
          country: b.country,
          now: clock.now(),
        }),
      );
      return reply.code(201).send(created);
    });

    app.get('/organizations', async (req) => {
      const q = parseInput(schemas.listOrganizations, req.query, 'query');
      return listOrganizations(db, q);
    });

    app.get<OrgParams>('/organizations/:org', async (req) => {
      const org = await getOrganization(db, pathId(req.params.org, 'organization'));
      if (!org) throw notFound(`No organization ${req.params.org}.`);
      return org;
    });

    app.patch<OrgParams>('/organizations/:org', async (req) => {
      const orgId = pathId(req.params.org, 'organization');
      const b = parseInput(schemas.updateOrganization, req.body);
      if (Object.keys(b).length === 0) {
        throw badRequest(
          `Send at least one setting to change: ${Object.keys(schemas.updateOrganization.shape).join(', ')}.`,
        );
      }
      return db.transaction((tx) => updateOrganization(tx, orgId, b));
    });

    app.post<OrgParams>('/organizations/:org/users', async (req, reply) => {
      const organizationId = pathId(req.params.org, 'organization');
      const b = parseInput(schemas.createUser, req.body);
      const created = await db.transaction((tx) =>
        createUser(tx, {
          organizationId,
          email: b.email,
          password: b.password,
          role: b.role,
          now: clock.now(),
        }),
      );
      return reply.code(201).send(created);
    });

    app.get<OrgParams>('/organizations/:org/users', async (req) => {
      const organizationId = pathId(req.params.org, 'organization');
      if (!(await getOrganization(db, organizationId))) throw notFound(`No organization ${organizationId}.`);
      return { users: await listUsers(db, organizationId) };
    });

    app.get<OrgParams>('/organizations/:org/api-keys', async (req) => {
      const organizationId = pathId(req.params.org, 'organization');
      if (!(await getOrganization(db, organizationId))) throw notFound(`No organization ${organizationId}.`);
      return { api_keys: await listOrganizationApiKeys(db, organizationId) };
    });

    app.post<OrgParams>('/organizations/:org/api-keys', async (req, reply) => {
      const organizationId = pathId(req.params.org, 'organization');
      const b = parseInput(schemas.createApiKey, req.body);
      const created = await db.transaction((tx) =>
        createApiKey(tx, {
          organizationId,
          environment: b.environment,
          userId: b.user_id,
          scopes: b.scopes,
          name: b.name,
          rateLimitPerHour: b.rate_limit_per_hour,
          now: clock.now(),
        }),
      );
      return reply.code(201).send(created);
    });

    app.post<OrgParams>('/organizations/:org/trackers', async (req, reply) => {
      const organizationId = pathId(req.params.org, 'organization');
      const b = parseInput(schemas.createTracker, req.body);
      const created = await db.transaction((tx) =>
        createTracker(tx, { organizationId, name: b.name, terms: b.terms, now: clock.now() }),
      );
      return reply.code(201).send(created);
    });
  };
}
