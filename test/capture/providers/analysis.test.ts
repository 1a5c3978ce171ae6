import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { analysisAnswerSchema, answerJsonSchema } from '../../../src/capture/providers/analysis-schema.ts';
import { openAiAnalysis } from '../../../src/capture/providers/openai-analysis.ts';
import { FakeClock } from '../../../src/clock.ts';
import { emptyAnalysis } from '../../../src/domain/analysis.ts';
import {
  type FakeProviders,
  type FakeRequest,
  STEREO_TRANSCRIPT,
  sampleAnalysisAnswer,
  startFakeProviders,
  VOICEMAIL_TRANSCRIPT,
} from '../../helpers/fake-providers.ts';

const clock = new FakeClock('2026-06-15T10:00:00.000Z');
const org = { name: 'Acme Plumbing', language: 'de' };
let fake: FakeProviders;

before(async () => {
  fake = await startFakeProviders();
});
after(() => fake.close());

const provider = () =>
  openAiAnalysis({ baseUrl: fake.openaiBaseUrl, apiKey: 'sk-a', model: 'gpt-test', timeoutMs: 5000, clock });
const lastChat = () => fake.of('chat').at(-1) as FakeRequest;
type ChatBody = {
  model: string;
  messages: { role: string; content: string }[];
  response_format: {
    type: string;
    json_schema: { name: string; strict: boolean; schema: Record<string, unknown> };
  };
};

test('the request carries a strict JSON schema generated from the zod schema that validates the answer', async () => {
  const r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'inbound',
    organization: org,
  });
  const body = lastChat().json as ChatBody;
  assert.equal(lastChat().headers.authorization, 'Bearer sk-a');
  assert.equal(body.model, 'gpt-test');
  assert.deepEqual(body.response_format, {
    type: 'json_schema',
    json_schema: {
      name: 'call_analysis',
      strict: true,
      schema: answerJsonSchema({ direction: 'inbound', draftAllowed: true }),
    },
  });
  const schema = body.response_format.json_schema.schema as {
    type: string;
    required: string[];
    additionalProperties: boolean;
    properties: Record<string, Record<string, unknown>>;
  };
  assert.equal(schema.type, 'object');
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(schema.required, [
    'caller_name',
    'summary',
    'subject',
    'service_needed',
    'services_match',
    'lead_score',
    'preferred_date',
    'client_city',
    'client_address',
    'additional_details',
    'caller_location',
    'client_country',
    'counterparty_name',
    'detected_language',
    'proposal_items',
    'followup_email',
  ]);
  assert.deepEqual(schema.properties.lead_score.anyOf, [
    { type: 'integer', minimum: 1, maximum: 10 },
    { type: 'null' },
  ]);
  assert.deepEqual(schema.properties.counterparty_name, {
    type: 'null',
    description: 'always null on an inbound call',
  });
  assert.match(String(schema.properties.subject.description), /at most 80 characters/);
  // keywords strict mode refuses are left out of what is sent (zod still checks them)
  assert.doesNotMatch(JSON.stringify(schema), /maxLength|minLength|\$schema/);
  assert.equal(body.messages[0].role, 'system');
  assert.deepEqual(JSON.parse(body.messages[1].content), {
    organization: org,
    direction: 'inbound',
    language_reported_by_speech_to_text: null,
    follow_up_email_allowed: true,
    call_started_at: null,
    transcript: STEREO_TRANSCRIPT,
  });

  assert.deepEqual(r, {
    analysis: {
      caller_name: 'Jane Miller',
      summary: 'The customer needs a leaking water heater fixed and agreed to a visit tomorrow at 9 am.',
      subject: 'Leaking water heater repair',
      service_needed: 'fix a leaking water heater',
      services_match: true,
      lead_score: 8,
      preferred_date: 'tomorrow at 9 am',
      client_city: null,
      client_address: null,
      additional_details: null,
      caller_location: null,
      client_country: null,
      counterparty_name: null,
      proposal_items: [{ kind: 'appointment', text: 'Visit tomorrow at 9 am' }],
      detected_language: 'en',
    },
    followup: {
      subject: 'Your water heater repair',
      body: 'Hello Jane,\n\nthank you for your call. We will come tomorrow at 9 am to fix your leaking water heater.',
      language: 'en',
    },
  });
});

test('on an outbound call counterparty_name is open and caller_name can only be null', async () => {
  const r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'outbound',
    organization: org,
  });
  const schema = (lastChat().json as ChatBody).response_format.json_schema.schema as {
    properties: Record<string, Record<string, unknown>>;
  };
  assert.equal(schema.properties.caller_name.type, 'null');
  assert.ok(Array.isArray(schema.properties.counterparty_name.anyOf));
  assert.equal(r.analysis.counterparty_name, 'Jane Miller');
  assert.equal(r.analysis.caller_name, null);
});

test('an answer with values out of range is retried once with the errors, then accepted; a counterparty_name on an inbound call is not one of the errors', async () => {
  const good = sampleAnalysisAnswer({
    json: {
      response_format: {
        json_schema: { schema: answerJsonSchema({ direction: 'inbound', draftAllowed: true }) },
      },
    },
  } as FakeRequest);
  const bad = { ...good, counterparty_name: 'Jane Miller', lead_score: 11, subject: 'x'.repeat(81) };
  fake.script('chat', { content: bad }, { content: good });
  const before = fake.of('chat').length;
  const r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'inbound',
    organization: org,
  });
  assert.equal(r.analysis.counterparty_name, null);
  assert.equal(r.analysis.lead_score, 8);
  assert.equal(r.droppedFields, undefined, 'the accepted (second) answer had nothing to drop');
  const reqs = fake.of('chat').slice(before);
  assert.equal(reqs.length, 2);
  const second = reqs[1].json as ChatBody;
  assert.equal(second.messages.length, 4);
  assert.deepEqual(second.messages[2], { role: 'assistant', content: JSON.stringify(bad) });
  assert.equal(second.messages[3].role, 'user');
  assert.equal(
    second.messages[3].content,
    [
      'Your answer was rejected:',
      '- subject: Too big: expected string to have <=80 characters',
      '- lead_score: Too big: expected number to be <=10',
      'Answer again with the whole corrected JSON object.',
    ].join('\n'),
  );
});

test('an inbound answer with a counterparty_name is salvaged at once: the value dropped and named, the rest kept', async () => {
  const good = sampleAnalysisAnswer({
    json: {
      response_format: {
        json_schema: { schema: answerJsonSchema({ direction: 'inbound', draftAllowed: true }) },
      },
    },
  } as FakeRequest);
  fake.script('chat', { content: { ...good, counterparty_name: 'Jane Miller' } });
  const before = fake.of('chat').length;
  const r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'inbound',
    organization: org,
  });
  assert.equal(fake.of('chat').length - before, 1, 'not retried');
  assert.deepEqual(r.droppedFields, ['counterparty_name']);
  assert.equal(r.analysis.counterparty_name, null);
  assert.equal(r.analysis.caller_name, 'Jane Miller');
  assert.equal(r.analysis.subject, 'Leaking water heater repair');
  assert.equal(r.analysis.lead_score, 8);
  assert.equal(r.followup?.subject, 'Your water heater repair');
});

test('an outbound answer with a caller_name is salvaged: caller_name dropped, counterparty_name kept', async () => {
  const good = sampleAnalysisAnswer({
    json: {
      response_format: {
        json_schema: { schema: answerJsonSchema({ direction: 'outbound', draftAllowed: true }) },
      },
    },
  } as FakeRequest);
  assert.equal(good.caller_name, null);
  fake.script('chat', { content: { ...good, caller_name: 'Jane Miller' } });
  const before = fake.of('chat').length;
  const r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'outbound',
    organization: org,
  });
  assert.equal(fake.of('chat').length - before, 1, 'not retried');
  assert.deepEqual(r.droppedFields, ['caller_name']);
  assert.equal(r.analysis.caller_name, null);
  assert.equal(r.analysis.counterparty_name, 'Jane Miller');
  assert.equal(r.analysis.summary, good.summary);
});

test('a wrong type is still retried and refused, whatever a forbidden field holds', async () => {
  const good = sampleAnalysisAnswer({
    json: {
      response_format: {
        json_schema: { schema: answerJsonSchema({ direction: 'inbound', draftAllowed: true }) },
      },
    },
  } as FakeRequest);
  const bad = { ...good, counterparty_name: 'Jane Miller', lead_score: '7' };
  fake.script('chat', { content: bad }, { content: bad });
  const before = fake.of('chat').length;
  await assert.rejects(
    provider().analyze({ transcript: STEREO_TRANSCRIPT, direction: 'inbound', organization: org }),
    {
      kind: 'invalid_output',
      message:
        "the model's analysis broke the schema twice: lead_score: Invalid input: expected number, received string",
    },
  );
  assert.equal(fake.of('chat').length - before, 2);
});

test('two invalid answers in a row are invalid_output, never clipped or filled in', async () => {
  fake.script('chat', { content: 'Sure! Here is the analysis: {' }, { content: { summary: 'only this' } });
  const before = fake.of('chat').length;
  await assert.rejects(
    provider().analyze({ transcript: STEREO_TRANSCRIPT, direction: 'inbound', organization: org }),
    (err: { name: string; kind: string; message: string }) => {
      assert.equal(err.name, 'ProviderError');
      assert.equal(err.kind, 'invalid_output');
      assert.match(err.message, /^the model's analysis broke the schema twice: caller_name: Invalid input/);
      return true;
    },
  );
  const reqs = fake.of('chat').slice(before);
  assert.equal(reqs.length, 2);
  assert.equal(
    (reqs[1].json as ChatBody).messages[3].content,
    'Your answer was rejected:\n- the answer is not a JSON object\nAnswer again with the whole corrected JSON object.',
  );
});

test('a refusal counts as an invalid answer', async () => {
  fake.script(
    'chat',
    {
      ok: {
        choices: [{ message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' } }],
      },
    },
    {
      ok: {
        choices: [{ message: { role: 'assistant', content: null, refusal: 'I cannot help with that.' } }],
      },
    },
  );
  await assert.rejects(
    provider().analyze({ transcript: STEREO_TRANSCRIPT, direction: 'inbound', organization: org }),
    {
      kind: 'invalid_output',
      message: "the model's analysis broke the schema twice: the model refused: I cannot help with that.",
    },
  );
});

test('a chat answer without choices is fatal', async () => {
  fake.script('chat', { ok: { object: 'chat.completion' } });
  await assert.rejects(
    provider().analyze({ transcript: STEREO_TRANSCRIPT, direction: 'inbound', organization: org }),
    {
      kind: 'fatal',
      message: 'openai answered a chat completion without choices[0].message',
    },
  );
});

test('after a voicemail the schema allows no draft, and a draft answered anyway is dropped, the rest kept', async () => {
  const r = await provider().analyze({
    transcript: VOICEMAIL_TRANSCRIPT,
    direction: 'inbound',
    organization: org,
  });
  const body = lastChat().json as ChatBody;
  assert.equal(
    (body.response_format.json_schema.schema as { properties: Record<string, { type?: string }> }).properties
      .followup_email.type,
    'null',
  );
  assert.equal(JSON.parse(body.messages[1].content).follow_up_email_allowed, false);
  assert.equal(r.followup, null);
  assert.equal(r.droppedFields, undefined);
  // a model that answers a draft anyway (even one that would break the draft's rules): not retried,
  // the draft dropped and named, the analysis kept
  const withDraft = {
    ...sampleAnalysisAnswer(lastChat()),
    followup_email: { subject: 'Hi', body: '<p>Hello Bob.</p>' },
  };
  fake.script('chat', { content: withDraft });
  const before = fake.of('chat').length;
  const again = await provider().analyze({
    transcript: VOICEMAIL_TRANSCRIPT,
    direction: 'inbound',
    organization: org,
  });
  assert.equal(fake.of('chat').length - before, 1);
  assert.equal(again.followup, null);
  assert.deepEqual(again.droppedFields, ['followup_email']);
  assert.equal(
    again.analysis.summary,
    'The customer needs a leaking water heater fixed and agreed to a visit tomorrow at 9 am.',
  );
  assert.equal(again.analysis.caller_name, 'Jane Miller');
});

test('a call known to be a voicemail, or a one-sided transcript, is never offered a draft', async () => {
  const cases: Array<{ transcript: string; voicemail?: boolean }> = [
    { transcript: STEREO_TRANSCRIPT, voicemail: true },
    { transcript: 'Customer: Hi, I need a plumber for my kitchen sink tomorrow.' },
    { transcript: 'Agent: Hello? Hello, is anyone there?' },
  ];
  for (const c of cases) {
    const r = await provider().analyze({ ...c, direction: 'inbound', organization: org });
    const body = lastChat().json as ChatBody;
    assert.equal(JSON.parse(body.messages[1].content).follow_up_email_allowed, false, c.transcript);
    assert.equal(
      (body.response_format.json_schema.schema as { properties: Record<string, { type?: string }> })
        .properties.followup_email.type,
      'null',
    );
    assert.equal(r.followup, null);
  }
});

test('a transcript in which nobody said anything is never sent to the model: every field null, no draft', async () => {
  // a model that would invent: a name, an address, lead score 7, a draft
  const answer = fake.chat;
  fake.chat = (req) => ({ ...sampleAnalysisAnswer(req), client_address: '12 Main Street', lead_score: 7 });
  try {
    const before = fake.of('chat').length;
    for (const transcript of ['', '   ', '\n\t \n', 'Agent:\nCustomer: ', 'Customer: ...']) {
      const r = await provider().analyze({
        transcript,
        direction: 'inbound',
        language: 'en',
        organization: org,
      });
      assert.deepEqual(r, { analysis: emptyAnalysis(), followup: null }, JSON.stringify(transcript));
    }
    assert.equal(fake.of('chat').length - before, 0, 'the model was never asked');
    // the same fake does invent when something was said
    const said = await provider().analyze({
      transcript: 'Customer: Hello.',
      direction: 'inbound',
      organization: org,
    });
    assert.equal(said.analysis.lead_score, 7);
    assert.equal(fake.of('chat').length - before, 1);
  } finally {
    fake.chat = answer;
  }
});

test('a draft with a signature or HTML is sent back', async () => {
  const good = sampleAnalysisAnswer({
    json: {
      response_format: {
        json_schema: { schema: answerJsonSchema({ direction: 'inbound', draftAllowed: true }) },
      },
    },
  } as FakeRequest);
  const signed = {
    ...good,
    followup_email: {
      subject: 'Your call',
      body: 'Hello Jane,\n\nthank you for calling.\n\nBest regards,\nSam\nAcme Plumbing',
    },
  };
  const html = { ...good, followup_email: { subject: 'Your call', body: '<p>Hello Jane,</p>' } };
  fake.script('chat', { content: signed }, { content: html });
  await assert.rejects(
    provider().analyze({ transcript: STEREO_TRANSCRIPT, direction: 'inbound', organization: org }),
    {
      kind: 'invalid_output',
      message:
        "the model's analysis broke the schema twice: followup_email.body: must be plain text without HTML tags",
    },
  );
  const first = fake.of('chat').at(-1)?.json as ChatBody;
  assert.match(
    first.messages[3].content,
    /followup_email\.body: must end without a signature or closing formula/,
  );
});

test('the draft is labelled with the detected language, else the reported one, else the organization’s', async () => {
  const schema = answerJsonSchema({ direction: 'inbound', draftAllowed: true });
  const good = sampleAnalysisAnswer({
    json: { response_format: { json_schema: { schema } } },
  } as FakeRequest);
  fake.script('chat', { content: { ...good, detected_language: 'fr' } });
  let r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'inbound',
    organization: org,
  });
  assert.equal(r.followup?.language, 'fr');
  assert.equal(r.analysis.detected_language, 'fr');

  fake.script('chat', { content: { ...good, detected_language: null } });
  r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'inbound',
    language: 'es-MX',
    organization: org,
  });
  assert.equal(r.followup?.language, 'es');
  assert.equal(r.analysis.detected_language, 'es');

  fake.script('chat', { content: { ...good, detected_language: null } });
  r = await provider().analyze({ transcript: STEREO_TRANSCRIPT, direction: 'inbound', organization: org });
  assert.equal(r.followup?.language, 'de');
  assert.equal('detected_language' in r.analysis, false);
});

test('the model may decline a draft after a two-sided call, and an empty proposal list is null', async () => {
  const schema = answerJsonSchema({ direction: 'inbound', draftAllowed: true });
  const good = sampleAnalysisAnswer({
    json: { response_format: { json_schema: { schema } } },
  } as FakeRequest);
  fake.script('chat', { content: { ...good, followup_email: null, proposal_items: [] } });
  const r = await provider().analyze({
    transcript: STEREO_TRANSCRIPT,
    direction: 'inbound',
    organization: org,
  });
  assert.equal(r.followup, null);
  assert.equal(r.analysis.proposal_items, null);
});

test('the zod schema accepts its own sample and rejects a fractional lead score', () => {
  const zod = analysisAnswerSchema({ direction: 'outbound', draftAllowed: true });
  const schema = answerJsonSchema({ direction: 'outbound', draftAllowed: true });
  const sample = sampleAnalysisAnswer({
    json: { response_format: { json_schema: { schema } } },
  } as FakeRequest);
  assert.equal(zod.safeParse(sample).success, true);
  assert.equal(zod.safeParse({ ...sample, lead_score: 7.5 }).success, false);
  assert.equal(zod.safeParse({ ...sample, detected_language: 'english' }).success, false);
  assert.equal(
    zod.safeParse({ ...sample, extra: 1 }).success,
    true,
    'zod strips unknown keys; the schema forbids them',
  );
});
