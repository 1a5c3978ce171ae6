/**
 * The processing jobs' part of GET /metrics (Prometheus text format 0.0.4, like the webhook
 * metrics of src/webhooks/delivery/metrics.ts): computed from the database at scrape time, so the
 * numbers are right whichever process ran the jobs.
 */
import type { Queryable } from '../../db/types.ts';
import { JOB_OUTCOMES } from './sql/finish-job.ts';
import { STAGES } from './types.ts';

export const JOB_STATE_LABELS = [
  'pending',
  'running',
  'waiting',
  'succeeded',
  'failed',
  'needs_review',
  'cancelled',
] as const;

export async function renderProcessingMetrics(db: Queryable, now: Date): Promise<string> {
  const jobs = await db.query<{ stage: string; state: string; n: number }>(
    `SELECT stage, CASE WHEN state = 'pending' AND lease_expires_at > $1 THEN 'running' ELSE state END AS state,
            count(*)::bigint AS n
       FROM processing_jobs GROUP BY 1, 2`,
    [now],
  );
  const outcomes = await db.query<{ stage: string; outcome: string; n: number }>(
    'SELECT stage, outcome, sum(n)::bigint AS n FROM processing_job_outcomes GROUP BY 1, 2',
  );
  const count = (rows: { n: number }[], match: (r: never) => boolean) =>
    rows.filter((r) => match(r as never)).reduce((a, r) => a + Number(r.n), 0);
  const lines = [
    '# HELP callcap_processing_jobs Processing jobs by stage and state (running = pending under a live lease).',
    '# TYPE callcap_processing_jobs gauge',
  ];
  for (const stage of STAGES) {
    for (const state of JOB_STATE_LABELS) {
      const n = count(
        jobs.rows,
        (r: { stage: string; state: string }) => r.stage === stage && r.state === state,
      );
      lines.push(`callcap_processing_jobs{stage="${stage}",state="${state}"} ${n}`);
    }
  }
  lines.push(
    '# HELP callcap_processing_job_outcomes_total Runs of processing jobs by stage and outcome.',
    '# TYPE callcap_processing_job_outcomes_total counter',
  );
  for (const stage of STAGES) {
    for (const outcome of JOB_OUTCOMES) {
      const n = count(
        outcomes.rows,
        (r: { stage: string; outcome: string }) => r.stage === stage && r.outcome === outcome,
      );
      lines.push(`callcap_processing_job_outcomes_total{stage="${stage}",outcome="${outcome}"} ${n}`);
    }
  }
  return `${lines.join('\n')}\n`;
}
