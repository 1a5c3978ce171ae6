import { Readable } from 'node:stream';
import { newId } from '../../src/ids.ts';
import { type CallRow, insertCall } from '../helpers/fixtures.ts';
import { ADMIN_TOKEN, type Harness } from '../helpers/harness.ts';

/** Shared set-up of the recording tests (not a test file itself). */

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
export const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A call whose audio is stored (blob written, row marked available). */
export async function insertCallWithAudio(
  h: Harness,
  orgId: string,
  audio: Buffer,
  row: Partial<CallRow> = {},
): Promise<{ callId: string; key: string }> {
  const callId = newId();
  const key = `recordings/${orgId}/${callId}/seed.mp3`;
  await h.deps.store.put(key, Readable.from([audio]));
  await insertCall(h.db, {
    id: callId,
    orgId,
    recordingState: 'available',
    recordingKey: key,
    duration: 10,
    ...row,
  });
  return { callId, key };
}

/** Path and query of an absolute link, for inject(). */
export const pathOf = (url: string): string => {
  const u = new URL(url);
  return u.pathname + u.search;
};

export const errorOf = (body: string) =>
  JSON.parse(body) as {
    success: false;
    error: { code: string; message: string };
    meta: { timestamp: string };
  };
