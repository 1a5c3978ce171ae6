import type { Deps } from '../../deps.ts';
import { TEST_AGENT_PHONE, TEST_SERVICE_NUMBER } from '../../domain/simulated-call.ts';
import type { Environment, TenantScope } from '../../domain/tenant.ts';
import { validationError } from '../../errors.ts';
import { isUuid } from '../../ids.ts';
import { loadCallSetup } from './call-setup.ts';
import { placeSimulatedCall } from './simulated/carrier.ts';
import { type PlacedOutboundCall, type PlaceOutboundCall, placeOutboundCall } from './twilio/outbound.ts';

/**
 * Placing an outbound call: the one service function of every caller — the web app's "Call" forms
 * (http/public/pages/calls/new.ts), the operator API (POST /admin/v1/organizations/{org}/outbound-calls)
 * and the public POST /api/v1/calls. From here on a call follows one path whoever placed it.
 *
 * The carrier is picked by the scope's data environment (spec/api-v1-additions.md "Test mode"):
 * live calls go to Twilio (placeOutboundCall); test calls go to the simulated carrier
 * (simulated/carrier.ts: the magic numbers decide the outcome, docs/test-mode.md). A test key never
 * reaches a real carrier (docs/decisions.md "POST /calls and the carriers").
 */
export type Carrier = (
  deps: Deps,
  scope: TenantScope,
  input: PlaceOutboundCall,
) => Promise<PlacedOutboundCall>;

const twilio: Carrier = (deps, scope, input) => placeOutboundCall(deps, scope.organizationId, input);

/** The carrier of each environment. */
export const CARRIERS: Record<Environment, Carrier | null> = { live: twilio, test: placeSimulatedCall };

export const NO_TEST_CARRIER =
  'Test-mode calls are played by the simulated carrier, which this deployment does not have; nothing was dialled. Use a live key to place a real call.';

/** Places a call in the scope's environment (see the file comment). */
export async function placeCall(
  deps: Deps,
  scope: TenantScope,
  input: PlaceOutboundCall,
): Promise<PlacedOutboundCall> {
  const carrier = CARRIERS[scope.environment];
  if (!carrier) throw validationError(NO_TEST_CARRIER);
  return carrier(deps, scope, input);
}

/** POST /api/v1/calls' body after validation: the optional fields default (resolveCallDefaults). */
export interface CallRequest {
  customerPhone: string;
  agentUserId?: string;
  agentPhone?: string;
  fromNumber?: string;
  recordingMode?: 'normal' | 'no_recording';
}

/**
 * The defaults of POST /api/v1/calls (spec/api-v1-additions.md "Placing calls"): agent_user_id is
 * the key's user; agent_phone the phone that agent last used on an outbound call of the
 * organization; from_number the organization's service number when it has exactly one. A default
 * that cannot be made answers 422 VALIDATION_ERROR naming the field to send; an organization
 * without telephony answers 422 on from_number. The values themselves are checked by placeCall.
 * In test mode nothing is needed (docs/test-mode.md "No carrier needed"): an organization without
 * a service number calls from TEST_SERVICE_NUMBER, an agent without a last phone is rung on
 * TEST_AGENT_PHONE.
 */
export async function resolveCallDefaults(
  deps: Deps,
  scope: TenantScope,
  keyUserId: string,
  r: CallRequest,
): Promise<PlaceOutboundCall> {
  const agentUserId = r.agentUserId ?? keyUserId;
  if (r.agentUserId !== undefined) {
    const user = isUuid(agentUserId)
      ? await deps.db.query('SELECT 1 FROM users WHERE id = $1 AND organization_id = $2', [
          agentUserId,
          scope.organizationId,
        ])
      : { rowCount: 0 };
    if (user.rowCount === 0) {
      throw validationError(
        `agent_user_id ${agentUserId} is not a user of this organization.`,
        'agent_user_id',
      );
    }
  }
  const needsSetup = r.agentPhone === undefined || r.fromNumber === undefined;
  const setup = needsSetup ? await loadCallSetup(deps.db, scope, agentUserId) : null;
  if (setup && scope.environment === 'live' && !setup.account) {
    throw validationError(
      'Telephony is not set up for this organization (no Twilio account is connected), so it cannot place calls; the operator of the service connects one.',
      'from_number',
    );
  }
  let fromNumber = r.fromNumber;
  if (fromNumber === undefined) {
    const numbers = setup?.numbers ?? [];
    if (numbers.length === 0 && scope.environment === 'test') fromNumber = TEST_SERVICE_NUMBER;
    else if (numbers.length !== 1) {
      throw validationError(
        numbers.length === 0
          ? 'The organization has no service number to call from, so from_number cannot be defaulted.'
          : `The organization has ${numbers.length} service numbers (${numbers.join(', ')}); send from_number with the one to call from.`,
        'from_number',
      );
    } else fromNumber = numbers[0];
  }
  const agentPhone =
    r.agentPhone ?? setup?.lastAgentPhone ?? (scope.environment === 'test' ? TEST_AGENT_PHONE : undefined);
  if (agentPhone === undefined) {
    throw validationError(
      'This agent has placed no call yet, so agent_phone cannot be defaulted; send agent_phone with the phone the service should ring first.',
      'agent_phone',
    );
  }
  return {
    agentUserId,
    agentPhone,
    customerPhone: r.customerPhone,
    fromNumber: fromNumber as string,
    recordingMode: r.recordingMode,
  };
}
