import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  bodyFingerprint,
  claimIdempotencyKey,
  finishIdempotencyKey,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  IDEMPOTENCY_KEY_PATTERN,
  type IdempotencyRef,
  type IdempotentOperation,
  releaseIdempotencyKey,
} from '../../../accounts/idempotency.ts';
import type { Deps } from '../../../deps.ts';
import type { TenantScope } from '../../../domain/tenant.ts';
import { AppError, badRequest } from '../../../errors.ts';
import { errorBody } from '../../error-handler.ts';

/**
 * The Idempotency-Key header of POST /contacts and POST /calls (accounts/idempotency.ts has the
 * rules and the table). A replayed answer is the first one, status and body byte for byte (its
 * meta.timestamp and meta.request_id included), with `Idempotent-Replayed: true`; the rate-limit
 * and X-Request-Id headers are this request's.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** How long a request waits for a concurrent request with its key to answer before it gets 409. */
export const PENDING_WAIT_MS = 15_000;
const PENDING_POLL_MS = 25;

/** The request's Idempotency-Key, undefined without one; 400 BAD_REQUEST (param Idempotency-Key) when unusable. */
export function readIdempotencyKey(req: FastifyRequest): string | undefined {
  const raw = req.headers[IDEMPOTENCY_HEADER];
  if (raw === undefined) return undefined;
  const value = Array.isArray(raw) ? raw.join(', ') : raw;
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) {
    const why =
      value.length === 0
        ? 'is empty'
        : value.length > IDEMPOTENCY_KEY_MAX_LENGTH
          ? `is ${value.length} characters long`
          : 'contains a character that is not printable ASCII';
    throw badRequest(
      `The Idempotency-Key header ${why}; send 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} printable ASCII characters, e.g. a UUID.`,
      'Idempotency-Key',
    );
  }
  return value;
}

/** What an operation answers: a status and the JSON payload (the success envelope). */
export interface Answer {
  status: number;
  payload: unknown;
}

/**
 * Runs `operation` once per Idempotency-Key (or every time without one) and sends its answer.
 * `body` is the validated request body whose fingerprint the key is bound to. The operation's
 * AppErrors below 500 (422 VALIDATION_ERROR, 409 CONTACT_EXISTS, …) are answers like any other and
 * are replayed; 429 and 5xx answers release the key (a retry runs the operation again).
 */
export async function sendIdempotent(
  deps: Deps,
  req: FastifyRequest,
  reply: FastifyReply,
  scope: TenantScope,
  operation: IdempotentOperation,
  body: unknown,
  run: () => Promise<Answer>,
): Promise<FastifyReply> {
  const key = readIdempotencyKey(req);
  if (key === undefined) {
    const a = await run();
    return reply.code(a.status).send(a.payload);
  }
  const ref: IdempotencyRef = { scope, operation, key };
  const fingerprint = bodyFingerprint(body);
  const deadline = Date.now() + PENDING_WAIT_MS;
  for (;;) {
    const claim = await claimIdempotencyKey(deps.db, ref, fingerprint, deps.clock.now());
    if (claim.kind === 'replay') {
      return reply
        .code(claim.status)
        .header(REPLAYED_HEADER, 'true')
        .type('application/json; charset=utf-8')
        .send(claim.body);
    }
    if (claim.kind === 'reused') {
      throw new AppError(
        'IDEMPOTENCY_KEY_REUSED',
        `The Idempotency-Key "${key.slice(0, 64)}" was already used with a different request body for this operation in the last 24 hours; use a new key for a new request.`,
        { param: 'Idempotency-Key' },
      );
    }
    if (claim.kind === 'claimed') break;
    if (Date.now() >= deadline) {
      throw new AppError(
        'CONFLICT',
        'A request with this Idempotency-Key is still being processed; retry in a few seconds to get its answer.',
        { param: 'Idempotency-Key' },
      );
    }
    await sleep(PENDING_POLL_MS);
  }

  let answer: { status: number; body: string };
  try {
    const a = await run();
    answer = { status: a.status, body: JSON.stringify(a.payload) };
  } catch (err) {
    if (!(err instanceof AppError) || err.status >= 500 || err.status === 429) {
      await releaseIdempotencyKey(deps.db, ref);
      throw err;
    }
    const rendered = errorBody(err.code, err.message, deps.clock.now(), {
      requestId: req.id,
      param: err.param,
      contactId: err.contactId,
    });
    answer = { status: err.status, body: JSON.stringify(rendered) };
  }
  await finishIdempotencyKey(deps.db, ref, answer);
  return reply.code(answer.status).type('application/json; charset=utf-8').send(answer.body);
}
