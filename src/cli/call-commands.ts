import { readFile } from 'node:fs/promises';
import { type Command, type CommandContext, defined, enc, req, str, usageError } from './command.ts';

/**
 * Call commands of the operator CLI: what a telephony adapter reports (spec/operator-api.md "Call
 * ingestion"), the deletion steps, reprocessing and outbound calls. Each is one operator API request;
 * commands whose answer is 204 print what was done as JSON.
 */

const callId = ['call-id'];

async function readText(c: CommandContext, path: string, what: string): Promise<string> {
  if (path === '-') return c.readStdin();
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw usageError(`cannot read ${what} ${path}: ${(err as Error).message}`);
  }
}

async function readJsonFile(c: CommandContext, path: string, what: string): Promise<unknown> {
  const text = await readText(c, path, what);
  try {
    return JSON.parse(text);
  } catch (err) {
    throw usageError(`${what} ${path} is not JSON: ${(err as Error).message}`);
  }
}

/** A POST without a body answering 204, printed as {call_id, <done>: true}. */
function simple(word: string, path: string, summary: string, done: string): Command {
  return {
    words: ['call', word],
    args: callId,
    flags: {},
    summary,
    run: async (c) => {
      await c.call({ method: 'POST', path: `/calls/${enc(c.args[0])}/${path}` });
      return { call_id: c.args[0], [done]: true };
    },
  };
}

export const CALL_COMMANDS: Command[] = [
  {
    words: ['call', 'create'],
    args: [],
    flags: {
      org: { hint: 'org-id', required: true },
      direction: { hint: 'inbound|outbound', required: true },
      'caller-phone': { hint: 'phone', required: true },
      'customer-phone': { hint: 'phone', help: 'required for outbound calls (the dialled number)' },
      'company-phone': { hint: 'phone' },
      'caller-name': { hint: 'name' },
      'created-at': { hint: 'ISO date-time', help: 'when the call happened (default: now)' },
      'agent-user': { hint: 'user-id' },
      'recording-mode': { hint: 'normal|no_recording' },
      'crm-status': { hint: 'status' },
      'review-status': { hint: 'status' },
      'transcript-original': { hint: 'text', help: 'an imported call: its transcript (analysis runs)' },
      'transcript-file': { hint: 'file|-', help: 'as --transcript-original, read from a file or stdin' },
      'transcript-processed-file': {
        hint: 'file.json',
        help: 'an imported call: its analysis as JSON (transcript_processed)',
      },
    },
    summary: 'report a call (operator ingestion API)',
    run: async (c) => {
      const file = str(c, 'transcript-file');
      if (file !== undefined && str(c, 'transcript-original') !== undefined)
        throw usageError('Give --transcript-original or --transcript-file, not both.');
      const processed = str(c, 'transcript-processed-file');
      return c.call({
        method: 'POST',
        path: `/organizations/${enc(req(c, 'org'))}/calls`,
        json: defined({
          direction: str(c, 'direction'),
          caller_phone: str(c, 'caller-phone'),
          customer_phone: str(c, 'customer-phone'),
          company_phone: str(c, 'company-phone'),
          caller_name: str(c, 'caller-name'),
          created_at: str(c, 'created-at'),
          agent_user_id: str(c, 'agent-user'),
          recording_mode: str(c, 'recording-mode'),
          crm_status: str(c, 'crm-status'),
          review_status: str(c, 'review-status'),
          transcript_original:
            file === undefined ? str(c, 'transcript-original') : await readText(c, file, 'transcript file'),
          transcript_processed:
            processed === undefined ? undefined : await readJsonFile(c, processed, 'analysis file'),
        }),
      });
    },
  },
  {
    words: ['call', 'recording'],
    args: ['call-id', 'file.mp3'],
    flags: { 'recording-sid': { hint: 'sid', help: "the telephony provider's recording id" } },
    summary: "upload a call's recording (MP3)",
    run: async (c) => {
      let bytes: Buffer;
      try {
        bytes = await readFile(c.args[1]);
      } catch (err) {
        throw usageError(`cannot read ${c.args[1]}: ${(err as Error).message}`);
      }
      const sid = str(c, 'recording-sid');
      await c.call({
        method: 'PUT',
        path: `/calls/${enc(c.args[0])}/recording${sid ? `?recording_sid=${enc(sid)}` : ''}`,
        body: { bytes, contentType: 'audio/mpeg' },
      });
      return { call_id: c.args[0], recording: 'stored', bytes: bytes.length };
    },
  },
  simple(
    'recording-refused',
    'recording-refused',
    'report that the recording was refused',
    'recording_refused',
  ),
  {
    words: ['call', 'recording-delete'],
    args: callId,
    flags: {
      kind: { hint: 'hard_deleted|provider_404', required: true },
      reason: { hint: 'text' },
    },
    summary: "delete a call's recording (emits call.recording.deleted; the link answers 410)",
    run: async (c) => {
      await c.call({
        method: 'POST',
        path: `/calls/${enc(c.args[0])}/recording/delete`,
        json: defined({ deletion_kind: str(c, 'kind'), reason: str(c, 'reason') }),
      });
      return { call_id: c.args[0], recording_deleted: true };
    },
  },
  {
    words: ['call', 'transcript'],
    args: callId,
    flags: {
      text: { hint: 'text', help: 'the transcript' },
      file: { hint: 'file|-', help: 'read the transcript from a file, or stdin with "-"' },
      language: { hint: 'code', help: 'e.g. en or de-AT (default: detected)' },
    },
    summary: 'submit the transcript; analysis runs, then call.transcribed and call.completed',
    run: async (c) => {
      const text = str(c, 'text');
      const file = str(c, 'file');
      if ((text === undefined) === (file === undefined))
        throw usageError('Give exactly one of --text or --file.');
      return c.call({
        method: 'POST',
        path: `/calls/${enc(c.args[0])}/transcript`,
        json: defined({
          text: file === undefined ? text : await readText(c, file, 'transcript file'),
          language: str(c, 'language'),
        }),
      });
    },
  },
  {
    words: ['call', 'lifecycle'],
    args: callId,
    flags: {
      state: { hint: 'state', required: true, help: 'an outbound_lifecycle value, e.g. completed' },
      'failure-reason': { hint: 'code', help: 'e.g. customer_busy' },
    },
    summary: "move an outbound call's lifecycle (422 when the transition is impossible)",
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/calls/${enc(c.args[0])}/lifecycle`,
        json: defined({ state: str(c, 'state'), failure_reason: str(c, 'failure-reason') }),
      }),
  },
  simple('trash', 'trash', 'move a call to the trash (reversible)', 'trashed'),
  simple('restore', 'restore', 'take a call out of the trash', 'restored'),
  {
    words: ['call', 'schedule-deletion'],
    args: callId,
    flags: {
      reason: {
        hint: 'consent_not_asked|consent_withdrawn|retention_expired|user_erasure',
        required: true,
      },
      at: { hint: 'ISO date-time', help: 'when the data is deleted for good (default: the service decides)' },
    },
    summary: 'schedule a call for deletion (emits call.deletion_scheduled)',
    run: async (c) => {
      await c.call({
        method: 'POST',
        path: `/calls/${enc(c.args[0])}/schedule-deletion`,
        json: defined({ reason: str(c, 'reason'), pending_deletion_at: str(c, 'at') }),
      });
      return { call_id: c.args[0], deletion_scheduled: true };
    },
  },
  simple('cancel-deletion', 'cancel-deletion', 'cancel a scheduled deletion', 'deletion_cancelled'),
  {
    words: ['call', 'erase'],
    args: callId,
    flags: { yes: { hint: '', boolean: true, required: true, help: 'confirms: erasing cannot be undone' } },
    summary: 'erase a call for good: every read answers 404 (needs --yes)',
    run: async (c) => {
      await c.call({ method: 'POST', path: `/calls/${enc(c.args[0])}/erase` });
      return { call_id: c.args[0], erased: true };
    },
  },
  {
    words: ['call', 'reprocess'],
    args: callId,
    flags: {},
    summary: "run a call's transcription and analysis again",
    run: async (c) =>
      (await c.call({ method: 'POST', path: `/calls/${enc(c.args[0])}/reprocess` })) ?? {
        call_id: c.args[0],
        reprocess: 'queued',
      },
  },
  {
    words: ['call', 'outbound'],
    args: [],
    flags: {
      org: { hint: 'org-id', required: true },
      'agent-user': { hint: 'user-id', required: true },
      'agent-phone': { hint: 'E.164', required: true, help: 'the agent is rung first, on this phone' },
      'customer-phone': { hint: 'E.164', required: true },
      from: { hint: 'E.164', required: true, help: "one of the organization's numbers" },
      'recording-mode': { hint: 'normal|no_recording' },
    },
    summary: 'place an outbound call through Twilio (rings the agent, then the customer)',
    run: (c) =>
      c.call({
        method: 'POST',
        path: `/organizations/${enc(req(c, 'org'))}/outbound-calls`,
        json: defined({
          agent_user_id: str(c, 'agent-user'),
          agent_phone: str(c, 'agent-phone'),
          customer_phone: str(c, 'customer-phone'),
          from_number: str(c, 'from'),
          recording_mode: str(c, 'recording-mode'),
        }),
      }),
  },
];
