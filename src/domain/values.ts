/**
 * The spec's value sets ("States and transitions" → "Value sets"). Field names, types and
 * enumerated values do not change meaning within v1, so these lists are the single source for the
 * database CHECK constraints' mirror, the REST filters and the OpenAPI enums.
 */
export { OUTBOUND_LIFECYCLES, type OutboundLifecycle } from './outbound-lifecycle.ts';

export const DIRECTIONS = ['inbound', 'outbound'] as const;
export type Direction = (typeof DIRECTIONS)[number];

/** Legacy CRM kanban status (calls.crm_status); the `status` filter of GET /calls. */
export const CRM_STATUSES = ['new', 'to_call', 'contacted', 'qualified'] as const;
export type CrmStatus = (typeof CRM_STATUSES)[number];

/** calls.review_status; null when the call has none. */
export const REVIEW_STATUSES = ['new', 'needs_decision', 'needs_review', 'handled', 'no_action'] as const;
export type ReviewStatus = (typeof REVIEW_STATUSES)[number];

/** The data environment of a key (GET /me) and of all tenant data: live or test (domain/tenant.ts). */
export { ENVIRONMENTS } from './tenant.ts';
