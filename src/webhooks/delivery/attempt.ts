/**
 * One delivery attempt of a claimed row: sign the stored body with a fresh timestamp, POST it, and
 * record the outcome. Successes go to the batch writer (not awaited: the row stays leased until it
 * is written); a failure is applied in its own transaction, after the subscription's earlier
 * outcomes are written (the counters count replies in the order they came in; the rules in
 * src/domain/delivery-outcome.ts), and a pause it causes queues the owner's e-mail in that same
 * transaction, dispatched after commit.
 */

import type { Deps } from '../../deps.ts';
import { subscriptionPageUrl } from '../../domain/app-urls.ts';
import { type AttemptResult, classifyReply, decideAttempt } from '../../domain/delivery-outcome.ts';
import type { Mailer } from '../../mail/mailer.ts';
import { attemptOutcome, webhookAttemptDuration } from '../../observability/metrics.ts';
import { DELETION_EVENT_TYPES } from '../outbox/outbox.ts';
import type { WebhookClient } from './http-client.ts';
import { queuePauseNotice } from './pause-notice.ts';
import { decryptSecret } from './secret-box.ts';
import { deliveryHeaders } from './signing.ts';
import { type ClaimedDelivery, stillLeased } from './sql/claim-deliveries.ts';
import type { DeliverySuccess } from './sql/complete-delivery.ts';
import { failDelivery } from './sql/fail-delivery.ts';

export interface AttemptContext {
  deps: Pick<Deps, 'db' | 'clock' | 'keys' | 'log' | 'config'>;
  owner: string;
  client: WebhookClient;
  mailer: Mailer;
  /**
   * Hands a 2xx to the batch writer; the attempt's slot is free before the write lands. It is
   * written after the failures of its subscription received before it (./outcome-order.ts).
   */
  recordSuccess(item: DeliverySuccess): void;
  /**
   * Resolves when every outcome of the subscription received before this failure is written; the
   * function it returns must be called once the failure's write settles.
   */
  failureTurn(subscriptionId: string): Promise<() => void>;
  random: () => number;
  /** Decrypted signing secrets by ciphertext, so a busy subscription is not decrypted per delivery. */
  secrets: Map<string, string>;
}

/** Entries of the decrypted-secret cache before it is emptied (ciphertexts change on rotation). */
const SECRET_CACHE_SIZE = 1000;

type Outcome =
  | { kind: 'response'; status: number; snippet: string; durationMs: number }
  | { kind: 'error'; errorClass: string; message: string; durationMs: number };

/** Call events other than deletions carry call content: a 2xx records that the call reached the subscription. */
export function carriesCallContent(eventType: string): boolean {
  return eventType.startsWith('call.') && !DELETION_EVENT_TYPES.has(eventType);
}

function openSecret(ctx: AttemptContext, row: ClaimedDelivery): string | null {
  const box = row.signingSecretCiphertext;
  if (!box) return null;
  const cached = ctx.secrets.get(box);
  if (cached !== undefined) return cached;
  try {
    const secret = decryptSecret(ctx.deps.keys.secretEncryptionKey, box);
    if (ctx.secrets.size >= SECRET_CACHE_SIZE) ctx.secrets.clear();
    ctx.secrets.set(box, secret);
    return secret;
  } catch (err) {
    ctx.deps.log.error(
      { deliveryId: row.id, err: (err as Error).message },
      'webhook signing secret unreadable',
    );
    return null;
  }
}

/**
 * opts.recheck: the row waited in the worker after its claim; it is re-read first and dropped
 * unsent when it is no longer pending under this worker's lease (its call was erased, it was
 * skipped by an emergency rotation or a deleted subscription meanwhile).
 */
export async function attemptDelivery(
  ctx: AttemptContext,
  row: ClaimedDelivery,
  opts: { recheck?: boolean } = {},
): Promise<void> {
  const { deps } = ctx;
  if (opts.recheck && !(await stillLeased(deps.db, { id: row.id, owner: ctx.owner }))) {
    deps.log.info({ deliveryId: row.id }, 'claimed webhook delivery withdrawn before it was sent; dropped');
    return;
  }
  const startedAt = deps.clock.now();
  const timestampSeconds = Math.floor(startedAt.getTime() / 1000);
  const attemptNumber = row.attempts + 1;
  const secret = openSecret(ctx, row);
  const outcome: Outcome =
    secret === null
      ? { kind: 'error', errorClass: 'no_signing_secret', message: 'no usable signing secret', durationMs: 0 }
      : await ctx.client.post(
          row.url,
          row.body,
          deliveryHeaders({
            secret,
            body: row.body,
            timestampSeconds,
            eventId: row.eventId,
            eventType: row.eventType,
            environment: row.environment,
            rotationSecretId: row.rotationSecretId,
          }),
        );
  const signed = secret !== null;
  webhookAttemptDuration.observe({ outcome: attemptOutcome(outcome) }, outcome.durationMs / 1000);

  if (outcome.kind === 'response' && classifyReply(outcome) === 'success') {
    ctx.recordSuccess({
      deliveryId: row.id,
      subscriptionId: row.subscriptionId,
      organizationId: row.organizationId,
      attemptNumber,
      startedAt,
      durationMs: outcome.durationMs,
      status: outcome.status,
      snippet: outcome.snippet,
      secretId: row.signingSecretId!,
      signatureTimestamp: timestampSeconds,
      reachCallId: row.callId && carriesCallContent(row.eventType) ? row.callId : null,
    });
    return;
  }

  const now = deps.clock.now();
  const result: AttemptResult =
    outcome.kind === 'response'
      ? { kind: 'response', status: outcome.status }
      : { kind: 'error', errorClass: outcome.errorClass };
  const snippet = outcome.kind === 'response' ? outcome.snippet : outcome.message;
  const responseStatus = outcome.kind === 'response' ? outcome.status : null;
  const errorClass = outcome.kind === 'error' ? outcome.errorClass : null;
  // Written after the subscription's outcomes received before this one (./outcome-order.ts).
  const endTurn = await ctx.failureTurn(row.subscriptionId);
  const recorded = deps.db.transaction(async (tx) => {
    const { decision, url, updated } = await failDelivery(tx, {
      owner: ctx.owner,
      now,
      attempt: {
        deliveryId: row.id,
        subscriptionId: row.subscriptionId,
        organizationId: row.organizationId,
        attemptNumber,
        startedAt,
        durationMs: outcome.durationMs,
        responseStatus,
        errorClass,
        snippet,
        secretId: signed ? row.signingSecretId : null,
        signatureTimestamp: signed ? timestampSeconds : null,
      },
      decide: (sub) =>
        decideAttempt({
          result,
          attemptNumber,
          now,
          counters: sub.counters,
          subscriptionState: sub.state,
          random: ctx.random,
        }),
    });
    if (!updated)
      deps.log.warn({ deliveryId: row.id }, 'webhook delivery lease lost before its failure was recorded');
    if (!decision.pause) return null;
    deps.log.warn(
      { subscriptionId: row.subscriptionId, reason: decision.pause.reason },
      'webhook subscription paused',
    );
    return queuePauseNotice(tx, {
      organizationId: row.organizationId,
      facts: {
        subscriptionId: row.subscriptionId,
        url,
        reason: decision.pause.reason,
        pausedAt: now,
        responseStatus,
        errorClass,
        snippet: updated ? snippet : null,
        replyWithdrawn: !updated,
        callId: row.callId,
        pageUrl: subscriptionPageUrl(deps.config.publicBaseUrl, row.subscriptionId),
      },
    });
  });
  const emailId = await recorded.finally(endTurn);
  if (emailId) {
    await ctx.mailer.dispatch(emailId).catch((err: Error) => {
      deps.log.error(
        { emailId, err: err.message },
        'pause notice not dispatched; the reconciliation loop retries it',
      );
    });
  }
}
