import type { Queryable } from '../../../db/types.ts';
import type { Deps } from '../../../deps.ts';
import { normalizePhone } from '../../../domain/phone.ts';
import { AppError, badRequest } from '../../../errors.ts';
import { newId } from '../../../ids.ts';
import { refuseRecordingIn } from '../../recording-lifecycle.ts';
import { findPhoneNumber, type PhoneNumber, type TelephonyAccount } from '../accounts.ts';
import { claimCallback } from '../callbacks.ts';
import type { FormParams } from './signature.ts';
import { twiml, type Verb } from './twiml.ts';
import { callUrl } from './urls.ts';

/**
 * Inbound calls through Twilio (docs/capture.md "Connecting Twilio"). The Voice URL creates the call
 * and answers TwiML:
 *   consent announcement on (and recording mode normal): <Gather numDigits=1> around <Say>, then a
 *     <Redirect> to …/consent: a key press refuses the recording, silence accepts it;
 *   a ring-to number: <Dial record="record-from-answer-dual"> (agent and caller on their own channel);
 *     if nobody answers, the caller is offered voicemail;
 *   no ring-to number: voicemail, <Record> (one-sided: the call is marked voicemail, no draft).
 * A refused recording: the call is put through without recording, or (no ring-to) ended politely;
 * recording_state refused, so recording-url answers 409, never 410.
 * Every callback is applied at most once (telephony_callbacks); each answer is a pure function of the
 * call's stored state, so Twilio repeating a request gets the same TwiML.
 */

/** Caller ids Twilio and carriers send for a withheld number (https://www.twilio.com/docs/voice/...): never a customer number. */
const ANONYMOUS_CALLER_IDS = new Set([
  '',
  'anonymous',
  'restricted',
  'unknown',
  'private',
  'unavailable',
  'withheld',
  'blocked',
  '+266696687',
  '+7378742833',
  '+2562533',
  '+8656696',
  '+86282452253',
]);

/** How long the consent prompt waits for a key after the announcement, and the voicemail limits (seconds). */
const CONSENT_GATHER_TIMEOUT = 4;
const DIAL_TIMEOUT = 25;
const VOICEMAIL_MAX_LENGTH = 300;
const VOICEMAIL_SILENCE_TIMEOUT = 5;

export interface InboundCallRow {
  id: string;
  organization_id: string;
  direction: 'inbound' | 'outbound';
  recording_mode: 'normal' | 'no_recording';
  recording_state: string;
  recording_consent: 'announced' | 'accepted' | 'refused' | null;
  voicemail: boolean;
  provider_call_sid: string | null;
  provider_call_status: string | null;
  phone_number_id: string | null;
  ring_to_e164: string | null;
  consent_text: string | null;
  consent_language: string | null;
  org_language: string;
  erased_at: Date | null;
}

const CALL_COLUMNS = `c.id, c.organization_id, c.direction, c.recording_mode, c.recording_state, c.recording_consent,
    c.voicemail, c.provider_call_sid, c.provider_call_status, c.phone_number_id, n.ring_to_e164,
    o.recording_consent_text AS consent_text, o.recording_consent_language AS consent_language,
    o.language AS org_language, c.erased_at`;
const CALL_SQL = `SELECT ${CALL_COLUMNS}
  FROM calls c JOIN organizations o ON o.id = c.organization_id LEFT JOIN phone_numbers n ON n.id = c.phone_number_id`;

export async function lockTelephonyCall(
  tx: Queryable,
  where: { id: string } | { callSid: string },
): Promise<InboundCallRow | null> {
  const { rows } =
    'id' in where
      ? await tx.query<InboundCallRow>(`${CALL_SQL} WHERE c.id = $1 FOR UPDATE OF c`, [where.id])
      : await tx.query<InboundCallRow>(
          `${CALL_SQL} WHERE c.provider_call_sid = $1 OR c.provider_customer_call_sid = $1 FOR UPDATE OF c`,
          [where.callSid],
        );
  return rows[0] ?? null;
}

export const str = (p: FormParams, name: string): string => {
  const v = p[name];
  return ((Array.isArray(v) ? v[0] : v) ?? '').trim();
};

/** The customer number a caller id gives: null for a withheld / anonymous one, or anything unusable. */
export function callerNumber(raw: string, country: string | null) {
  if (ANONYMOUS_CALLER_IDS.has(raw.trim().toLowerCase())) return null;
  return normalizePhone(raw, country);
}

const sayLanguage = (c: InboundCallRow) => c.consent_language ?? c.org_language;

function goodbye(): Verb[] {
  return [{ verb: 'Hangup' }];
}

/** What the caller gets once consent is settled (or was never asked). */
function connectVerbs(deps: Deps, call: InboundCallRow): Verb[] {
  const record = call.recording_mode === 'normal' && call.recording_consent !== 'refused';
  const recordingCallback = callUrl(deps.config, call.id, 'recording');
  if (call.ring_to_e164) {
    return [
      {
        verb: 'Dial',
        number: call.ring_to_e164,
        action: callUrl(deps.config, call.id, 'dial-ended'),
        timeout: DIAL_TIMEOUT,
        ...(record
          ? { record: 'record-from-answer-dual' as const, recordingStatusCallback: recordingCallback }
          : {}),
      },
    ];
  }
  if (!record) return goodbye();
  return voicemailVerbs(deps, call);
}

function voicemailVerbs(deps: Deps, call: InboundCallRow): Verb[] {
  return [
    {
      verb: 'Record',
      action: callUrl(deps.config, call.id, 'voicemail-ended'),
      maxLength: VOICEMAIL_MAX_LENGTH,
      timeout: VOICEMAIL_SILENCE_TIMEOUT,
      recordingStatusCallback: callUrl(deps.config, call.id, 'recording'),
    },
    { verb: 'Hangup' },
  ];
}

/** The first answer for a call: the consent prompt when it is due, else the connection. */
function answerVerbs(deps: Deps, call: InboundCallRow): Verb[] {
  if (call.recording_consent === 'announced' && call.consent_text) {
    const consentUrl = callUrl(deps.config, call.id, 'consent');
    return [
      {
        verb: 'Gather',
        action: consentUrl,
        numDigits: 1,
        timeout: CONSENT_GATHER_TIMEOUT,
        say: { text: call.consent_text, language: sayLanguage(call) },
      },
      { verb: 'Redirect', url: consentUrl },
    ];
  }
  return connectVerbs(deps, call);
}

const NOT_IN_SERVICE = twiml([{ verb: 'Say', text: 'This number is not in service.' }, { verb: 'Hangup' }]);

/**
 * POST /telephony/twilio/voice: an inbound call rings a service number. Creates the call (once per
 * CallSid) and answers its TwiML. A number the account's organization does not own gets a short
 * "not in service" and no call is stored.
 */
export async function answerInboundCall(
  deps: Deps,
  account: TelephonyAccount,
  p: FormParams,
): Promise<string> {
  const callSid = str(p, 'CallSid');
  if (!callSid) throw badRequest('Parameter "CallSid" is required.', 'CallSid');
  const to = str(p, 'To');
  const number = normalizePhone(to)
    ? await findPhoneNumber(deps.db, account.organizationId, normalizePhone(to)!.e164)
    : null;
  if (!number) {
    deps.log.warn(
      { call_sid: callSid, organization_id: account.organizationId },
      'inbound call to a number that is not a service number of the account',
    );
    return NOT_IN_SERVICE;
  }
  const call = await createInboundCall(deps, account, number, p);
  if (call.organization_id !== account.organizationId)
    throw new AppError('FORBIDDEN', 'The call belongs to another account.');
  return twiml(answerVerbs(deps, call));
}

/** The number an inbound call rang: a service number, or the simulated carrier's test number (id null). */
export type InboundNumber = Pick<PhoneNumber, 'number_e164' | 'ring_to_e164' | 'recording_mode'> & {
  id: string | null;
};

/**
 * The carrier's first request of an inbound call (CallSid, From, To, CallerName, CallStatus): the
 * call stored once per CallSid (a repeat finds it) and answered locked. `announceConsent` plays the
 * consent announcement whatever the organization's setting (the simulated carrier's
 * recording_refused scenario); `inTransaction` runs in the same transaction (the simulated carrier queues
 * the call's steps there, so a stored call is always played).
 */
export async function createInboundCall(
  deps: Deps,
  account: TelephonyAccount,
  number: InboundNumber,
  p: FormParams,
  opts: {
    announceConsent?: boolean;
    inTransaction?: (tx: Queryable, call: InboundCallRow) => Promise<void>;
  } = {},
): Promise<InboundCallRow> {
  const callSid = str(p, 'CallSid');
  return deps.db.transaction(async (tx) => {
    const existing = await lockTelephonyCall(tx, { callSid });
    if (existing) return existing;
    // the row as the insert wrote it (this transaction's own, locked by the insert): not read again
    const call = await insertInboundCall(
      tx,
      deps,
      account,
      number,
      p,
      callSid,
      opts.announceConsent ?? false,
    );
    await opts.inTransaction?.(tx, call);
    return call;
  });
}

async function insertInboundCall(
  tx: Queryable,
  deps: Deps,
  account: TelephonyAccount,
  number: InboundNumber,
  p: FormParams,
  callSid: string,
  announceConsent: boolean,
): Promise<InboundCallRow> {
  const org = await tx.query<{
    country: string | null;
    recording_consent_enabled: boolean;
    recording_consent_text: string | null;
  }>('SELECT country, recording_consent_enabled, recording_consent_text FROM organizations WHERE id = $1', [
    account.organizationId,
  ]);
  const { country, recording_consent_enabled, recording_consent_text } = org.rows[0]!;
  const from = str(p, 'From');
  const customer = callerNumber(from, country);
  const forwardedFrom = str(p, 'ForwardedFrom');
  const company = (forwardedFrom ? normalizePhone(forwardedFrom, country)?.e164 : null) ?? number.number_e164;
  const callerName = str(p, 'CallerName') || null;
  const recording = number.recording_mode === 'normal';
  const consent =
    recording && ((recording_consent_enabled && recording_consent_text) || announceConsent)
      ? 'announced'
      : null;
  const id = newId();
  const now = deps.clock.now();
  const { rows } = await tx.query<InboundCallRow>(
    `WITH c AS (
     INSERT INTO calls (id, organization_id, direction, caller_phone, customer_phone, customer_phone_e164,
       customer_phone_national, customer_phone_rdigits, company_phone_e164, caller_name, crm_status,
       recording_mode, recording_state, telephony_provider, provider_account_sid, phone_number_id,
       provider_call_sid, provider_call_status, recording_consent, voicemail, recording_channels, created_at, updated_at,
       environment)
     VALUES ($1, $2, 'inbound', $3, $4, $5, $6, $7, $8, $9, 'new', $10, $11, $20, $12, $13, $14, $15, $16, $17, $18, $19, $19,
       $21)
     RETURNING *
   )
   SELECT ${CALL_COLUMNS}
     FROM c JOIN organizations o ON o.id = c.organization_id LEFT JOIN phone_numbers n ON n.id = c.phone_number_id`,
    [
      id,
      account.organizationId,
      from,
      from || null,
      customer?.e164 ?? null,
      customer?.national ?? null,
      customer?.rdigits ?? null,
      company,
      callerName,
      number.recording_mode,
      recording ? 'pending' : 'not_captured',
      account.accountSid,
      number.id,
      callSid,
      str(p, 'CallStatus') || 'ringing',
      consent,
      recording && !number.ring_to_e164,
      recording ? (number.ring_to_e164 ? 2 : 1) : null,
      now,
      account.provider,
      // the simulated carrier plays test calls only; Twilio's are live (spec: telephony creates live data)
      account.provider === 'simulated' ? 'test' : 'live',
    ],
  );
  await claimCallback(tx, {
    provider: 'twilio',
    key: `voice:${callSid}`,
    organizationId: account.organizationId,
    callId: id,
    kind: 'voice',
    outcome: 'applied',
    now,
  });
  return rows[0]!;
}

/** A callback under /calls/{id}/…: the call, locked, when it belongs to the account and the CallSid is its own. */
export async function lockOwnCall(
  tx: Queryable,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
): Promise<InboundCallRow> {
  const call = await lockTelephonyCall(tx, { id: callId });
  const callSid = str(p, 'CallSid');
  if (!call || call.organization_id !== account.organizationId || call.erased_at) {
    throw new AppError('NOT_FOUND', 'No call of this account at this URL.');
  }
  if (call.provider_call_sid !== callSid) {
    const customer = await tx.query('SELECT 1 FROM calls WHERE id = $1 AND provider_customer_call_sid = $2', [
      call.id,
      callSid,
    ]);
    if (customer.rowCount === 0) throw new AppError('NOT_FOUND', "The CallSid is not this call's.");
  }
  return call;
}

/**
 * POST …/calls/{id}/consent: the consent prompt ended. Digits (any key) = the caller refuses the
 * recording; none = accepted. Answers the connection TwiML. A repeat answers the same TwiML.
 */
export async function consentAnswered(
  deps: Deps,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
): Promise<string> {
  const digits = str(p, 'Digits');
  const call = await deps.db.transaction(async (tx) => {
    const c = await lockOwnCall(tx, account, callId, p);
    if (c.recording_consent !== 'announced') return c; // settled before: same answer
    const now = deps.clock.now();
    const refused = digits !== '';
    await claimCallback(tx, {
      provider: 'twilio',
      key: `consent:${c.provider_call_sid}`,
      organizationId: c.organization_id,
      callId: c.id,
      kind: 'consent',
      outcome: 'applied',
      detail: refused ? 'refused' : 'accepted',
      now,
    });
    await tx.query(
      'UPDATE calls SET recording_consent = $2, voicemail = CASE WHEN $3 THEN false ELSE voicemail END, updated_at = $4 WHERE id = $1',
      [c.id, refused ? 'refused' : 'accepted', refused, now],
    );
    if (refused) await refuseRecordingIn(tx, deps, c.id);
    return (await lockTelephonyCall(tx, { id: c.id }))!;
  });
  return twiml(connectVerbs(deps, call));
}

/**
 * POST …/calls/{id}/dial-ended: the <Dial> to the ring-to number ended. Answered (completed): hang
 * up. Nobody answered (busy, no-answer, failed, canceled): voicemail when recording is allowed.
 */
export async function dialEnded(
  deps: Deps,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
): Promise<string> {
  const status = str(p, 'DialCallStatus');
  const call = await deps.db.transaction(async (tx) => {
    const c = await lockOwnCall(tx, account, callId, p);
    const first = await claimCallback(tx, {
      provider: 'twilio',
      key: `dial-ended:${c.provider_call_sid}`,
      organizationId: c.organization_id,
      callId: c.id,
      kind: 'dial-ended',
      outcome: 'applied',
      detail: status || null,
      now: deps.clock.now(),
    });
    const voicemail =
      status !== 'completed' && c.recording_mode === 'normal' && c.recording_consent !== 'refused';
    if (first && voicemail) {
      await tx.query(
        'UPDATE calls SET voicemail = true, recording_channels = 1, updated_at = $2 WHERE id = $1',
        [c.id, deps.clock.now()],
      );
    }
    return { ...c, voicemail: first ? voicemail : c.voicemail };
  });
  if (status === 'completed' || !call.voicemail) return twiml(goodbye());
  return twiml(voicemailVerbs(deps, call));
}

/** POST …/calls/{id}/voicemail-ended: the <Record> ended (the recording itself arrives by its status callback). */
export async function voicemailEnded(
  deps: Deps,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
): Promise<string> {
  await deps.db.transaction((tx) => lockOwnCall(tx, account, callId, p));
  return twiml(goodbye());
}
