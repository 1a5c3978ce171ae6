import { z } from 'zod';
import { importedAnalysisSchema } from '../domain/analysis.ts';
import { BULK_MAX } from '../domain/inbox.ts';
import { OUTBOUND_LIFECYCLES } from '../domain/outbound-lifecycle.ts';
import { ENVIRONMENTS } from '../domain/tenant.ts';
import { CRM_STATUSES, DIRECTIONS, REVIEW_STATUSES } from '../domain/values.ts';
import { DELETION_REASONS } from '../webhooks/outbox/event-data/deletion.ts';

/**
 * Bodies of the call-ingestion operations (spec/operator-api.md "Call ingestion"). Strict objects, like
 * the rest of the operator API: an unknown field is a 400 naming it.
 */

/** Longest transcript accepted (about ten hours of speech). */
export const TRANSCRIPT_MAX_CHARS = 1_000_000;
const PHONE_MAX = 64;

const phone = z.string().trim().min(1).max(PHONE_MAX);
const isoDateTime = z.iso.datetime({
  offset: true,
  error: 'must be an ISO 8601 date-time, e.g. 2026-06-15T10:00:00Z',
});
const transcript = z
  .string()
  .max(TRANSCRIPT_MAX_CHARS)
  .refine((s) => s.trim().length > 0, 'must not be empty');
const languageCode = z
  .string()
  .regex(/^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8})*$/, 'must be a language code such as en or de-AT');

export const createCallSchema = z
  .strictObject({
    direction: z.enum(DIRECTIONS),
    caller_phone: phone,
    customer_phone: phone.nullish(),
    company_phone: phone.nullish(),
    caller_name: z.string().trim().max(200).nullish(),
    created_at: isoDateTime.optional(),
    agent_user_id: z.guid().nullish(),
    recording_mode: z.enum(['normal', 'no_recording']).optional(),
    crm_status: z.enum(CRM_STATUSES).optional(),
    review_status: z.enum(REVIEW_STATUSES).nullish(),
    transcript_original: transcript.nullish(),
    transcript_processed: importedAnalysisSchema.nullish(),
    /** the data environment the call belongs to (spec/api-v1-additions.md "Test mode"); default live */
    environment: z.enum(ENVIRONMENTS).optional(),
  })
  .superRefine((b, ctx) => {
    if (b.direction === 'outbound' && !b.customer_phone) {
      ctx.addIssue({
        code: 'custom',
        path: ['customer_phone'],
        message: 'is required for outbound calls (the dialled number)',
      });
    }
  });
export type CreateCallBody = z.infer<typeof createCallSchema>;

export const transcriptSchema = z.strictObject({
  text: transcript,
  language: languageCode.nullish(),
});

export const lifecycleSchema = z.strictObject({
  state: z.enum(OUTBOUND_LIFECYCLES),
  failure_reason: z.string().trim().min(1).max(200).nullish(),
});

export const scheduleDeletionSchema = z.strictObject({
  reason: z.enum(DELETION_REASONS),
  pending_deletion_at: isoDateTime.optional(),
});

/** A call's CRM status and review status, as the web app's call page sets them (setCallStatuses). */
export const callStatusesSchema = z.strictObject({
  crm_status: z.enum(CRM_STATUSES),
  review_status: z.enum(REVIEW_STATUSES).nullable(),
});

/**
 * The lead inbox's quick and bulk actions (setStatusesOfCalls): the selected calls and the change,
 * a CRM status, a review status, or both. At most BULK_MAX calls: one inbox page at its largest.
 */
export const callStatusesBulkSchema = z
  .strictObject({
    ids: z.array(z.string()).min(1).max(BULK_MAX),
    crm_status: z.enum(CRM_STATUSES).optional(),
    review_status: z.enum(REVIEW_STATUSES).optional(),
  })
  .refine((v) => v.crm_status !== undefined || v.review_status !== undefined, {
    path: ['crm_status'],
    message: 'Give crm_status, review_status or both.',
  });
