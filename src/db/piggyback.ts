/**
 * A read that rides on another statement's round trip: the one database helper behind which the
 * REST API saves a round trip per request (docs/benchmarks.md, "REST API"). The statement that
 * carries it (accounts/api-key-auth.ts: authentication and rate counting) runs the read as a
 * sub-select and hands its first row back as JSON; the area that owns the read (capture/call-list.ts:
 * one call by id) writes its SQL, scoped by the carrier's `a.organization_id` and `a.environment` — so the read is still
 * the area's, and still filtered on the tenant the carrier authenticated.
 */
export interface Piggyback {
  /** prepared-statement name of the combined statement */
  name: string;
  /** SELECT …, may reference a.organization_id and a.environment (the carrier's tenant scope) and $7 (the route's parameter) */
  sql: string;
}
