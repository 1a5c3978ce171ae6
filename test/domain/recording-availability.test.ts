import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  MESSAGES,
  type RecordingFacts,
  recordingAvailability,
} from '../../src/domain/recording-availability.ts';

const base: RecordingFacts = {
  direction: 'inbound',
  recordingState: 'pending',
  recordingMode: 'normal',
  outboundLifecycle: null,
  trashed: false,
  deletionScheduled: false,
  erased: false,
};
const outbound = (lifecycle: string | null, more: Partial<RecordingFacts> = {}): RecordingFacts => ({
  ...base,
  direction: 'outbound',
  outboundLifecycle: lifecycle,
  ...more,
});

// [situation, facts, expected status or 200, expected code]
const table: [string, RecordingFacts, number, string | null][] = [
  ['inbound audio available', { ...base, recordingState: 'available' }, 200, null],
  ['outbound completed with audio', outbound('completed', { recordingState: 'available' }), 200, null],
  ['inbound audio not yet arrived', base, 409, 'RECORDING_NOT_READY'],
  ['outbound completed, audio not yet arrived', outbound('completed'), 409, 'RECORDING_NOT_READY'],
  ['outbound still ringing', outbound('ringing_agent'), 409, 'RECORDING_NOT_READY'],
  ['outbound in progress', outbound('in_progress'), 409, 'RECORDING_NOT_READY'],
  ['outbound without lifecycle yet', outbound(null), 409, 'RECORDING_NOT_READY'],
  ['outbound in reconciliation_required', outbound('reconciliation_required'), 409, 'RECORDING_NOT_READY'],
  ['outbound agent_only (repairable to completed)', outbound('agent_only'), 409, 'RECORDING_NOT_READY'],
  ['inbound whose recording was refused', { ...base, recordingState: 'refused' }, 409, 'RECORDING_NOT_READY'],
  [
    'inbound marked not_captured is still never 410',
    { ...base, recordingState: 'not_captured' },
    409,
    'RECORDING_NOT_READY',
  ],
  [
    'inbound in no_recording mode (audio is never stored)',
    { ...base, recordingMode: 'no_recording' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'inbound no_recording as the capture gate records it',
    { ...base, recordingMode: 'no_recording', recordingState: 'not_captured' },
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'inbound in trash with audio',
    { ...base, recordingState: 'available', trashed: true },
    409,
    'RECORDING_WITHHELD',
  ],
  [
    'inbound scheduled for deletion with audio',
    { ...base, recordingState: 'available', deletionScheduled: true },
    409,
    'RECORDING_WITHHELD',
  ],
  ['trash wins over not-ready', { ...base, trashed: true }, 409, 'RECORDING_WITHHELD'],
  [
    'refused inbound in trash',
    { ...base, recordingState: 'refused', trashed: true },
    409,
    'RECORDING_WITHHELD',
  ],
  ['outbound agent_only in trash', outbound('agent_only', { trashed: true }), 409, 'RECORDING_WITHHELD'],
  [
    'recording deleted by the retention sweep',
    { ...base, recordingState: 'deleted' },
    410,
    'RECORDING_DELETED',
  ],
  [
    'deleted wins over trash',
    { ...base, recordingState: 'deleted', trashed: true },
    410,
    'RECORDING_DELETED',
  ],
  [
    'deleted wins over scheduled deletion',
    { ...base, recordingState: 'deleted', deletionScheduled: true },
    410,
    'RECORDING_DELETED',
  ],
  ['outbound deleted', outbound('completed', { recordingState: 'deleted' }), 410, 'RECORDING_DELETED'],
  [
    'outbound refused by the capture gate',
    outbound('completed', { recordingState: 'not_captured' }),
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound refused while ringing',
    outbound('ringing_agent', { recordingState: 'refused' }),
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound in no_recording mode',
    outbound('completed', { recordingMode: 'no_recording' }),
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound no_recording even if audio row says available',
    outbound('completed', { recordingMode: 'no_recording', recordingState: 'available' }),
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  ['outbound agent_no_answer', outbound('agent_no_answer'), 410, 'RECORDING_NOT_CAPTURED'],
  ['outbound customer_no_answer', outbound('customer_no_answer'), 410, 'RECORDING_NOT_CAPTURED'],
  ['outbound failed_to_initiate', outbound('failed_to_initiate'), 410, 'RECORDING_NOT_CAPTURED'],
  [
    'not captured wins over trash',
    outbound('customer_no_answer', { trashed: true }),
    410,
    'RECORDING_NOT_CAPTURED',
  ],
  [
    'outbound failed but audio stored anyway is served',
    outbound('customer_no_answer', { recordingState: 'available' }),
    200,
    null,
  ],
  ['erased call', { ...base, recordingState: 'available', erased: true }, 404, 'NOT_FOUND'],
  ['erased wins over deleted', { ...base, recordingState: 'deleted', erased: true }, 404, 'NOT_FOUND'],
  [
    'erased wins over trash',
    { ...base, trashed: true, deletionScheduled: true, erased: true },
    404,
    'NOT_FOUND',
  ],
];

for (const [situation, facts, status, code] of table) {
  test(`recording availability: ${situation} → ${status}${code ? ` ${code}` : ''}`, () => {
    const a = recordingAvailability(facts);
    if (status === 200) {
      assert.deepEqual(a, { available: true });
      return;
    }
    assert.equal(a.available, false);
    if (a.available) return;
    assert.equal(a.status, status);
    assert.equal(a.code, code);
  });
}

test('every 410 reason carries the same generic message', () => {
  const deleted = recordingAvailability({ ...base, recordingState: 'deleted' });
  const notCaptured = recordingAvailability(outbound('failed_to_initiate'));
  assert.ok(!deleted.available && !notCaptured.available);
  if (deleted.available || notCaptured.available) return;
  assert.equal(deleted.message, MESSAGES.GONE);
  assert.equal(notCaptured.message, MESSAGES.GONE);
  assert.notEqual(deleted.code, notCaptured.code);
});

test('409 answers carry their own messages', () => {
  const notReady = recordingAvailability(base);
  const withheld = recordingAvailability({ ...base, trashed: true });
  assert.ok(!notReady.available && !withheld.available);
  if (notReady.available || withheld.available) return;
  assert.equal(notReady.message, MESSAGES.RECORDING_NOT_READY);
  assert.equal(withheld.message, MESSAGES.RECORDING_WITHHELD);
});
