import { Readable } from 'node:stream';
import { createApiKey } from '../accounts/api-keys.ts';
import { createOrganization } from '../accounts/organizations.ts';
import { createTracker } from '../accounts/trackers.ts';
import { HOUR } from '../clock.ts';
import type { Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import { normalizePhone } from '../domain/phone.ts';
import { newId } from '../ids.ts';
import { silentMp3 } from './demo-audio.ts';
import { DEMO_CALLS, DEMO_COMPANY, type DemoCall, fullAnalysis } from './demo-calls.ts';
import { DEMO_KEY_NAME, DEMO_KEY_SCOPES, DEMO_OWNER_EMAIL, newDemoPassword } from './demo-owner.ts';
import { demoLineTimes } from './demo-times.ts';

export { DEMO_KEY_SCOPES, DEMO_OWNER_EMAIL } from './demo-owner.ts';

/** Thrown inside the seed transaction when another start seeded first: rolls it back quietly. */
class AlreadySeeded extends Error {}

/**
 * First run on an EMPTY EMBEDDED database (never with DATABASE_URL): a demo organization with an
 * owner, an API key and a dozen calls, so a new operator can try REST, the console and downloads at
 * once. Returns the text to print (key and password are shown only there), or null when nothing was
 * seeded. Audio goes to the blob store first; a rolled-back seed deletes it again.
 */
export async function seedDemoIfEmpty(deps: Deps): Promise<string | null> {
  if (deps.config.DATABASE_URL) return null;
  if ((await deps.db.query('SELECT 1 FROM organizations LIMIT 1')).rowCount > 0) return null;

  const now = deps.clock.now();
  const orgId = newId();
  const calls = DEMO_CALLS.map((c) => ({ ...c, id: newId() }));
  const blobs = new Map<string, { key: string; bytes: number; duration: number }>();
  try {
    for (const c of calls) {
      if (c.recording !== 'available') continue;
      const audio = silentMp3(c.seconds ?? 30);
      const key = `recordings/${orgId}/${c.id}/${newId()}.mp3`;
      const { bytes } = await deps.store.put(key, Readable.from([audio.bytes]));
      blobs.set(c.id, { key, bytes, duration: Math.round(audio.duration * 1000) / 1000 });
    }
    const password = newDemoPassword();
    const key = await deps.db.transaction(async (tx) => {
      // Serialises concurrent first starts; the loser finds an organization and seeds nothing.
      await tx.query('LOCK TABLE organizations IN SHARE ROW EXCLUSIVE MODE');
      if ((await tx.query('SELECT 1 FROM organizations LIMIT 1')).rowCount > 0) throw new AlreadySeeded();
      const org = await createOrganization(tx, {
        id: orgId,
        name: DEMO_COMPANY.name,
        ownerEmail: DEMO_OWNER_EMAIL,
        ownerPassword: password,
        country: DEMO_COMPANY.country,
        now,
      });
      const created = await createApiKey(tx, {
        organizationId: orgId,
        scopes: DEMO_KEY_SCOPES,
        name: DEMO_KEY_NAME,
        now,
      });
      await createTracker(tx, {
        organizationId: orgId,
        name: 'Emergency',
        terms: ['leak', 'flood', 'burst'],
        now,
      });
      for (const c of calls) {
        await insertDemoCall(tx, {
          orgId,
          ownerId: org.owner_user_id,
          call: c,
          blob: blobs.get(c.id) ?? null,
          now,
        });
      }
      return created.key;
    });
    const base = deps.config.publicBaseUrl;
    return [
      `Demo data created (first start on an empty embedded database): "${DEMO_COMPANY.name}" with ${calls.length} calls.`,
      `  API key (read.calls, read.recordings; shown only now): ${key}`,
      `  Console: ${base}/app  e-mail ${DEMO_OWNER_EMAIL}  password ${password}`,
      `  Try it:  curl -s -H "Authorization: Bearer ${key}" "${base}/api/v1/calls?limit=5"`,
    ].join('\n');
  } catch (err) {
    for (const b of blobs.values()) await deps.store.delete(b.key).catch(() => {});
    if (err instanceof AlreadySeeded) return null;
    throw err;
  }
}

/**
 * Every later start on an embedded database that holds the demo organization: where its credentials
 * were shown (the first start; the database keeps only their hashes, so they cannot be shown again)
 * and how to get new ones. `resetCommand` is the reset as the operator types it in this setup (with
 * DATA_DIR / ADMIN_PORT when they are not the CLI's defaults). Null when there is no demo owner, and
 * always with DATABASE_URL (PostgreSQL is never seeded). Prints no secret.
 */
export async function demoLaterStartNotice(deps: Deps, o: { resetCommand: string }): Promise<string | null> {
  if (deps.config.DATABASE_URL) return null;
  const { rows } = await deps.db.query<{ organization_id: string; name: string }>(
    `SELECT o.id AS organization_id, o.name FROM users u JOIN organizations o ON o.id = u.organization_id
      WHERE lower(u.email) = $1`,
    [DEMO_OWNER_EMAIL],
  );
  const demo = rows[0];
  if (!demo) return null;
  return [
    `Demo data: "${demo.name}" (organization ${demo.organization_id}). Its console password and API key were printed once, by the first start, and are not kept.`,
    `  Console: ${deps.config.publicBaseUrl}/app  e-mail ${DEMO_OWNER_EMAIL}`,
    `  New password (--api-key: and a new API key): ${o.resetCommand}`,
    `  Or start over: stop the service, delete ${deps.config.DATA_DIR} and start again (the first start prints new credentials).`,
  ].join('\n');
}

async function insertDemoCall(
  tx: Queryable,
  d: {
    orgId: string;
    ownerId: string;
    call: DemoCall & { id: string };
    blob: { key: string; bytes: number; duration: number } | null;
    now: Date;
  },
): Promise<void> {
  const { call: c, now } = d;
  const at = (hoursAgo: number) => new Date(now.getTime() - hoursAgo * HOUR);
  const customer = normalizePhone(c.phone, DEMO_COMPANY.country);
  const company = normalizePhone(DEMO_COMPANY.phone, DEMO_COMPANY.country);
  const outbound = c.direction === 'outbound';
  const createdAt = at(c.hoursAgo);
  const processed = c.analysis !== undefined;
  const duration = d.blob?.duration ?? (c.recording === 'deleted' ? (c.seconds ?? null) : null);
  await tx.query(
    `INSERT INTO calls (id, organization_id, direction, caller_phone, customer_phone, customer_phone_e164,
       customer_phone_national, customer_phone_rdigits, company_phone_e164, caller_name, agent_user_id, crm_status,
       review_status, outbound_lifecycle, recording_state, recording_key, recording_bytes, duration,
       recording_deleted_at, processing_state, completion_emitted_at, trashed_at, deletion_scheduled_at,
       pending_deletion_at, deletion_reason, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22,
       $23, $24, $25, $26, $27)`,
    [
      c.id,
      d.orgId,
      c.direction,
      outbound ? DEMO_COMPANY.phone : c.phone,
      c.phone,
      customer?.e164 ?? null,
      customer?.national ?? null,
      customer?.rdigits ?? null,
      company?.e164 ?? null,
      c.callerName,
      outbound ? d.ownerId : null,
      c.crmStatus,
      c.reviewStatus,
      c.outboundLifecycle ?? null,
      c.recording,
      d.blob?.key ?? null,
      d.blob?.bytes ?? null,
      duration,
      c.recordingDeletedHoursAgo === undefined ? null : at(c.recordingDeletedHoursAgo),
      processed ? 'processed' : 'none',
      processed ? createdAt : null,
      c.trashedHoursAgo === undefined ? null : at(c.trashedHoursAgo),
      c.deletion ? at(c.deletion.scheduledHoursAgo) : null,
      c.deletion ? at(-c.deletion.inHours) : null,
      c.deletion?.reason ?? null,
      createdAt,
      now,
    ],
  );
  if (!c.analysis) return;
  const analysis = fullAnalysis(c.analysis);
  await tx.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, language, analysis, followup_email,
       created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)`,
    [
      c.id,
      d.orgId,
      c.transcript === undefined ? null : oneTurnPerLine(c.transcript),
      analysis.detected_language ?? null,
      JSON.stringify(analysis),
      c.followup ? JSON.stringify(c.followup) : null,
      createdAt,
    ],
  );
  // estimated line times, so the demo's call pages play from a line (demo-times.ts)
  if (d.blob && c.transcript !== undefined) {
    await tx.query('UPDATE calls SET transcript_times = $2 WHERE id = $1', [
      c.id,
      JSON.stringify(demoLineTimes(oneTurnPerLine(c.transcript), d.blob.duration)),
    ]);
  }
}

/** A demo script, written as one line in demo-calls.ts, stored as the pipeline stores transcripts: one turn per line. */
export const oneTurnPerLine = (script: string): string =>
  script.replace(/ (?=(?:Agent|Agente|Caller|Customer|Cliente|Voicemail): )/g, '\n');
