import { scopeParams } from '../db/tenant-sql.ts';
import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import { type FollowupDraft, normalizeImportedAnalysis, type ProcessedAnalysis } from '../domain/analysis.ts';
import { INITIAL_OUTBOUND_LIFECYCLE } from '../domain/outbound-lifecycle.ts';
import { normalizePhone } from '../domain/phone.ts';
import type { TenantScope } from '../domain/tenant.ts';
import { notFound, validationError } from '../errors.ts';
import { newId } from '../ids.ts';
import { organizationOwner } from './call-record.ts';
import { queueTranscript, settleCompletion, storeAnalysis } from './pipeline.ts';
import type { CreateCallBody } from './schemas.ts';

/**
 * POST /admin/v1/organizations/{org}/calls: a call as a telephony adapter (or an importer) reports it,
 * in the scope's environment (the body's `environment`, live by default).
 *
 * - The customer is the caller on inbound calls and the dialled number (customer_phone, required) on
 *   outbound calls. An inbound caller id that is no usable number (anonymous …) is stored with null
 *   customer_phone_*; a dialled or company number that does not parse is a 422.
 * - Outbound calls start in ringing_agent and need the agent who placed them; without agent_user_id
 *   the organization's owner is recorded (the account holder answers for calls placed in its name).
 * - recording_mode no_recording: the recording is never captured (recording_state not_captured).
 * - An imported call may come transcribed (transcript_original) and/or analysed (transcript_processed):
 *   an analysis given is stored as is (its followup_email, if any, is the draft), the call is
 *   processed at once and the completion step runs in the same transaction (it waits for the
 *   recording like any call); a transcript alone is queued for the analyse stage in that transaction
 *   (`queued: true`: the route runs it right after the response), like POST …/transcript.
 */
export async function createCall(
  deps: Deps,
  scope: TenantScope,
  body: CreateCallBody,
): Promise<{ call_id: string; queued: boolean }> {
  const { organizationId } = scope;
  const org = await deps.db.query<{ country: string | null }>(
    'SELECT country FROM organizations WHERE id = $1',
    [organizationId],
  );
  if (!org.rows[0]) throw notFound(`No organization ${organizationId}.`);
  const { country } = org.rows[0];

  const outbound = body.direction === 'outbound';
  const customerRaw = outbound ? body.customer_phone! : body.caller_phone;
  const customer = normalizePhone(customerRaw, country);
  if (outbound && !customer) {
    throw validationError(
      `customer_phone "${customerRaw}" is not a usable phone number; send it in E.164 (+14155552671)${country ? ` or in ${country} national format` : ''}.`,
    );
  }
  let companyE164: string | null = null;
  if (body.company_phone != null) {
    companyE164 = normalizePhone(body.company_phone, country)?.e164 ?? null;
    if (!companyE164) {
      throw validationError(
        `company_phone "${body.company_phone}" is not a usable phone number; send it in E.164.`,
      );
    }
  }

  const processed: { analysis: ProcessedAnalysis; followup: FollowupDraft | null } | null =
    body.transcript_processed ? normalizeImportedAnalysis(body.transcript_processed) : null;
  const toAnalyse = !processed && body.transcript_original ? body.transcript_original : null;

  const id = newId();
  const now = deps.clock.now();
  await deps.db.transaction(async (tx) => {
    const agent = await resolveAgent(tx, organizationId, body.agent_user_id ?? null, outbound);
    await tx.query(
      `INSERT INTO calls (id, organization_id, environment, direction, caller_phone, customer_phone,
         customer_phone_e164, customer_phone_national, customer_phone_rdigits, company_phone_e164, caller_name,
         agent_user_id, crm_status, review_status, outbound_lifecycle, recording_mode, recording_state, created_at,
         updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)`,
      [
        id,
        ...scopeParams(scope),
        body.direction,
        body.caller_phone,
        customerRaw,
        customer?.e164 ?? null,
        customer?.national ?? null,
        customer?.rdigits ?? null,
        companyE164,
        body.caller_name ?? null,
        agent,
        body.crm_status ?? 'new',
        body.review_status ?? null,
        outbound ? INITIAL_OUTBOUND_LIFECYCLE : null,
        body.recording_mode ?? 'normal',
        body.recording_mode === 'no_recording' ? 'not_captured' : 'pending',
        body.created_at ? new Date(body.created_at) : now,
        now,
      ],
    );
    if (processed) {
      await storeAnalysis(tx, {
        callId: id,
        organizationId,
        transcriptOriginal: body.transcript_original ?? null,
        analysis: processed.analysis,
        followup: processed.followup,
        now,
      });
      await settleCompletion(tx, deps, { id, organization_id: organizationId });
    } else if (toAnalyse !== null) {
      await queueTranscript(tx, deps, { id, organization_id: organizationId }, { text: toAnalyse });
    }
  });
  return { call_id: id, queued: toAnalyse !== null };
}

/** The agent of the call: the given user (who must belong to the organization), else the owner for outbound. */
async function resolveAgent(
  tx: Queryable,
  organizationId: string,
  agentUserId: string | null,
  outbound: boolean,
): Promise<string | null> {
  if (agentUserId) {
    const u = await tx.query('SELECT 1 FROM users WHERE id = $1 AND organization_id = $2', [
      agentUserId,
      organizationId,
    ]);
    if (u.rowCount === 0)
      throw validationError(`agent_user_id ${agentUserId} is not a user of this organization.`);
    return agentUserId;
  }
  if (!outbound) return null;
  const owner = await organizationOwner(tx, organizationId);
  if (!owner)
    throw validationError('agent_user_id is required: the organization has no user to place the call.');
  return owner;
}
