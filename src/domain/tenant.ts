/**
 * Whose data a read or write of tenant data may touch. Every area function over tenant data
 * (`capture/`, `contacts/`, `accounts/`, `webhooks/subscriptions/`, …) takes one, required, and its
 * SQL filters on it: that is the one door to tenant data (DESIGN.md), so a route or page that
 * passes the signed-in user's scope cannot reach another organization's rows, whatever id it was
 * given — the area answers 404 as for a row that does not exist.
 *
 * Test mode (spec/api-v1-additions.md) adds the data environment (live | test) to this value, in
 * this one place.
 */
export interface TenantScope {
  readonly organizationId: string;
}

/** The scope of one organization (a signed-in user's, an API key's). */
export function tenantScope(organizationId: string): TenantScope {
  return { organizationId };
}
