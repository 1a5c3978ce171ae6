import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeByRules, callShape } from '../../src/capture/analyzer.ts';
import { callKind, callTurns, findCallerName, findPreferredDate } from '../../src/capture/extraction.ts';

const org = { name: 'Acme Plumbing', language: 'en' };
// a Wednesday
const startedAt = new Date('2026-01-14T15:00:00Z');
const analyse = (transcript: string, extra: { voicemail?: boolean } = {}) =>
  analyzeByRules({ transcript, direction: 'inbound', organization: org, startedAt, ...extra });

test('a relative day is resolved forward against the call’s start, in the call’s language, and kept as said', () => {
  const cases: [string, string][] = [
    [
      'Customer: Could you send someone tomorrow afternoon to look at the boiler?',
      'tomorrow afternoon (2026-01-15)',
    ],
    [
      'Customer: Ich brauche einen Installateur, die Heizung ist kaputt. Geht es übermorgen?',
      'übermorgen (2026-01-16)',
    ],
    ['Customer: Necesito un fontanero para una fuga, ¿puede venir el lunes?', 'lunes (2026-01-19)'],
    ['Customer: Il me faut un plombier pour une fuite, demain si possible.', 'demain (2026-01-15)'],
    // a bare weekday said on that weekday is next week's
    ['Customer: I need the drain cleared, Wednesday would suit me.', 'Wednesday (2026-01-21)'],
  ];
  for (const [t, want] of cases) assert.equal(analyse(`Agent: Acme.\n${t}`).analysis.preferred_date, want, t);
});

test('greetings, card expiry, past days, "now" and times without a day are not a preferred date', () => {
  for (const t of [
    'Agent: Guten Morgen.\nCustomer: Guten Morgen, ich brauche einen Klempner für die Spüle.',
    'Agent: Acme.\nCustomer: I need a plumber for the toilet. The card is a Mastercard, expiry 07/28.',
    'Agent: Acme.\nCustomer: A plumber came last week and the pipe is still leaking.',
    'Agent: Acme.\nCustomer: The sink is leaking right now, can you call me after five?',
  ])
    assert.equal(analyse(t).analysis.preferred_date, null, t);
  // the expiry never reaches the draft either
  const card = analyse(
    'Agent: Acme.\nCustomer: I need a plumber for the toilet on Friday. The card is a Visa, expiry 04/29.',
  );
  assert.equal(card.analysis.preferred_date, 'Friday (2026-01-16)');
  assert.doesNotMatch(card.followup?.body ?? '', /04\/29/);
});

test('the last day wins when the caller corrects themselves, and a day they rule out never does', () => {
  const turns = callTurns(
    'Agent: When suits you?\nCustomer: Thursday. No wait, Thursday I can’t, sorry — Friday.\nAgent: Friday then.',
    org.name,
  );
  assert.equal(findPreferredDate(turns, 'en', startedAt)?.value, 'Friday (2026-01-16)');
  const ruledOut = callTurns('Agent: Monday?\nCustomer: Monday is bad. Tuesday is fine.', org.name);
  assert.equal(findPreferredDate(ruledOut, 'en', startedAt)?.value, 'Tuesday (2026-01-20)');
  // the agent's proposal counts once the caller accepts it
  const accepted = callTurns('Agent: We could do Thursday at ten.\nCustomer: Perfect, thanks.', org.name);
  assert.equal(findPreferredDate(accepted, 'en', startedAt)?.value, 'Thursday (2026-01-15)');
  const declined = callTurns(
    'Agent: We could do Thursday at ten.\nCustomer: Let me check my calendar.',
    org.name,
  );
  assert.equal(findPreferredDate(declined, 'en', startedAt), null);
});

test('a title is not a name; the name after it is, and the answer to "your name?" is one', () => {
  const name = (t: string) => findCallerName(callTurns(t, org.name), org.name)?.value ?? null;
  assert.equal(name('Agent: Acme.\nCustomer: Hello, this is Mrs Okonkwo, I need a plumber.'), 'Okonkwo');
  assert.equal(name('Agent: Acme.\nCustomer: Bonjour, c’est Madame Lefort, pour une fuite.'), 'Lefort');
  assert.equal(name('Agent: Acme.\nCustomer: Hola, soy el señor Navarro.'), 'Navarro');
  assert.equal(name('Agent: Can I take a name?\nCustomer: Yes, Beatriz Souza.'), 'Beatriz Souza');
  assert.equal(name('Agent: Acme.\nCustomer: Hi, I’m calling about a leak.'), null);
  assert.equal(name('Agent: Acme, this is Sam.\nCustomer: Hi Sam, it’s urgent, the pipe burst.'), null);
});

test('wrong numbers, spam, applicants and suppliers get no service, date, place or draft, and a low score', () => {
  const calls: [string, string][] = [
    [
      'wrong_number',
      'Agent: Acme Plumbing.\nCustomer: Is this the Thai restaurant?\nAgent: No, wrong number.',
    ],
    [
      'spam',
      'Agent: Acme.\nCustomer: This is an automated message about your business listing. Press one now.',
    ],
    [
      'applicant',
      'Agent: Acme.\nCustomer: Hi, I’m Dev Shah, I saw you’re hiring plumbers, can I send my resume?',
    ],
    [
      'supplier',
      'Agent: Acme.\nCustomer: Hi, Kim from Northern Pipe Supply, your order of copper fittings ships Friday.',
    ],
  ];
  for (const [kind, t] of calls) {
    assert.equal(callKind(callTurns(t, org.name)), kind, t);
    const { analysis, followup } = analyse(t);
    assert.equal(followup, null, t);
    assert.equal(analysis.service_needed, null, t);
    assert.equal(analysis.preferred_date, null, t);
    assert.equal(analysis.client_address, null, t);
    assert.equal(analysis.lead_score, 1, t);
  }
  assert.equal(callKind(callTurns('Agent: Acme.\nCustomer: I need a plumber for a leak.', org.name)), 'lead');
});

test('a plain-text message left for the business is a voicemail: no draft, a request scores medium', () => {
  const t =
    'Hi, this is Nora Quinn, our kitchen tap is leaking everywhere. I’m at 12 Mill Road in Dover. Please call me back on 555 0100, thanks.';
  assert.deepEqual(callShape(t, org.name), { voicemail: true, twoSided: false });
  const { analysis, followup } = analyse(t);
  assert.equal(followup, null);
  assert.equal(analysis.caller_name, 'Nora Quinn');
  assert.equal(analysis.client_address, '12 Mill Road');
  assert.equal(analysis.client_city, 'Dover');
  assert.equal(analysis.lead_score, 5);
  // unlabelled text that is not a message stays a conversation
  assert.deepEqual(callShape('I need a plumber tomorrow.', org.name), { voicemail: false, twoSided: true });
});

test('addresses and cities in Spanish, German and French word orders', () => {
  const place = (t: string) => {
    const a = analyse(`Agent: ¿Dónde? Wo? Où ?\nCustomer: ${t}`).analysis;
    return [a.client_address, a.client_city];
  };
  assert.deepEqual(place('Tengo una fuga. Vivo en la calle Goya 8, en Bilbao.'), ['Calle Goya 8', 'Bilbao']);
  assert.deepEqual(place('Die Heizung ist kaputt, Mozartweg 4 in Graz.'), ['Mozartweg 4', 'Graz']);
  assert.deepEqual(place('Une fuite sous l’évier, au 5 rue Pasteur, à Lille.'), ['5 rue Pasteur', 'Lille']);
});
