import type { Db } from '../src/db/types.ts';

/**
 * Seeds the REST benchmark database: 1,000,000 calls across organizations, one organization holding
 * 200,000 of them, ~30 % with an analysis row. Plain INSERT … SELECT generate_series, in batches.
 */
export const BIG_ORG = '00000000-0000-4000-8000-000000000001';
export const BIG_ORG_OWNER = '00000000-0000-4000-8000-0000000000aa';
const TOTAL = Number(process.env.BENCH_CALLS ?? 1_000_000);
const BIG = Math.round(TOTAL / 5);
const OTHER_ORGS = 80;

/** The analysed calls' topics (subject, service) and the words said about them. */
const TOPICS: [string, string][] = [
  ['boiler repair', 'the boiler makes a banging noise'],
  ['water heater leak', 'water is leaking under the tank'],
  ['blocked drain', 'the kitchen sink drains slowly'],
  ['bathroom remodel', 'new tiles and a walk-in shower'],
  ['roof inspection', 'shingles came off in the storm'],
  ['gas smell', 'a faint smell of gas in the cellar'],
  ['radiator bleed', 'the radiators are cold at the top'],
  ['toilet replacement', 'the cistern cracked last night'],
  ['frozen pipes', 'the pipes froze in the garage'],
  ['sewer camera', 'roots in the sewer line'],
  ['sump pump', 'the basement floods when it rains'],
  ['garbage disposal', 'the disposal hums but does not turn'],
  ['water softener', 'limescale on every faucet'],
  ['leaky faucet', 'the faucet drips all night'],
  ['shower valve', 'the shower is scalding then freezing'],
  ['heat pump', 'the outdoor unit is icing up'],
  ['gutter cleaning', 'gutters overflowing with leaves'],
  ['well pump', 'no pressure from the well'],
  ['dishwasher install', 'a new dishwasher needs connecting'],
  ['annual maintenance', 'the yearly service contract'],
];

export async function seedCalls(db: Db, log: (s: string) => void): Promise<void> {
  const t0 = Date.now();
  await db.query(
    `INSERT INTO organizations (id, name, account_rate_limit_per_hour, created_at)
     SELECT CASE WHEN g = 0 THEN $1::uuid ELSE ('00000000-0000-4000-9000-' || lpad(g::text, 12, '0'))::uuid END,
            'Bench org ' || g, 1000000000, now()
       FROM generate_series(0, $2) g`,
    [BIG_ORG, OTHER_ORGS],
  );
  await db.query(
    `INSERT INTO users (id, organization_id, email, password_hash, role, created_at)
     VALUES ($1, $2, 'bench-owner@example.test', 'x', 'owner', now())`,
    [BIG_ORG_OWNER, BIG_ORG],
  );
  const batch = 100_000;
  for (let start = 0; start < TOTAL; start += batch) {
    await db.query(
      `INSERT INTO calls (id, organization_id, direction, caller_phone, customer_phone_e164, customer_phone_national,
         customer_phone_rdigits, company_phone_e164, caller_name, crm_status, review_status, recording_state,
         duration, processing_state, created_at, updated_at)
       SELECT gen_random_uuid(),
              CASE WHEN g < $3 THEN $4::uuid
                   ELSE ('00000000-0000-4000-9000-' || lpad((1 + g % $5)::text, 12, '0'))::uuid END,
              CASE WHEN g % 3 = 0 THEN 'outbound' ELSE 'inbound' END,
              p, p, '(' || substr(p, 3, 3) || ') ' || substr(p, 6, 3) || '-' || substr(p, 9, 4),
              reverse(substr(p, 2)), '+14155550100',
              CASE WHEN g % 4 = 0 THEN NULL ELSE 'Caller ' || g END,
              (ARRAY['new','to_call','contacted','qualified'])[1 + g % 4],
              (ARRAY['new','needs_review','handled',NULL])[1 + g % 4],
              (ARRAY['available','available','available','pending','deleted'])[1 + g % 5],
              (g % 600)::float8 + 0.5, 'processed',
              timestamptz '2026-06-15 00:00:00+00' - make_interval(secs => (g * 31) % 31536000),
              now()
         FROM (SELECT g, '+1' || (2000000000 + (g::bigint * 7919) % 7999999999)::text AS p
                 FROM generate_series($1::int, $2::int) g) s`,
      [start, Math.min(start + batch, TOTAL) - 1, BIG, BIG_ORG, OTHER_ORGS],
    );
    log(
      `  seeded ${Math.min(start + batch, TOTAL).toLocaleString()} calls (${((Date.now() - t0) / 1000).toFixed(0)} s)`,
    );
  }
  // Twenty topics, one per call in turn (a topic's words are in 1 of 20 analysed calls), and the
  // caller's name said in the transcript: what the inbox's search scenarios look for.
  await db.query(
    `INSERT INTO call_analyses (call_id, organization_id, transcript_original, language, analysis, followup_email,
       created_at, updated_at)
     SELECT id, organization_id,
            'Agent: Bench Plumbing, good morning. Caller: Hello, this is ' || coalesce(caller_name, 'a customer') ||
              '. I need help with ' || t.topic || ', ' || t.words || '.', 'en',
            jsonb_build_object('caller_name', caller_name, 'summary', 'Customer asked for a quote: ' || t.topic || '.',
              'subject', initcap(t.topic), 'service_needed', t.topic, 'services_match', true,
              'lead_score', 1 + (hashtext(id::text) & 1023) % 10, 'preferred_date', null, 'client_city', 'Springfield',
              'client_address', null, 'additional_details', null, 'detected_language', 'en'),
            CASE WHEN direction = 'inbound' THEN jsonb_build_object('subject', 'Your ' || t.topic || ' quote',
              'body', 'Hello, thanks for calling.', 'language', 'en') END,
            created_at, created_at
       FROM calls
       JOIN (SELECT row_number() OVER () - 1 AS n, topic, words FROM unnest($1::text[], $2::text[]) u(topic, words)) t
         ON t.n = (hashtext(id::text) & 1023) % 20
      WHERE (hashtext(id::text) % 10) IN (0, 1, 2)`,
    [TOPICS.map((t) => t[0]), TOPICS.map((t) => t[1])],
  );
  // VACUUM as well: it sets the visibility map, as autovacuum does on a deployment's insert-mostly
  // calls table, so list pages read the skipped rows from the index alone (index-only scans).
  await db.query('VACUUM (ANALYZE) calls, call_analyses');
  await db.query('ANALYZE');
  log(`  seeding done in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
}
