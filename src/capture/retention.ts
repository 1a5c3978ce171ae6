import type { Deps } from '../deps.ts';
import { ANY_TENANT } from '../domain/tenant.ts';
import { AppError } from '../errors.ts';
import { eraseCall } from './deletion.ts';
import { deleteRecording } from './recording-lifecycle.ts';
import { deleteRecordingAtProvider, undeletedProviderRecordings } from './telephony/provider-recordings.ts';

/** Calls read per query. A run keeps reading batches while they come back full. */
const SWEEP_BATCH = 200;
/**
 * Batches one run handles per rule at most (10,000 calls): a backlog — say retention_days first set
 * on an organization with years of audio — clears in minutes, while a run stays bounded and the
 * next run (a minute later) continues where this one stopped.
 */
const MAX_BATCHES_PER_RUN = 50;

export interface RetentionResult {
  erased: number;
  recordingsDeleted: number;
  /** recordings deleted at the telephony provider on a retry (the provider was unreachable before) */
  providerRecordingsDeleted: number;
}

/**
 * The retention sweep (worker role), two rules:
 * 1. A call whose scheduled deletion is due (`pending_deletion_at` passed, announced earlier by
 *    call.deletion_scheduled) is erased: every read answers 404 from then on.
 * 2. An organization with `retention_days` keeps audio that long: older recordings are deleted
 *    (call.recording.deleted, reason retention_expired; recording-url answers 410 RECORDING_DELETED).
 *    The call's metadata and analysis stay.
 * 3. A recording that is deleted here but whose deletion at the telephony provider failed (an
 *    erasure does not wait for the provider) is deleted there again.
 * Recordings of telephony calls are deleted at the provider (Twilio's DELETE) before they are
 * deleted here; the provider's 404 makes deletion_kind provider_404.
 * Each call is handled in its own transaction by the same functions the operator API uses, so a
 * failure on one call never blocks the others. Several workers may sweep at once: a call erased by
 * another one between the read and the lock is skipped, not reported as a failure.
 */
export async function runRetentionSweep(
  deps: Deps,
  opts: { batch?: number; maxBatches?: number } = {},
): Promise<RetentionResult> {
  const now = deps.clock.now();
  const batch = opts.batch ?? SWEEP_BATCH;
  const maxBatches = opts.maxBatches ?? MAX_BATCHES_PER_RUN;
  const result: RetentionResult = { erased: 0, recordingsDeleted: 0, providerRecordingsDeleted: 0 };

  result.erased = await inBatches(batch, maxBatches, async (skip) => {
    const due = await deps.db.query<{ id: string }>(
      `SELECT id FROM calls WHERE pending_deletion_at <= $1 AND erased_at IS NULL AND NOT (id = ANY ($3::uuid[]))
        ORDER BY pending_deletion_at LIMIT $2`,
      [now, batch, skip],
    );
    return {
      ids: due.rows.map((r) => r.id),
      handle: (id) => attempt(deps, id, 'erase', () => eraseCall(deps, ANY_TENANT, id)),
    };
  });

  const orgs = await deps.db.query<{ id: string; retention_days: number }>(
    'SELECT id, retention_days FROM organizations WHERE retention_days IS NOT NULL',
  );
  for (const org of orgs.rows) {
    const cutoff = new Date(now.getTime() - org.retention_days * 24 * 3600 * 1000);
    result.recordingsDeleted += await inBatches(batch, maxBatches, async (skip) => {
      const old = await deps.db.query<{ id: string }>(
        `SELECT id FROM calls
          WHERE organization_id = $1 AND erased_at IS NULL AND recording_state = 'available' AND created_at < $2
            AND NOT (id = ANY ($4::uuid[]))
          ORDER BY created_at LIMIT $3`,
        [org.id, cutoff, batch, skip],
      );
      return {
        ids: old.rows.map((r) => r.id),
        handle: (id) =>
          attempt(deps, id, 'retention', async () => {
            // At the provider first: its 404 is told as provider_404; its outage leaves the audio for the next run.
            const atProvider = await deleteRecordingAtProvider(deps, id);
            await deleteRecording(deps, id, {
              deletionKind: atProvider === 'not_found' ? 'provider_404' : 'hard_deleted',
              reason: 'retention_expired',
            });
          }),
      };
    });
  }

  // 3. Provider deletions that failed when an erasure went ahead without them.
  result.providerRecordingsDeleted = await inBatches(batch, maxBatches, async (skip) => ({
    ids: await undeletedProviderRecordings(deps, batch, skip),
    handle: (id) =>
      attempt(deps, id, 'provider recording', async () => {
        // one claimed by another path (a callback, an erasure) is not read: it is being deleted there now
        await deleteRecordingAtProvider(deps, id);
      }),
  }));
  return result;
}

/**
 * Reads and handles batches until one comes back short or `maxBatches` were read. A call that
 * failed is left out of the later reads of this run (it is logged, and the next run tries it
 * again), so a call that keeps failing cannot hold the loop.
 */
async function inBatches(
  batch: number,
  maxBatches: number,
  next: (skip: string[]) => Promise<{ ids: string[]; handle: (id: string) => Promise<boolean> }>,
): Promise<number> {
  const failed: string[] = [];
  let done = 0;
  for (let i = 0; i < maxBatches; i++) {
    const { ids, handle } = await next(failed);
    for (const id of ids) {
      if (await handle(id)) done++;
      else failed.push(id);
    }
    if (ids.length < batch) break;
  }
  return done;
}

async function attempt(deps: Deps, callId: string, what: string, fn: () => Promise<void>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    // Erased meanwhile: another worker's sweep (every worker runs it) or an operator got there first.
    if (err instanceof AppError && err.code === 'NOT_FOUND') return false;
    deps.log.error({ callId, sweep: what, err: (err as Error).message }, 'retention sweep failed for a call');
    return false;
  }
}
