/**
 * The analyse stage's own rules (issue 15, items 1 and 6), through the job runner with the real
 * openai analysis provider talking HTTP to the fake provider server (and in-test providers where
 * any provider must be left alone):
 * - a transcript in which nobody said anything is analysed by no provider: all-null analysis, no draft;
 * - a call known to be a voicemail is never offered a draft;
 * - a value in a field the call forbids is dropped and logged by name, the rest stored;
 * - an answer with a wrong type is retried, refused, and the call's needs_review is logged at warn.
 * The log is pino writing into an array (h.deps.log swapped for the file).
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, afterEach, before, test } from 'node:test';
import { pino } from 'pino';
import { submitTranscript } from '../../src/capture/pipeline.ts';
import { analysisProviderFromConfig } from '../../src/capture/providers/index.ts';
import { loadConfig } from '../../src/config.ts';
import type { CaptureProviders } from '../../src/deps.ts';
import type { AnalyzerInput } from '../../src/domain/capture-providers.ts';
import { eventsOf, typesOf } from '../helpers/events.ts';
import {
  type FakeProviders,
  type FakeRequest,
  STEREO_TRANSCRIPT,
  sampleAnalysisAnswer,
  startFakeProviders,
} from '../helpers/fake-providers.ts';
import { insertCall, insertOrg } from '../helpers/fixtures.ts';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { admin } from '../helpers/http.ts';
import { settleJobs } from '../helpers/jobs.ts';

let h: Harness;
let fake: FakeProviders;
let orgId: string;
let configured: CaptureProviders;
const lines: Array<Record<string, unknown>> = [];
const raw: string[] = [];

before(async () => {
  fake = await startFakeProviders();
  h = await createHarness({
    ANALYSIS_PROVIDER: 'openai',
    ANALYSIS_BASE_URL: fake.openaiBaseUrl,
    ANALYSIS_API_KEY: 'sk-test-analysis-key-0123456789',
  });
  configured = h.deps.capture;
  h.deps.log = pino(
    { level: 'info' },
    new Writable({
      write(chunk, _enc, done) {
        raw.push(String(chunk));
        lines.push(JSON.parse(String(chunk)));
        done();
      },
    }),
  );
  ({ orgId } = await insertOrg(h.db, { country: 'US' }));
});
afterEach(() => {
  h.deps.capture = configured;
  fake.chat = sampleAnalysisAnswer;
});
after(async () => {
  await h?.close();
  await fake?.close();
});

/** A model that makes things up whatever it is given: a name, an address, lead score 7, a draft. */
const inventing = (req: FakeRequest) => ({
  ...sampleAnalysisAnswer(req),
  client_address: '12 Main Street',
  lead_score: 7,
});

const ALL_NULL = {
  caller_name: null,
  summary: null,
  subject: null,
  service_needed: null,
  services_match: null,
  lead_score: null,
  preferred_date: null,
  client_city: null,
  client_address: null,
  additional_details: null,
  caller_location: null,
  client_country: null,
  counterparty_name: null,
  proposal_items: null,
};

async function analysed(
  text: string,
  call: { direction?: 'inbound' | 'outbound'; voicemail?: boolean } = {},
): Promise<string> {
  const id = await insertCall(h.db, { orgId, direction: call.direction, recordingState: 'not_captured' });
  if (call.voicemail) await h.db.query('UPDATE calls SET voicemail = true WHERE id = $1', [id]);
  await submitTranscript(h.deps, id, { text, language: 'en' });
  await settleJobs(h.deps);
  return id;
}

async function stored(id: string) {
  const { rows } = await h.db.query<{ analysis: Record<string, unknown>; followup_email: unknown }>(
    'SELECT analysis, followup_email FROM call_analyses WHERE call_id = $1',
    [id],
  );
  return rows[0];
}

const payload = async (id: string, type: string) =>
  (await eventsOf(h.db, id)).find((e) => e.event_type === type)?.envelope.data as Record<string, unknown>;
const linesOf = (id: string) => lines.filter((l) => l.callId === id);

test('a silent transcript is analysed by no provider: every field null, no draft, call.completed goes out', async () => {
  for (const text of ['', '  \n\t ', 'Agent:\nCustomer: ']) {
    // the configured openai provider (the fake would invent) and an in-process provider alike
    fake.chat = inventing;
    const chatsBefore = fake.of('chat').length;
    const viaModel = await analysed(text);
    assert.equal(fake.of('chat').length, chatsBefore, 'the model is never asked');

    let asked = 0;
    h.deps.capture = {
      transcription: null,
      analysis: {
        name: 'inventing',
        analyze: async (input: AnalyzerInput) => {
          asked++;
          return {
            analysis: { ...ALL_NULL, caller_name: 'Jane Miller', lead_score: 7 },
            followup: { subject: 'Hi', body: `Hello, ${input.transcript}`, language: 'en' },
          };
        },
      },
    };
    const viaAny = await analysed(text);
    h.deps.capture = configured;
    assert.equal(asked, 0, 'no provider at all is asked');

    for (const id of [viaModel, viaAny]) {
      assert.deepEqual(await stored(id), { analysis: ALL_NULL, followup_email: null });
      assert.deepEqual(typesOf(await eventsOf(h.db, id)), ['call.completed', 'call.transcribed']);
      assert.deepEqual(await payload(id, 'call.transcribed'), {
        call_id: id,
        transcript_original: text,
        transcript_processed: ALL_NULL,
      });
      assert.deepEqual((await payload(id, 'call.completed')).transcript_processed, ALL_NULL);
      assert.equal((await admin(h, 'GET', `/calls/${id}/processing`)).json().status, 'completed');
    }
  }
});

test('a call known to be a voicemail is never offered a draft, whatever its transcript looks like', async () => {
  const id = await analysed(STEREO_TRANSCRIPT, { voicemail: true });
  const chat = fake.of('chat').at(-1)!.json as {
    messages: { content: string }[];
    response_format: { json_schema: { schema: { properties: Record<string, { type?: string }> } } };
  };
  assert.equal(JSON.parse(chat.messages[1].content).follow_up_email_allowed, false);
  assert.equal(chat.response_format.json_schema.schema.properties.followup_email.type, 'null');
  assert.equal((await stored(id)).followup_email, null);
  assert.deepEqual(typesOf(await eventsOf(h.db, id)), ['call.completed', 'call.transcribed']);
});

test('a value in a field the call forbids is dropped and logged by name only; the rest is stored and completes the call', async () => {
  const cases = [
    { direction: 'inbound' as const, field: 'counterparty_name', kept: 'caller_name' },
    { direction: 'outbound' as const, field: 'caller_name', kept: 'counterparty_name' },
  ];
  for (const c of cases) {
    fake.chat = (req) => ({ ...sampleAnalysisAnswer(req), [c.field]: 'Zebedee Forbiddenname' });
    const chatsBefore = fake.of('chat').length;
    const id = await analysed(STEREO_TRANSCRIPT, { direction: c.direction });
    assert.equal(fake.of('chat').length - chatsBefore, 1, 'not retried');
    const s = await stored(id);
    assert.equal(s.analysis[c.field], null);
    assert.equal(s.analysis[c.kept], 'Jane Miller');
    assert.equal(s.analysis.subject, 'Leaking water heater repair');
    assert.equal(s.analysis.lead_score, 8);
    assert.deepEqual(typesOf(await eventsOf(h.db, id)), [
      'call.completed',
      'call.followup_email.drafted',
      'call.transcribed',
    ]);
    const tp = (await payload(id, 'call.completed')).transcript_processed as Record<string, unknown>;
    assert.equal(tp[c.field], null);
    const view = (await admin(h, 'GET', `/calls/${id}/processing`)).json();
    assert.equal(view.status, 'completed');
    assert.deepEqual(
      linesOf(id).map((l) => [l.level, l.stage, l.provider, l.fields, l.msg]),
      [
        [
          40,
          'analyse',
          'openai',
          [c.field],
          'analysis answer had a value in a field this call allows only null; dropped, the rest kept',
        ],
      ],
    );
  }
  assert.equal(
    raw.some((l) => l.includes('Zebedee') || l.includes('Forbiddenname')),
    false,
    'the dropped value is never logged',
  );
});

test('an answer of the wrong type is retried, then refused: needs_review, logged at warn', async () => {
  const bad = (req: FakeRequest) => ({ ...sampleAnalysisAnswer(req), lead_score: '7' });
  fake.chat = bad;
  const chatsBefore = fake.of('chat').length;
  const id = await analysed(STEREO_TRANSCRIPT);
  assert.equal(fake.of('chat').length - chatsBefore, 2, 'one corrective retry');
  const view = (await admin(h, 'GET', `/calls/${id}/processing`)).json();
  assert.equal(view.status, 'needs_review');
  const analyse = view.stages.find((s: { stage: string }) => s.stage === 'analyse');
  assert.deepEqual(
    [analyse.state, analyse.last_error_kind, analyse.last_error],
    [
      'needs_review',
      'invalid_output',
      "openai: the model's analysis broke the schema twice: lead_score: Invalid input: expected number, received string",
    ],
  );
  assert.equal(await stored(id), undefined);
  assert.deepEqual(typesOf(await eventsOf(h.db, id)), []);
  assert.deepEqual(
    linesOf(id).map((l) => [l.level, l.stage, l.attempts, l.kind, l.provider, l.msg]),
    [
      [
        40,
        'analyse',
        1,
        'invalid_output',
        'openai',
        'processing stage needs_review; GET /admin/v1/calls/{id}/processing shows why, POST …/reprocess runs it again',
      ],
    ],
  );
});

test('the rules analyser resolves dates against the call’s start and its evidence is stored, never sent', async () => {
  const seen: AnalyzerInput[] = [];
  const rules = analysisProviderFromConfig(loadConfig({}));
  h.deps.capture = {
    transcription: null,
    analysis: {
      name: 'rules',
      analyze: async (input: AnalyzerInput) => {
        seen.push(input);
        return rules.analyze(input);
      },
    },
  };
  const id = await insertCall(h.db, { orgId, recordingState: 'not_captured' });
  await h.db.query("UPDATE calls SET created_at = '2026-03-09T15:00:00Z' WHERE id = $1", [id]); // a Monday
  const text =
    'Agent: Acme, how can I help?\nCustomer: Hi, my name is Jane Miller, my kitchen sink is leaking.\nAgent: We could come Thursday.\nCustomer: Thursday is perfect.';
  await submitTranscript(h.deps, id, { text, language: 'en' });
  await settleJobs(h.deps);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].startedAt?.toISOString(), '2026-03-09T15:00:00.000Z');
  const { rows } = await h.db.query<{ analysis: Record<string, unknown>; evidence: unknown }>(
    'SELECT analysis, evidence FROM call_analyses WHERE call_id = $1',
    [id],
  );
  assert.equal(rows[0].analysis.preferred_date, 'Thursday (2026-03-12)');
  assert.deepEqual(rows[0].evidence, {
    caller_name: { quote: 'my name is Jane Miller', turn: 1, start: null },
    service_needed: {
      quote: 'Hi, my name is Jane Miller, my kitchen sink is leaking.',
      turn: 1,
      start: null,
    },
    preferred_date: { quote: 'Thursday is perfect.', turn: 3, start: null },
  });
  // transcript_processed carries the analysis only: the quotes are transcript words
  const completed = await payload(id, 'call.completed');
  assert.equal('evidence' in (completed.transcript_processed as object), false);
});

test("the analysis is stored by the call's own write: its lead score and search vector on the call, processed, whether it completes now or waits for the recording", async () => {
  for (const recordingState of ['not_captured', 'pending'] as const) {
    const id = await insertCall(h.db, { orgId, recordingState });
    await submitTranscript(h.deps, id, { text: STEREO_TRANSCRIPT, language: 'en' });
    await settleJobs(h.deps);
    const { rows } = await h.db.query<{
      lead_score: string | null;
      same_vector: boolean;
      processing_state: string;
      pending_transcript: string | null;
      caller_name: string | null;
      completed: boolean;
      complete_job: string;
    }>(
      `SELECT c.lead_score::text AS lead_score, c.search_vector IS NOT NULL AND c.search_vector = a.search_vector AS same_vector,
              c.processing_state, c.pending_transcript, c.caller_name, c.completion_emitted_at IS NOT NULL AS completed,
              (SELECT j.state FROM processing_jobs j WHERE j.call_id = c.id AND j.stage = 'complete') AS complete_job
         FROM calls c JOIN call_analyses a ON a.call_id = c.id WHERE c.id = $1`,
      [id],
    );
    const waiting = recordingState === 'pending';
    assert.deepEqual(rows[0], {
      lead_score: '8',
      same_vector: true,
      processing_state: 'processed',
      pending_transcript: null,
      caller_name: 'Jane Miller',
      completed: !waiting,
      complete_job: waiting ? 'waiting' : 'succeeded',
    });
    assert.deepEqual(
      typesOf(await eventsOf(h.db, id)),
      waiting ? [] : ['call.completed', 'call.followup_email.drafted', 'call.transcribed'],
    );
  }
});
