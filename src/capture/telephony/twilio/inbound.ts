import type { Queryable } from '../../../db/types.ts';
import type { Deps } from '../../../deps.ts';
import { normalizePhone } from '../../../domain/phone.ts';
import { AppError, badRequest } from '../../../errors.ts';
import { newId } from '../../../ids.ts';
import type { AlsoWrite } from '../../jobs/enqueue.ts';
import { refuseRecordingIn } from '../../recording-lifecycle.ts';
import { findPhoneNumber, type PhoneNumber, type TelephonyAccount } from '../accounts.ts';
import { type CallbackClaim, claimCallback } from '../callbacks.ts';
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
    // a repeat of the Voice URL finds the call it made (locked, as every callback locks its call)
    const { call: existing } = await lockCallClaiming(tx, {
      where: { callSid },
      callSid,
      organizationId: account.organizationId,
    });
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

/**
 * A write that rides in lockCallClaiming's statement, in the shape of the enqueue's (AlsoWrite):
 * data-modifying CTEs (`a AS (…)`) that read `call` (the locked row, as the statement found it) and
 * `claim` (a row when the key was new: an at-most-once write says `EXISTS (SELECT 1 FROM claim)`),
 * their parameters numbered from $first; `name` tells the combined statement apart.
 */
export type ClaimAlso = AlsoWrite;

/**
 * lockCallClaiming's claim: `when`, a condition on the locked row (`call`) the key is claimed under
 * besides the checks; `also`, writes of the same statement.
 */
export type LockClaim = CallbackClaim & { when?: string; also?: ClaimAlso };

export type ClaimedCallRow = InboundCallRow & {
  /** the CallSid of the request is the call's (either leg's) */
  own_sid: boolean;
  provider_customer_call_status: string | null;
};

/**
 * The one statement of a Twilio callback's start: the call locked (its row first, as every callback
 * locks), whether the request's CallSid is its own (either leg), and — when the call is the
 * account's, not erased, and the CallSid its own — the callback's dedupe key claimed
 * (telephony_callbacks, at most once) and `claim.also` written when the key was new. `first`: the
 * key is new; `key`: the key as written. The caller checks the row (lockOwnCall throws the 404s).
 */
export async function lockCallClaiming(
  tx: Queryable,
  p: {
    where: { id: string } | { callSid: string };
    callSid: string;
    organizationId: string;
    claim?: LockClaim;
  },
): Promise<{ call: ClaimedCallRow | null; first: boolean; key: string | null }> {
  const { claim } = p;
  const call = `call AS MATERIALIZED (
      SELECT ${CALL_COLUMNS}, c.provider_customer_call_status,
             COALESCE(c.provider_call_sid = $2 OR c.provider_customer_call_sid = $2, false) AS own_sid
        FROM calls c JOIN organizations o ON o.id = c.organization_id LEFT JOIN phone_numbers n ON n.id = c.phone_number_id
       WHERE ${'id' in p.where ? 'c.id = $1::uuid' : '(c.provider_call_sid = $1 OR c.provider_customer_call_sid = $1)'}
         FOR UPDATE OF c
    )`;
  const by = 'id' in p.where ? 'id' : 'sid';
  if (!claim) {
    const { rows } = await tx.query<ClaimedCallRow>(
      `WITH ${call} SELECT * FROM call`,
      ['id' in p.where ? p.where.id : p.where.callSid, p.callSid],
      { name: `twilio_lock_call_${by}_v1` },
    );
    return { call: rows[0] ?? null, first: false, key: null };
  }
  const [before, after] = typeof claim.key === 'string' ? [claim.key, null] : claim.key;
  // $9 NULL: the key is $8 itself; else $8 || the call's provider_call_sid || $9
  const key = `CASE WHEN $9::text IS NULL THEN $8::text ELSE $8::text || COALESCE(call.provider_call_sid, 'null') || $9::text END`;
  const { rows } = await tx.query<ClaimedCallRow & { claim_key: string; first: boolean }>(
    `WITH ${call},
     claim AS (
       INSERT INTO telephony_callbacks (provider, dedupe_key, organization_id, call_id, kind, outcome, detail, received_at)
       SELECT 'twilio', ${key}, call.organization_id, call.id, $4::text, $5::text, $6::text, $7::timestamptz
         FROM call
        WHERE call.organization_id = $3::uuid AND call.erased_at IS NULL AND call.own_sid${claim.when ? ` AND ${claim.when}` : ''}
       ON CONFLICT (provider, dedupe_key) DO NOTHING
       RETURNING call_id
     )${claim.also ? `, ${claim.also.sql(10)}` : ''}
     SELECT call.*, ${key} AS claim_key, EXISTS (SELECT 1 FROM claim) AS first FROM call`,
    [
      'id' in p.where ? p.where.id : p.where.callSid,
      p.callSid,
      p.organizationId,
      claim.kind,
      claim.outcome,
      claim.detail ?? null,
      claim.now,
      before,
      after,
      ...(claim.also?.params ?? []),
    ],
    // `when` and `also` belong to one caller each: its also's name tells the statement apart
    { name: `twilio_lock_claim_${by}_v1${claim.also ? `_${claim.also.name}` : ''}` },
  );
  const row = rows[0];
  if (!row) return { call: null, first: false, key: null };
  const { claim_key, first, ...c } = row;
  return { call: c, first, key: claim_key };
}

/**
 * A callback under /calls/{id}/…: the call, locked, when it belongs to the account and the CallSid is
 * its own (else 404), and `claim` claimed (lockCallClaiming: one statement).
 */
export async function lockOwnCall(
  tx: Queryable,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
  claim?: LockClaim,
): Promise<{ call: InboundCallRow; first: boolean; key: string }> {
  const r = await lockCallClaiming(tx, {
    where: { id: callId },
    callSid: str(p, 'CallSid'),
    organizationId: account.organizationId,
    claim,
  });
  const call = r.call;
  if (!call || call.organization_id !== account.organizationId || call.erased_at) {
    throw new AppError('NOT_FOUND', 'No call of this account at this URL.');
  }
  if (!call.own_sid) throw new AppError('NOT_FOUND', "The CallSid is not this call's.");
  return { call, first: r.first, key: r.key ?? '' };
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
  const refused = digits !== '';
  const consent: 'refused' | 'accepted' = refused ? 'refused' : 'accepted';
  const call = await deps.db.transaction(async (tx) => {
    const now = deps.clock.now();
    // One statement: the call locked and checked; while the consent is still announced, the key
    // claimed and the caller's answer stored (settled before: nothing written, the same answer).
    // The key is new whenever the consent is announced: it is written with the answer, never undone.
    const { call: c } = await lockOwnCall(tx, account, callId, p, {
      kind: 'consent',
      key: ['consent:', ''],
      when: `call.recording_consent = 'announced'`,
      outcome: 'applied',
      detail: consent,
      now,
      also: {
        name: 'consent',
        sql: (f) => `consent AS (
          UPDATE calls SET recording_consent = $${f}::text,
                 voicemail = CASE WHEN $${f + 1}::boolean THEN false ELSE calls.voicemail END,
                 updated_at = $${f + 2}::timestamptz
            FROM call
           WHERE calls.id = call.id AND EXISTS (SELECT 1 FROM claim))`,
        params: [consent, refused, now],
      },
    });
    if (c.recording_consent !== 'announced') return c;
    if (refused) await refuseRecordingIn(tx, deps, c.id);
    // the row as the statement left it (connectVerbs reads the consent, mode, ring-to number and id)
    return { ...c, recording_consent: consent, voicemail: refused ? false : c.voicemail };
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
  const now = deps.clock.now();
  // One statement, so no transaction around it (no BEGIN, no COMMIT round trip): the call locked and
  // checked, the key claimed and — when new, nobody answered and recording is allowed — the call
  // switched to voicemail; a check that fails writes nothing.
  const { call, first } = await lockOwnCall(deps.db, account, callId, p, {
    kind: 'dial-ended',
    key: ['dial-ended:', ''],
    outcome: 'applied',
    detail: status || null,
    now,
    also: {
      name: 'voicemail',
      sql: (f) => `voicemail AS (
          UPDATE calls SET voicemail = true, recording_channels = 1, updated_at = $${f + 1}::timestamptz
            FROM call
           WHERE calls.id = call.id AND EXISTS (SELECT 1 FROM claim) AND $${f}::text <> 'completed'
             AND call.recording_mode = 'normal' AND call.recording_consent IS DISTINCT FROM 'refused')`,
      params: [status, now],
    },
  });
  const voicemail =
    status !== 'completed' && call.recording_mode === 'normal' && call.recording_consent !== 'refused';
  if (status === 'completed' || !(first ? voicemail : call.voicemail)) return twiml(goodbye());
  return twiml(voicemailVerbs(deps, call));
}

/** POST …/calls/{id}/voicemail-ended: the <Record> ended (the recording itself arrives by its status callback). */
export async function voicemailEnded(
  deps: Deps,
  account: TelephonyAccount,
  callId: string,
  p: FormParams,
): Promise<string> {
  // one statement (the call locked and checked): no transaction around it
  await lockOwnCall(deps.db, account, callId, p);
  return twiml(goodbye());
}
