import { inScope, scopeParams } from '../../db/tenant-sql.ts';
import type { Queryable } from '../../db/types.ts';
import { TEST_AGENT_PHONE, TEST_SERVICE_NUMBER } from '../../domain/simulated-call.ts';
import type { Environment, TenantScope } from '../../domain/tenant.ts';

/**
 * What the web app's "Call" form (click-to-call) needs to know about an organization and its
 * signed-in user: whether it can call at all (a telephony account and a service number), from which
 * numbers, in which country national spellings are read, and the agent phone to prefill: the
 * user's own (profile, /app/settings/profile), else the one they last called from. A read model of the pages, scoped to one organization.
 */
export interface CallSetup {
  /** the organization has a telephony account */
  account: boolean;
  /** its service numbers (E.164), oldest first */
  numbers: string[];
  /** the organization's country (ISO 3166-1 alpha-2): national spellings of numbers are read in it */
  country: string | null;
  /** the user's own phone (their profile), else the agent phone of their latest outbound call (E.164), or null */
  lastAgentPhone: string | null;
}

export const setupReady = (s: CallSetup): boolean => s.account && s.numbers.length > 0;

/** How far back (outbound calls of the organization) the form looks for the user's own phone. */
const RECENT_OUTBOUND = 200;

/** The setup's columns as stored rows name them (callSetupColumns). */
export interface CallSetupRow {
  setup_account: boolean;
  setup_country: string | null;
  setup_numbers: string[] | null;
  setup_last_agent_phone: string | null;
}

/**
 * The select-list of the setup, for a statement whose parameters `org`, `env` and `user` are the
 * scope's organization and environment and the user's id (a read model that adds the setup to its own row in the same
 * round trip: the call page). The telephony account and numbers are the organization's (shared by
 * both environments); the user's latest outbound call is looked for among the scope's latest
 * RECENT_OUTBOUND (calls_org_direction_created_idx, newest first): bounded
 * work on every page that shows the form, also for a user who never placed a call in an
 * organization with 100,000 outbound calls; `when` (SQL) skips that look where no form is shown.
 */
export const callSetupColumns = (org: string, env: string, user: string, when = 'true'): string =>
  `EXISTS (SELECT 1 FROM telephony_accounts t WHERE t.organization_id = ${org}::uuid) AS setup_account,
   (SELECT o.country FROM organizations o WHERE o.id = ${org}::uuid) AS setup_country,
   (SELECT array_agg(p.number_e164 ORDER BY p.created_at, p.number_e164)
      FROM phone_numbers p WHERE p.organization_id = ${org}::uuid) AS setup_numbers,
   CASE WHEN ${when} THEN coalesce(
     (SELECT u.phone_e164 FROM users u WHERE u.id = ${user}::uuid AND u.organization_id = ${org}::uuid),
     (SELECT recent.agent_phone_e164 FROM (
       SELECT agent_phone_e164, agent_user_id, created_at, id FROM calls
        WHERE ${inScope(null, org, env)} AND direction = 'outbound' AND erased_at IS NULL
        ORDER BY created_at DESC, id DESC LIMIT ${RECENT_OUTBOUND}) recent
     WHERE recent.agent_user_id = ${user}::uuid AND recent.agent_phone_e164 IS NOT NULL
     ORDER BY recent.created_at DESC, recent.id DESC LIMIT 1)) END AS setup_last_agent_phone`;

/**
 * The setup of a scope. In test mode the simulated carrier is the carrier (docs/test-mode.md "No
 * carrier needed"): calling is always set up, an organization without a service number calls from
 * the test service number, and an agent without a phone is offered the test agent phone.
 */
export const callSetupOf = (r: CallSetupRow | undefined, environment: Environment = 'live'): CallSetup => {
  const setup = {
    account: r?.setup_account ?? false,
    numbers: r?.setup_numbers ?? [],
    country: r?.setup_country ?? null,
    lastAgentPhone: r?.setup_last_agent_phone ?? null,
  };
  if (environment !== 'test') return setup;
  return {
    account: true,
    numbers: setup.numbers.length > 0 ? setup.numbers : [TEST_SERVICE_NUMBER],
    country: setup.country,
    lastAgentPhone: setup.lastAgentPhone ?? TEST_AGENT_PHONE,
  };
};

/** The setup of an organization for one of its users: one statement. */
export async function loadCallSetup(q: Queryable, scope: TenantScope, userId: string): Promise<CallSetup> {
  const { rows } = await q.query<CallSetupRow>(
    `SELECT ${callSetupColumns('$1', '$2', '$3')}`,
    [...scopeParams(scope), userId],
    {
      name: 'call_setup_v2',
    },
  );
  return callSetupOf(rows[0], scope.environment);
}
