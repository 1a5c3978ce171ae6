import type { Queryable } from '../../../db/types.ts';
import type { Deps } from '../../../deps.ts';
import {
  INITIAL_OUTBOUND_LIFECYCLE,
  isOutboundLifecycle,
  type OutboundLifecycle,
  transitionOutbound,
} from '../../../domain/outbound-lifecycle.ts';
import {
  type InitiateFailureReason,
  type OutboundObservation,
  type OutboundPlan,
  planOutbound,
} from '../../../domain/outbound-progress.ts';
import { type NormalizedPhone, normalizePhone } from '../../../domain/phone.ts';
import { AppError, notFound, validationError } from '../../../errors.ts';
import { isUuid, newId } from '../../../ids.ts';
import { type IngestCall, lockLiveCall } from '../../call-record.ts';
import { applyOutboundMove } from '../../lifecycle.ts';
import {
  findOrganizationAccount,
  findPhoneNumber,
  type PhoneNumber,
  type TelephonyAccount,
} from '../accounts.ts';
import { claimCallback } from '../callbacks.ts';
import {
  type OutboundCallbackKind,
  observeOutboundCallback,
  outboundCallbackKey,
} from './outbound-callbacks.ts';
import { AGENT_NO_KEY, agentAnswerTwiml, customerDialTwiml, hangupTwiml } from './outbound-twiml.ts';
import { createCall, TwilioRestError } from './rest.ts';
import type { FormParams } from './signature.ts';
import { callUrl } from './urls.ts';

/**
 * Outbound click-to-call through Twilio (docs/capture.md "Outbound calls"). placeOutboundCall is the
 * live carrier of capture/telephony/place-call.ts's placeCall, the one service function every caller
 * uses (the operator API, the web app's Call forms in http/public/pages/calls/new.ts, and the
 * public POST /api/v1/calls): it stores the call in
 * ringing_agent and asks Twilio to ring the agent. The agent's TwiML asks for a key press; the
 * press dials the customer from the service number, recorded dual-channel from answer. Twilio's
 * callbacks (handleOutboundCallback) then drive the lifecycle through the pure rules of
 * domain/outbound-progress.ts, each one at most once (telephony_callbacks); a stale or impossible
 * one is logged and never applied. The periodic check (reconcileOutboundCalls) settles calls whose
 * callbacks stopped coming.
 */

/** Seconds the agent's phone rings before Twilio reports no-answer. */
export const AGENT_RING_SECONDS = 30;
/** A call in reconciliation_required this long without a late report becomes agent_only. */
export const OUTBOUND_RECONCILE_GRACE_MS = 10 * 60_000;
/**
 * An in-progress stage untouched this long has lost its callbacks (Twilio ends a call after 4 h):
 * before the key press it fails (agent_no_answer, no_final_status); after it, it waits in
 * reconciliation_required.
 */
export const OUTBOUND_STALE_MS = 5 * 3_600_000;

export interface PlaceOutboundCall {
  agentUserId: string;
  agentPhone: string;
  customerPhone: string;
  fromNumber: string;
  recordingMode?: 'normal' | 'no_recording';
}

export interface PlacedOutboundCall {
  call_id: string;
  outbound_lifecycle: OutboundLifecycle;
  failure_reason: InitiateFailureReason | null;
}

export const outboundUrl = (deps: Pick<Deps, 'config'>, callId: string, kind: OutboundCallbackKind) =>
  callUrl(deps.config, callId, `outbound/${kind}`);

/**
 * Places an outbound call. Refuses (nothing stored) an unknown organization (404), an agent who is
 * not its user, a phone that does not parse, a from_number that is not one of its service numbers,
 * or an organization without a telephony account (422). Otherwise the call is stored (committed)
 * before Twilio is asked, so a callback racing the answer finds it; a REST error makes it
 * failed_to_initiate (call.outbound.attempted + call.failed) and is answered, not thrown.
 */
export async function placeOutboundCall(
  deps: Deps,
  organizationId: string,
  input: PlaceOutboundCall,
): Promise<PlacedOutboundCall> {
  const checked = await checkOutboundCall(deps, organizationId, input, { testMode: false });
  const account = await findOrganizationAccount(deps, organizationId);
  if (!account) {
    throw validationError(
      `The organization has no telephony account; connect one with PUT /admin/v1/organizations/${organizationId}/telephony.`,
      'from_number',
    );
  }
  const id = await insertOutboundCall(deps.db, deps, organizationId, input, checked, {
    provider: 'twilio',
    accountSid: account.accountSid,
  });
  try {
    const placed = await createCall(deps.config, account, {
      to: checked.agent.e164,
      from: checked.fromE164,
      url: outboundUrl(deps, id, 'answer'),
      statusCallback: outboundUrl(deps, id, 'agent-status'),
      statusCallbackEvent: ['initiated', 'ringing', 'answered', 'completed'],
      timeout: AGENT_RING_SECONDS,
    });
    // A callback may have named the sid already (it carries the call id in its URL).
    await deps.db.query(
      `UPDATE calls SET provider_call_sid = COALESCE(provider_call_sid, $2),
              provider_call_status = COALESCE(provider_call_status, $3)
        WHERE id = $1`,
      [id, placed.sid, placed.status],
    );
    return { call_id: id, outbound_lifecycle: INITIAL_OUTBOUND_LIFECYCLE, failure_reason: null };
  } catch (err) {
    const reason = initiateFailure(err);
    deps.log.warn(
      {
        call_id: id,
        organization_id: organizationId,
        failure_reason: reason,
        status: err instanceof TwilioRestError ? err.status : null,
        twilio_code: err instanceof TwilioRestError ? err.twilioCode : null,
      },
      'outbound call: Twilio refused to place the agent leg',
    );
    return failToInitiate(deps, id, reason);
  }
}

/** What checkOutboundCall found: the numbers normalised and the service number called from. */
export interface CheckedOutboundCall {
  agent: NormalizedPhone;
  customer: NormalizedPhone;
  fromE164: string;
  /** the organization's service number, or null for the simulated carrier's test service number */
  number: PhoneNumber | null;
  recordingMode: 'normal' | 'no_recording';
}

/**
 * The checks of placing a call (nothing stored when one fails): an unknown organization (404), an
 * agent who is not its user, a phone that does not parse, a from_number that is not one of its
 * service numbers (422). In test mode (the simulated carrier) the documented test service number
 * is accepted too (docs/test-mode.md "No carrier needed").
 */
export async function checkOutboundCall(
  deps: Deps,
  organizationId: string,
  input: PlaceOutboundCall,
  opts: { testMode: boolean; testServiceNumber?: string },
): Promise<CheckedOutboundCall> {
  if (!isUuid(organizationId)) throw notFound(`No organization ${organizationId}.`);
  const org = await deps.db.query<{ country: string | null }>(
    'SELECT country FROM organizations WHERE id = $1',
    [organizationId],
  );
  if (!org.rows[0]) throw notFound(`No organization ${organizationId}.`);
  const { country } = org.rows[0];
  const user = !isUuid(input.agentUserId)
    ? { rowCount: 0 }
    : await deps.db.query('SELECT 1 FROM users WHERE id = $1 AND organization_id = $2', [
        input.agentUserId,
        organizationId,
      ]);
  if (user.rowCount === 0) {
    throw validationError(
      `agent_user_id ${input.agentUserId} is not a user of this organization.`,
      'agent_user_id',
    );
  }
  const agent = normalizePhone(input.agentPhone, country);
  if (!agent) {
    throw validationError(
      `agent_phone "${input.agentPhone}" is not a usable phone number; send it in E.164.`,
      'agent_phone',
    );
  }
  const customer = normalizePhone(input.customerPhone, country);
  if (!customer) {
    throw validationError(
      `customer_phone "${input.customerPhone}" is not a usable phone number; send it in E.164 (+14155552671)${country ? ` or in ${country} national format` : ''}.`,
      'customer_phone',
    );
  }
  const from = normalizePhone(input.fromNumber, country);
  const number = from ? await findPhoneNumber(deps.db, organizationId, from.e164) : null;
  const testNumber = opts.testMode && from !== null && from.e164 === opts.testServiceNumber;
  if (!from || (!number && !testNumber)) {
    throw validationError(
      `from_number "${input.fromNumber}" is not a service number of this organization; add it with POST /admin/v1/organizations/${organizationId}/phone-numbers${opts.testMode ? ` (or leave from_number out: test calls default to ${opts.testServiceNumber})` : ''}.`,
      'from_number',
    );
  }
  // The number's no_recording mode is the organization's policy for it: a call cannot override it.
  const recordingMode =
    number?.recording_mode === 'no_recording' ? 'no_recording' : (input.recordingMode ?? 'normal');
  return { agent, customer, fromE164: from.e164, number, recordingMode };
}

/** Stores a checked outbound call in ringing_agent (committed before the carrier is asked). */
export async function insertOutboundCall(
  q: Queryable,
  deps: Deps,
  organizationId: string,
  input: PlaceOutboundCall,
  c: CheckedOutboundCall,
  carrier: { provider: TelephonyAccount['provider']; accountSid: string; callSidOf?: (id: string) => string },
): Promise<string> {
  const id = newId();
  const now = deps.clock.now();
  await q.query(
    `INSERT INTO calls (id, organization_id, direction, caller_phone, customer_phone, customer_phone_e164,
       customer_phone_national, customer_phone_rdigits, company_phone_e164, agent_user_id, agent_phone_e164,
       crm_status, outbound_lifecycle, recording_mode, recording_state, recording_channels, telephony_provider,
       provider_account_sid, phone_number_id, provider_call_sid, environment, created_at, updated_at)
     VALUES ($1, $2, 'outbound', $3, $4, $5, $6, $7, $3, $8, $9, 'new', $10, $11, $12, $13, $14, $15, $16, $17, $19, $18, $18)`,
    [
      id,
      organizationId,
      c.fromE164,
      input.customerPhone,
      c.customer.e164,
      c.customer.national,
      c.customer.rdigits,
      input.agentUserId,
      c.agent.e164,
      INITIAL_OUTBOUND_LIFECYCLE,
      c.recordingMode,
      c.recordingMode === 'normal' ? 'pending' : 'not_captured',
      c.recordingMode === 'normal' ? 2 : null,
      carrier.provider,
      carrier.accountSid,
      c.number?.id ?? null,
      carrier.callSidOf?.(id) ?? null,
      now,
      // the simulated carrier plays test calls only; Twilio's are live (spec: telephony creates live data)
      carrier.provider === 'simulated' ? 'test' : 'live',
    ],
  );
  return id;
}

/**
 * The carrier refused to place the call: failed_to_initiate (call.outbound.attempted + call.failed)
 * with the reason, answered rather than thrown — unless a callback already proved the call exists
 * (the carrier's answer was lost on its way), whose word is kept.
 */
export async function failToInitiate(
  deps: Deps,
  id: string,
  reason: InitiateFailureReason,
): Promise<PlacedOutboundCall> {
  const state = await deps.db.transaction(async (tx) => {
    const call = await lockLiveCall(tx, id);
    const current = lifecycleOf(call);
    const verdict = transitionOutbound(current, 'failed_to_initiate');
    if (verdict.kind !== 'moved') return current;
    await applyOutboundMove(tx, deps, call, 'failed_to_initiate', verdict.effects, reason);
    return 'failed_to_initiate' as const;
  });
  return {
    call_id: id,
    outbound_lifecycle: state,
    failure_reason: state === 'failed_to_initiate' ? reason : null,
  };
}

/** failure_reason of failed_to_initiate: what Twilio's REST answer (or its absence) says. */
export function initiateFailure(err: unknown): InitiateFailureReason {
  if (err instanceof TwilioRestError) {
    if (err.status === 401 || err.status === 403) return 'provider_auth_failed';
    if (err.status >= 400 && err.status < 500 && err.status !== 408 && err.status !== 429)
      return 'provider_rejected';
  }
  return 'provider_unavailable';
}

const lifecycleOf = (call: Pick<IngestCall, 'outbound_lifecycle'>): OutboundLifecycle =>
  call.outbound_lifecycle && isOutboundLifecycle(call.outbound_lifecycle)
    ? call.outbound_lifecycle
    : INITIAL_OUTBOUND_LIFECYCLE;

interface TelephonyColumns {
  telephony_provider: string | null;
  provider_account_sid: string | null;
  provider_call_sid: string | null;
  provider_customer_call_sid: string | null;
}

const str = (p: FormParams, name: string): string => {
  const v = p[name];
  return ((Array.isArray(v) ? v[0] : v) ?? '').trim();
};

/**
 * One Twilio callback of an outbound call (the kind comes from the URL the service named), already
 * signature-checked for `account`. Answers the TwiML to return (status callbacks get an empty
 * <Response/>). In one transaction with the call locked: the callback is claimed (telephony_callbacks)
 * and, the first time only, its plan applied; a repeat, or a report that changes nothing, answers
 * the TwiML of the stored state again — Twilio retrying a request gets the same answer.
 *
 * 404 NOT_FOUND (nothing changes): no such call, erased, inbound, or another account's. A CallSid
 * that is not the call's leg is ignored (logged), like a stale or impossible report.
 */
export async function handleOutboundCallback(
  deps: Deps,
  account: TelephonyAccount,
  callId: string,
  kind: OutboundCallbackKind,
  p: FormParams,
): Promise<string> {
  const params: Record<string, string> = {};
  for (const k of [
    'CallSid',
    'ParentCallSid',
    'CallStatus',
    'DialCallStatus',
    'DialCallSid',
    'Digits',
    'AnsweredBy',
  ])
    params[k] = str(p, k);
  const result = await deps.db.transaction(async (tx) => {
    const call = await lockLiveCall(tx, callId).catch((err) => {
      if (err instanceof AppError && err.code === 'NOT_FOUND') return null;
      throw err;
    });
    const t = call ? await telephonyColumns(tx, call.id) : null;
    if (
      !call ||
      !t ||
      call.direction !== 'outbound' ||
      t.telephony_provider !== account.provider ||
      call.organization_id !== account.organizationId ||
      t.provider_account_sid !== account.accountSid
    ) {
      throw notFound('No outbound call of this account at this URL.');
    }
    const now = deps.clock.now();
    const from = lifecycleOf(call);
    const legProblem = checkLeg(kind, params, t);
    const obs = legProblem ? null : observeOutboundCallback(kind, params);
    const plan: OutboundPlan = legProblem
      ? { kind: 'ignored', why: 'impossible', message: legProblem }
      : obs
        ? planOutbound(from, obs)
        : {
            kind: 'ignored',
            why: 'stale',
            message: `${kind} callback with status "${params.CallStatus || params.DialCallStatus}" says nothing about the lifecycle.`,
          };
    const first = await claimCallback(tx, {
      provider: 'twilio',
      key: outboundCallbackKey(call.id, kind, params),
      organizationId: call.organization_id,
      callId: call.id,
      kind: `outbound-${kind}`,
      outcome: plan.kind === 'ignored' ? 'ignored' : 'applied',
      detail: plan.kind === 'ignored' ? plan.message : plan.kind === 'apply' ? plan.steps.join(' > ') : null,
      now,
    });
    if (!first) return { state: from, obs, pressed: params.Digits !== '' };
    if (plan.kind === 'ignored') {
      const log = plan.why === 'stale' ? deps.log.info.bind(deps.log) : deps.log.warn.bind(deps.log);
      log(
        { call_id: call.id, callback: kind, call_status: params.CallStatus || params.DialCallStatus || null },
        `outbound callback not applied (${plan.why}): ${plan.message}`,
      );
      return { state: from, obs, pressed: params.Digits !== '' };
    }
    await recordLeg(tx, call.id, kind, params, now);
    let at = from;
    if (plan.kind === 'apply') {
      for (const step of plan.steps) {
        const verdict = transitionOutbound(at, step);
        if (verdict.kind !== 'moved') throw new Error(`planOutbound produced ${at} → ${step}`);
        const last = step === plan.steps[plan.steps.length - 1];
        await applyOutboundMove(tx, deps, call, step, verdict.effects, last ? plan.failureReason : null);
        at = step;
      }
    }
    return { state: at, obs, pressed: params.Digits !== '' };
  });
  return twimlFor(deps, callId, kind, result.state, result.pressed);
}

/** The TwiML of a callback, a pure function of the call's state after it (so a repeat gets the same). */
async function twimlFor(
  deps: Deps,
  callId: string,
  kind: OutboundCallbackKind,
  state: OutboundLifecycle,
  pressed: boolean,
): Promise<string> {
  if (kind === 'answer') {
    return state === 'agent_answered'
      ? agentAnswerTwiml(outboundUrl(deps, callId, 'confirm'))
      : hangupTwiml();
  }
  if (kind === 'confirm') {
    if (state !== 'ringing_customer') return hangupTwiml(pressed ? undefined : AGENT_NO_KEY);
    const { rows } = await deps.db.query<{
      company_phone_e164: string;
      customer_phone_e164: string;
      recording_mode: 'normal' | 'no_recording';
    }>('SELECT company_phone_e164, customer_phone_e164, recording_mode FROM calls WHERE id = $1', [callId]);
    const c = rows[0]!;
    return customerDialTwiml({
      callerId: c.company_phone_e164,
      customer: c.customer_phone_e164,
      actionUrl: outboundUrl(deps, callId, 'dial-ended'),
      customerStatusUrl: outboundUrl(deps, callId, 'customer-status'),
      recordingStatusUrl: c.recording_mode === 'normal' ? callUrl(deps.config, callId, 'recording') : null,
    });
  }
  if (kind === 'dial-ended') return hangupTwiml();
  return '<?xml version="1.0" encoding="UTF-8"?><Response/>';
}

async function telephonyColumns(tx: Queryable, callId: string): Promise<TelephonyColumns | null> {
  const { rows } = await tx.query<TelephonyColumns>(
    `SELECT telephony_provider, provider_account_sid, provider_call_sid, provider_customer_call_sid
       FROM calls WHERE id = $1`,
    [callId],
  );
  return rows[0] ?? null;
}

/**
 * Whether the callback's CallSid is the leg its URL is for: the agent leg's for every kind but
 * customer-status, whose CallSid is the customer leg's and whose ParentCallSid is the agent leg's.
 * A leg not yet known is learnt from the first callback that names it. Answers the problem, or null.
 */
function checkLeg(kind: OutboundCallbackKind, p: Record<string, string>, t: TelephonyColumns): string | null {
  if (!p.CallSid) return `${kind} callback without a CallSid.`;
  if (kind === 'customer-status') {
    if (t.provider_customer_call_sid && t.provider_customer_call_sid !== p.CallSid)
      return `customer-status callback for ${p.CallSid}, not the call's customer leg.`;
    if (t.provider_call_sid && p.ParentCallSid && p.ParentCallSid !== t.provider_call_sid)
      return `customer-status callback whose parent ${p.ParentCallSid} is not the call's agent leg.`;
    return null;
  }
  if (t.provider_call_sid && t.provider_call_sid !== p.CallSid)
    return `${kind} callback for ${p.CallSid}, not the call's agent leg.`;
  if (
    kind === 'dial-ended' &&
    t.provider_customer_call_sid &&
    p.DialCallSid &&
    p.DialCallSid !== t.provider_customer_call_sid
  )
    return `dial-ended callback for the customer leg ${p.DialCallSid}, not the call's.`;
  return null;
}

/** Stores the legs' sids (learnt from the first callback naming them) and their last reported status. */
async function recordLeg(
  tx: Queryable,
  callId: string,
  kind: OutboundCallbackKind,
  p: Record<string, string>,
  now: Date,
): Promise<void> {
  if (kind === 'customer-status') {
    await tx.query(
      `UPDATE calls SET provider_customer_call_sid = COALESCE(provider_customer_call_sid, $2),
              provider_customer_call_status = COALESCE(NULLIF($3, ''), provider_customer_call_status),
              provider_call_sid = COALESCE(provider_call_sid, NULLIF($4, '')), updated_at = $5
        WHERE id = $1`,
      [callId, p.CallSid, p.CallStatus, p.ParentCallSid, now],
    );
    return;
  }
  await tx.query(
    `UPDATE calls SET provider_call_sid = COALESCE(provider_call_sid, $2),
            provider_call_status = CASE WHEN $3 = 'agent-status' AND $4 <> '' THEN $4 ELSE provider_call_status END,
            provider_customer_call_sid = COALESCE(provider_customer_call_sid, NULLIF($5, '')),
            provider_customer_call_status = CASE WHEN $3 = 'dial-ended' AND $6 <> '' THEN $6
                                                 ELSE provider_customer_call_status END,
            updated_at = $7
      WHERE id = $1`,
    [
      callId,
      p.CallSid,
      kind,
      p.CallStatus,
      kind === 'dial-ended' ? p.DialCallSid : '',
      p.DialCallStatus,
      now,
    ],
  );
}

/**
 * The recording of an outbound call's dial arrived (Twilio's recording callback, completed): the
 * <Dial> records from answer, so a recording proves the customer answered — in_progress while the
 * call is still on, completed for a call in reconciliation_required, and the repair of agent_only.
 * Called by the recording callback inside its transaction (the callback is already claimed there);
 * a call whose lifecycle the recording cannot move is left as it is (logged).
 */
export async function noteOutboundRecording(tx: Queryable, deps: Deps, callId: string): Promise<void> {
  const call = await lockLiveCall(tx, callId);
  if (call.direction !== 'outbound') return;
  const from = lifecycleOf(call);
  const plan = planOutbound(from, { kind: 'customer_answered' });
  if (plan.kind === 'ignored') {
    deps.log.info({ call_id: call.id }, `outbound recording does not move the lifecycle: ${plan.message}`);
    return;
  }
  if (plan.kind === 'unchanged') return;
  let at = from;
  for (const step of plan.steps) {
    const verdict = transitionOutbound(at, step);
    if (verdict.kind !== 'moved') return;
    await applyOutboundMove(tx, deps, call, step, verdict.effects, null);
    at = step;
  }
}

/**
 * The periodic check (worker job "outbound-reconcile"): telephony outbound calls whose callbacks
 * stopped coming. An in-progress stage untouched for OUTBOUND_STALE_MS and a call in
 * reconciliation_required for OUTBOUND_RECONCILE_GRACE_MS get the observation no_word
 * (domain/outbound-progress.ts): agent_no_answer (no_final_status) before the key press,
 * reconciliation_required after it, agent_only after the grace. Calls reported by the operator
 * ingestion API (no telephony provider) are the adapter's to drive and are never touched.
 */
export async function reconcileOutboundCalls(
  deps: Deps,
  opts: { limit?: number } = {},
): Promise<{ settled: number }> {
  const now = deps.clock.now().getTime();
  const staleBefore = new Date(now - OUTBOUND_STALE_MS);
  const graceBefore = new Date(now - OUTBOUND_RECONCILE_GRACE_MS);
  const { rows } = await deps.db.query<{ id: string }>(
    `SELECT id FROM calls
      WHERE direction = 'outbound' AND telephony_provider IS NOT NULL AND erased_at IS NULL
        AND ((outbound_lifecycle IN ('ringing_agent', 'agent_answered', 'ringing_customer', 'in_progress')
              AND updated_at < $1)
          OR (outbound_lifecycle = 'reconciliation_required' AND updated_at < $2))
      ORDER BY updated_at LIMIT $3`,
    [staleBefore, graceBefore, opts.limit ?? 100],
  );
  let settled = 0;
  for (const { id } of rows) {
    if (await settleSilentCall(deps, id, { graceBefore, staleBefore })) settled++;
  }
  return { settled };
}

/**
 * One call of the periodic check: the observation no_word applied (in its transaction, the call
 * locked) when its last callback is older than the limit of its stage. Without limits (the simulated
 * carrier's agent_only scenario, which plays the grace period in seconds) it is applied whatever the
 * time. Answers whether the call moved.
 */
export async function settleSilentCall(
  deps: Deps,
  id: string,
  limits: { graceBefore: Date; staleBefore: Date } | null,
): Promise<boolean> {
  return deps.db.transaction(async (tx) => {
    const call = await lockLiveCall(tx, id);
    const { rows: r } = await tx.query<{ updated_at: Date }>('SELECT updated_at FROM calls WHERE id = $1', [
      id,
    ]);
    const from = lifecycleOf(call);
    if (limits) {
      const limit = from === 'reconciliation_required' ? limits.graceBefore : limits.staleBefore;
      if (new Date(r[0]!.updated_at) >= limit) return false; // a callback came meanwhile
    }
    const obs: OutboundObservation = { kind: 'no_word' };
    const plan = planOutbound(from, obs);
    if (plan.kind !== 'apply') return false;
    let at = from;
    for (const step of plan.steps) {
      const verdict = transitionOutbound(at, step);
      if (verdict.kind !== 'moved') return false;
      await applyOutboundMove(tx, deps, call, step, verdict.effects, plan.failureReason);
      at = step;
    }
    deps.log.info({ call_id: id, from, to: at }, 'outbound call settled: its callbacks stopped coming');
    return true;
  });
}
