import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../../deps.ts';
import { MESSAGES, recordingAvailability } from '../../../domain/recording-availability.ts';
import { AppError } from '../../../errors.ts';
import { factsOf, findRecordingCall, type RecordingCall } from '../../../recordings/call-recording.ts';
import { checkRecordingLink } from '../../../recordings/links.ts';
import { decideRange } from './range.ts';

export const INVALID_LINK_MESSAGE =
  'This recording link is invalid; request a fresh one from GET /calls/{id}/recording-url.';

/**
 * GET|HEAD /api/v1/calls/{id}/recording.mp3?token=…&exp=… — the target of a signed link.
 * No API key: the token is the authority, and an Authorization header is ignored. Order:
 * link (401) → call exists and is not erased (404) → entitlement (402) → the same availability rule
 * as recording-url (409/410) → Range (206/416) → the bytes, streamed from the BlobStore.
 */
export function downloadHandler(deps: Deps) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const { id } = req.params as { id: string };
    const query = req.query as Record<string, unknown>;
    const link = checkRecordingLink(deps, id, query.token, query.exp);
    if (!link.ok && link.reason === 'expired') {
      throw new AppError(
        'UNAUTHORIZED',
        `This recording link expired at ${link.expiredAt.toISOString()}; request a fresh one from GET /calls/{id}/recording-url.`,
      );
    }
    if (!link.ok) throw new AppError('UNAUTHORIZED', INVALID_LINK_MESSAGE);

    const { call, size } = await loadReadable(deps, id);
    const range = decideRange(req.headers.range, size);
    if (range.kind === 'unsatisfiable') {
      reply.header('content-range', `bytes */${size}`);
      throw new AppError(
        'RANGE_NOT_SATISFIABLE',
        `The requested range is outside the file of ${size} bytes; ask for bytes 0-${Math.max(0, size - 1)} or omit Range.`,
      );
    }
    reply.headers({
      'content-type': 'audio/mpeg',
      'accept-ranges': 'bytes',
      'content-disposition': `inline; filename="${call.id}.mp3"`,
    });
    const key = call.recording_key as string;
    if (range.kind === 'partial') {
      reply.code(206);
      reply.header('content-range', `bytes ${range.start}-${range.end}/${size}`);
      reply.header('content-length', String(range.end - range.start + 1));
    } else {
      reply.header('content-length', String(size));
    }
    if (req.method === 'HEAD') return reply.send();
    return reply.send(deps.store.read(key, range.kind === 'partial' ? range : undefined));
  };
}

/**
 * Re-checks the call at fetch time and finds the blob. A concurrent re-upload may have replaced the
 * blob between the read of the row and the size check: one fresh read of the row settles that.
 */
async function loadReadable(deps: Deps, id: string): Promise<{ call: RecordingCall; size: number }> {
  for (let attempt = 0; attempt < 2; attempt++) {
    const call = await findRecordingCall(deps.db, id);
    if (!call || call.erased_at) throw new AppError('NOT_FOUND', MESSAGES.NOT_FOUND);
    if (call.entitlement !== 'active') {
      throw new AppError(
        'SUBSCRIPTION_INACTIVE',
        "The organization's subscription is inactive; recordings can be downloaded again once it is renewed.",
      );
    }
    const a = recordingAvailability(factsOf(call));
    if (!a.available) throw new AppError(a.code, a.message);
    if (!call.recording_key) break;
    const size = await deps.store.size(call.recording_key);
    if (size !== null) return { call, size };
  }
  deps.log.error({ callId: id }, 'recording marked available but its blob is missing');
  throw new AppError('DATABASE_ERROR', 'The recording could not be read; retry with backoff.');
}
