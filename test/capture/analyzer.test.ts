import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeByRules, callShape } from '../../src/capture/analyzer.ts';
import { detectLanguage } from '../../src/capture/language.ts';
import { nothingSaid } from '../../src/capture/transcript-text.ts';
import { SUBJECT_MAX } from '../../src/domain/analysis.ts';

const org = { name: 'Acme Plumbing', language: 'en' };
const CONVERSATION = `Agent: Acme Plumbing, how can I help you?
Caller: Hi, my name is Jane Miller. I need a plumber to fix my leaking water heater. It's urgent, water is everywhere.
Agent: Where are you located?
Caller: 42 Oak Street, Springfield. Could someone come tomorrow morning at 9 am? Also, please call me back to confirm.`;

const KEYS = [
  'additional_details',
  'caller_location',
  'caller_name',
  'client_address',
  'client_city',
  'client_country',
  'counterparty_name',
  'detected_language',
  'lead_score',
  'preferred_date',
  'proposal_items',
  'service_needed',
  'services_match',
  'subject',
  'summary',
];

test('a two-sided inbound call yields every analysis field and a follow-up draft', () => {
  const { analysis, followup } = analyzeByRules({
    transcript: CONVERSATION,
    direction: 'inbound',
    organization: org,
  });
  assert.deepEqual(Object.keys(analysis).sort(), KEYS);
  assert.equal(analysis.caller_name, 'Jane Miller');
  assert.equal(analysis.counterparty_name, null);
  assert.equal(
    analysis.summary,
    'Hi, my name is Jane Miller. I need a plumber to fix my leaking water heater.',
  );
  assert.equal(analysis.service_needed, 'a plumber to fix my leaking water heater');
  assert.equal(analysis.subject, 'A plumber to fix my leaking water heater');
  assert.equal(analysis.preferred_date, 'tomorrow morning at 9 am');
  assert.equal(analysis.client_address, '42 Oak Street');
  assert.equal(analysis.client_city, 'Springfield');
  assert.equal(analysis.services_match, null);
  assert.equal(analysis.detected_language, 'en');
  assert.equal(analysis.lead_score, 10);
  assert.deepEqual(
    analysis.proposal_items?.map((p) => p.kind),
    ['appointment', 'callback'],
  );
  assert.deepEqual(followup, {
    subject: 'Your enquiry: a plumber to fix your leaking water heater',
    body: [
      'Hello Jane Miller,',
      '',
      'thank you for calling Acme Plumbing.',
      'You asked about a plumber to fix your leaking water heater.',
      'You mentioned tomorrow morning at 9 am as a preferred time.',
      '',
      'Please reply to this e-mail to confirm the details or to let us know anything else we should know.',
    ].join('\n'),
    language: 'en',
  });
});

test('the name is taken from what the customer said, never the company introducing itself', () => {
  const t = 'Agent: Hi, this is Acme Plumbing.\nCustomer: Hello, this is Tom Baker speaking.';
  assert.equal(
    analyzeByRules({ transcript: t, direction: 'inbound', organization: org }).analysis.caller_name,
    'Tom Baker',
  );
});

test('on an outbound call the customer’s name is the counterparty_name and caller_name stays null', () => {
  const t =
    'Agent: Hello, this is Sam from Acme Plumbing.\nCustomer: Hi Sam, my name is Laura Chen, thanks for calling back.';
  const { analysis } = analyzeByRules({ transcript: t, direction: 'outbound', organization: org });
  assert.equal(analysis.counterparty_name, 'Laura Chen');
  assert.equal(analysis.caller_name, null);
});

test('the subject never exceeds 80 characters', () => {
  const long = `Caller: I need ${'a very thorough inspection of every single pipe '.repeat(4)}in the house.\nAgent: Sure.`;
  const { analysis, followup } = analyzeByRules({
    transcript: long,
    direction: 'inbound',
    organization: org,
  });
  assert.ok(analysis.subject && analysis.subject.length <= SUBJECT_MAX, analysis.subject ?? '');
  assert.ok(analysis.subject.endsWith('…'));
  assert.ok(followup && followup.subject.length <= SUBJECT_MAX);
});

test('the lead score stays within 1 to 10 and is null when nobody said anything', () => {
  const inputs = [CONVERSATION, 'Caller: ok.', 'Agent: Hello?\nCaller: wrong number, sorry.', 'hmm'];
  for (const transcript of inputs) {
    const s = analyzeByRules({ transcript, direction: 'inbound', organization: org }).analysis.lead_score;
    assert.ok(s !== null && s >= 1 && s <= 10, `${transcript}: ${s}`);
  }
  assert.equal(
    analyzeByRules({ transcript: 'Agent: Hello?', direction: 'inbound', organization: org }).analysis
      .lead_score,
    3,
  );
  assert.equal(
    analyzeByRules({ transcript: '   ', direction: 'inbound', organization: org }).analysis.lead_score,
    null,
  );
});

test('a voicemail gets no follow-up draft and a low lead score', () => {
  const t = 'Hi, this is Bob Stone. Sorry I missed you, please leave a message after the tone.';
  const { analysis, followup } = analyzeByRules({ transcript: t, direction: 'inbound', organization: org });
  assert.equal(followup, null);
  assert.equal(analysis.lead_score, 2);
});

test('a one-sided labelled transcript gets no follow-up draft', () => {
  const t = 'Agent: Hello? Hello, is anyone there?\nAgent: I will try again later.';
  assert.equal(analyzeByRules({ transcript: t, direction: 'outbound', organization: org }).followup, null);
});

/** Every field null, detected_language absent: a call in which nobody said anything. */
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
const SILENT = ['', '   ', '\n\t\r\n', 'Agent:\nCustomer:  ', 'Customer: …', 'Agent: -\nCustomer: ?!'];

test('a transcript in which nobody said anything is silent; anything with a letter or digit is not', () => {
  for (const t of SILENT) assert.equal(nothingSaid(t), true, JSON.stringify(t));
  for (const t of ['hmm', 'Customer: 42', 'Agent: Hello?', 'Ja.']) assert.equal(nothingSaid(t), false, t);
});

test('a silent transcript is neither two-sided nor a voicemail: no draft may be offered after it', () => {
  for (const t of SILENT)
    assert.deepEqual(callShape(t, org.name), { voicemail: false, twoSided: false }, JSON.stringify(t));
  assert.deepEqual(callShape(CONVERSATION, org.name), { voicemail: false, twoSided: true });
  assert.deepEqual(callShape('I need a plumber tomorrow.', org.name), { voicemail: false, twoSided: true });
  assert.deepEqual(callShape('Customer: I need a plumber tomorrow.', org.name), {
    voicemail: false,
    twoSided: false,
  });
  assert.deepEqual(callShape(CONVERSATION, org.name, { voicemail: true }), {
    voicemail: true,
    twoSided: false,
  });
});

test('the rules give a silent transcript every field null and no draft, even with a reported language', () => {
  for (const t of SILENT)
    for (const direction of ['inbound', 'outbound'] as const)
      assert.deepEqual(
        analyzeByRules({ transcript: t, direction, language: 'en', organization: org, country: 'US' }),
        { analysis: ALL_NULL, followup: null },
        `${direction} ${JSON.stringify(t)}`,
      );
});

test('a call known to be a voicemail gets no draft from the rules, whatever its text looks like', () => {
  assert.notEqual(
    analyzeByRules({ transcript: CONVERSATION, direction: 'inbound', organization: org }).followup,
    null,
  );
  assert.equal(
    analyzeByRules({ transcript: CONVERSATION, direction: 'inbound', organization: org, voicemail: true })
      .followup,
    null,
  );
});

test('a German call is detected as German and its draft is written in German', () => {
  const t = `Agent: Guten Tag, hier ist Acme.
Kunde: Hallo, mein Name ist Hans Müller. Ich brauche einen Termin für die Heizungswartung. Ich wohne in München, Hauptstraße 12. Geht es am Montag?`;
  const { analysis, followup } = analyzeByRules({ transcript: t, direction: 'inbound', organization: org });
  assert.equal(analysis.detected_language, 'de');
  assert.equal(analysis.caller_name, 'Hans Müller');
  assert.equal(analysis.client_city, 'München');
  assert.equal(analysis.client_address, 'Hauptstraße 12');
  assert.equal(analysis.preferred_date, 'Montag');
  assert.equal(followup?.language, 'de');
  assert.equal(followup?.subject, 'Ihre Anfrage: einen Termin für die Heizungswartung');
});

test('a language reported with the transcript wins over detection', () => {
  const r = analyzeByRules({
    transcript: CONVERSATION,
    direction: 'inbound',
    language: 'fr-CA',
    organization: org,
  });
  assert.equal(r.analysis.detected_language, 'fr');
  assert.equal(r.followup?.language, 'fr');
});

test('without any detectable language the key is absent and the draft falls back to the account language', () => {
  const r = analyzeByRules({
    transcript: 'Agent: 42.\nCaller: 17 Oak Street.',
    direction: 'inbound',
    organization: { name: 'Acme', language: 'es' },
  });
  assert.equal('detected_language' in r.analysis, false);
  assert.equal(r.followup?.language, 'es');
});

test('an account language without a template gives an English draft labelled en', () => {
  const r = analyzeByRules({
    transcript: 'Agent: 42.\nCaller: 17 Oak Street.',
    direction: 'inbound',
    organization: { name: 'Acme', language: 'it' },
  });
  assert.equal(r.followup?.language, 'en');
});

test('stopword counting tells en, de, fr and es apart and gives null without evidence', () => {
  assert.equal(detectLanguage('I would like to have the heater checked, please'), 'en');
  assert.equal(detectLanguage('Ich möchte bitte einen Termin für die Heizung'), 'de');
  assert.equal(detectLanguage('Bonjour, je voudrais un rendez-vous pour le chauffage avec vous'), 'fr');
  assert.equal(detectLanguage('Hola, necesito una cita para la calefacción, gracias'), 'es');
  assert.equal(detectLanguage('42 17 ok'), null);
});
