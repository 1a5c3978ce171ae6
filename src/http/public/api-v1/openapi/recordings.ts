import { z } from 'zod';
import { envelope } from './schemas.ts';
import type { OperationSpec } from './types.ts';

/**
 * The recording operations of the OpenAPI document; document.ts imports this file.
 * Drafted by the REST API helper from routes.ts/download.ts; the recordings owner keeps it in step
 * with the routes (statuses, headers, parameters).
 */
export const RecordingLink = z
  .object({
    url: z
      .url()
      .describe(
        'Signed download link: {base_url}/calls/<call_id>/recording.mp3 with query parameters token and exp.',
      ),
    expires_at: z.iso.datetime({ offset: true }).describe('The moment the link stops working.'),
  })
  .describe('A signed link to the recording of a call.');

export const RecordingLinkResponse = envelope(RecordingLink);

export const recordingSchemas: Record<string, z.ZodType> = { RecordingLink, RecordingLinkResponse };

const ID_PARAM = { id: { schema: z.guid(), description: 'The call_id.' } };

/** Headers of every download answer that carries audio. */
const FILE_HEADERS = {
  'Content-Length': {
    description: 'Bytes in this answer.',
    required: true,
    schema: { type: 'integer', minimum: 0 },
  },
  'Accept-Ranges': {
    description: 'Always `bytes`.',
    required: true,
    schema: { type: 'string', const: 'bytes' },
  },
  'Content-Disposition': {
    description: 'Always `inline; filename="<call_id>.mp3"`.',
    required: true,
    schema: { type: 'string', pattern: '^inline; filename="[0-9a-f-]{36}\\.mp3"$' },
  },
};

export const recordingOperations: OperationSpec[] = [
  {
    method: 'get',
    path: '/calls/{id}/recording-url',
    operationId: 'getCallRecordingUrl',
    summary: 'Mint a recording download link',
    description:
      'A freshly signed link to the recording, valid for 15 minutes. Permission is re-checked when the file is ' +
      'fetched. Scope: read.recordings (separate from read.calls).',
    tag: 'Recordings',
    auth: { bearer: true, scope: 'read.recordings' },
    pathParams: ID_PARAM,
    success: [
      {
        status: 200,
        description: 'The signed link.',
        contentType: 'application/json',
        schema: RecordingLinkResponse,
      },
    ],
    errors: [
      400,
      401,
      402,
      403,
      404,
      {
        status: 409,
        description:
          'RECORDING_NOT_READY: the audio has not arrived yet (retry later). RECORDING_WITHHELD: the call is in the ' +
          'trash or scheduled for deletion (keep asking).',
      },
      {
        status: 410,
        description:
          'RECORDING_DELETED: retention removed the audio. RECORDING_NOT_CAPTURED: it was never captured. Stop retrying.',
      },
      429,
      500,
      503,
    ],
  },
  {
    method: 'get',
    path: '/calls/{id}/recording.mp3',
    operationId: 'downloadCallRecording',
    summary: 'Download a recording (signed link target)',
    description:
      'The target of a link from getCallRecordingUrl or a webhook. Authenticated by the token and exp query ' +
      'parameters only (an API key is never accepted here). The call is re-checked at every fetch: a call erased, ' +
      'trashed, scheduled for deletion or whose recording was deleted since the link was minted yields no audio. ' +
      'Supports HEAD and one Range per request (bytes=a-b, bytes=a-, bytes=-n → 206); several ranges, another ' +
      'unit or a malformed Range are answered with the whole file (200). Not rate-limited (no key).',
    tag: 'Recordings',
    auth: { bearer: false },
    pathParams: ID_PARAM,
    query: {
      token: { schema: z.string(), description: 'Link signature.', accepts: 'the token of a minted link' },
      exp: {
        schema: z.string(),
        description: 'Link expiry, unix seconds.',
        accepts: 'the exp of a minted link',
      },
    },
    rateLimited: false,
    cacheControl: 'private, no-store',
    success: [
      {
        status: 200,
        description: 'The recording.',
        contentType: 'audio/mpeg',
        schema: { type: 'string', contentMediaType: 'audio/mpeg' },
        headers: FILE_HEADERS,
      },
      {
        status: 206,
        description: 'The requested byte range of the recording.',
        contentType: 'audio/mpeg',
        schema: { type: 'string', contentMediaType: 'audio/mpeg' },
        headers: {
          ...FILE_HEADERS,
          'Content-Range': {
            description: 'The slice sent: `bytes <first>-<last>/<size>`.',
            required: true,
            schema: { type: 'string', pattern: '^bytes \\d+-\\d+/\\d+$' },
          },
        },
      },
    ],
    errors: [
      {
        status: 400,
        description: 'BAD_REQUEST: the request carries more than one Authorization header.',
        rateLimitHeaders: 'none',
      },
      { status: 401, description: 'UNAUTHORIZED: the link is invalid or expired.', rateLimitHeaders: 'none' },
      { status: 402, description: 'SUBSCRIPTION_INACTIVE.', rateLimitHeaders: 'none' },
      { status: 404, description: 'NOT_FOUND: the call no longer exists.', rateLimitHeaders: 'none' },
      { status: 409, description: 'RECORDING_NOT_READY or RECORDING_WITHHELD.', rateLimitHeaders: 'none' },
      { status: 410, description: 'RECORDING_DELETED or RECORDING_NOT_CAPTURED.', rateLimitHeaders: 'none' },
      {
        status: 416,
        description:
          'RANGE_NOT_SATISFIABLE: the range starts at or after the end of the file (or is bytes=-0).',
        rateLimitHeaders: 'none',
        headers: {
          'Content-Range': {
            description: 'The size of the file: `bytes */<size>`.',
            required: true,
            schema: { type: 'string', pattern: '^bytes \\*/\\d+$' },
          },
        },
      },
      { status: 500, description: 'DATABASE_ERROR.', rateLimitHeaders: 'none' },
      503,
    ],
  },
];
