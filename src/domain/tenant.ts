/**
 * Whose data a read or write of tenant data may touch. Every area function over tenant data
 * (`capture/`, `contacts/`, `accounts/`, `webhooks/subscriptions/`, …) takes one, required, and its
 * SQL filters on it: that is the one door to tenant data (DESIGN.md), so a route or page that
 * passes the signed-in user's scope cannot reach another organization's rows, whatever id it was
 * given — the area answers 404 as for a row that does not exist.
 *
 * The data environment (spec/api-v1-additions.md, "Test mode") is part of the same value: every
 * organization has two separate worlds, live and test, and a scope names exactly one of them. An
 * area that filters on the scope filters on both fields, so a row of the other environment is
 * as absent as another organization's.
 */
export const ENVIRONMENTS = ['live', 'test'] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export interface TenantScope {
  readonly organizationId: string;
  readonly environment: Environment;
}

/** The scope of one organization's environment (a signed-in user's, an API key's); live unless told. */
export function tenantScope(organizationId: string, environment: Environment = 'live'): TenantScope {
  return { organizationId, environment };
}

/**
 * Every organization's rows: the operator API (`/admin/v1`, the service's operator) and the
 * service's own jobs (retention, the capture pipeline), which act on a row by its id whatever
 * organization owns it. Passing it is an explicit, greppable claim of that power.
 */
export const ANY_TENANT = Object.freeze({ anyTenant: true as const });

/** What an area command over tenant data takes: one tenant's scope, or the operator's ANY_TENANT. */
export type Scope = TenantScope | typeof ANY_TENANT;

/** The organization a scope is limited to, or null for ANY_TENANT (the SQL: `$n::uuid IS NULL OR …`). */
export function scopedOrganization(scope: Scope): string | null {
  return 'organizationId' in scope ? scope.organizationId : null;
}

/** The environment a scope is limited to, or null for ANY_TENANT (the SQL: `$n::text IS NULL OR …`). */
export function scopedEnvironment(scope: Scope): Environment | null {
  return 'environment' in scope ? scope.environment : null;
}
