import {
  type Environment,
  type Scope,
  scopedEnvironment,
  scopedOrganization,
  type TenantScope,
} from '../domain/tenant.ts';

/**
 * The one SQL form of a tenant scope (DESIGN.md "Tenant data has one door"): every area function
 * that reads or writes tenant data by a TenantScope filters with `inScope` and passes
 * `scopeParams(scope)` at the two parameter numbers it named, so the organization AND the data
 * environment (live | test) are always asked together; a row of another organization or of the other
 * environment is as absent as an unknown id. Inserts write `scope.environment` beside the
 * organization. `inAnyScope` is the form for a `Scope` that may be the operator's ANY_TENANT.
 *
 *   `SELECT … FROM calls c WHERE c.id = $1 AND ${inScope('c', 2, 3)}`, [id, ...scopeParams(scope)]
 */
export function inScope(alias: string | null, org: number | string, env: number | string): string {
  const a = alias ? `${alias}.` : '';
  return `${a}organization_id = ${ref(org)}::uuid AND ${a}environment = ${ref(env)}::text`;
}

/** As inScope, for a Scope that may be ANY_TENANT (its parameters are then null: every row). */
export function inAnyScope(alias: string | null, org: number | string, env: number | string): string {
  const a = alias ? `${alias}.` : '';
  return `(${ref(org)}::uuid IS NULL OR ${a}organization_id = ${ref(org)}::uuid)
    AND (${ref(env)}::text IS NULL OR ${a}environment = ${ref(env)}::text)`;
}

const ref = (n: number | string): string => (typeof n === 'number' ? `$${n}` : n);

/** The parameters of inScope: [organization id, environment]. */
export function scopeParams(scope: TenantScope): [string, Environment] {
  return [scope.organizationId, scope.environment];
}

/** The parameters of inAnyScope: nulls for ANY_TENANT. */
export function anyScopeParams(scope: Scope): [string | null, Environment | null] {
  return [scopedOrganization(scope), scopedEnvironment(scope)];
}

/** Whether a row already read (with its organization_id and environment) lies within the scope. */
export function rowInScope(row: { organization_id: string; environment: string }, scope: Scope): boolean {
  const org = scopedOrganization(scope);
  const env = scopedEnvironment(scope);
  return (org === null || row.organization_id === org) && (env === null || row.environment === env);
}
