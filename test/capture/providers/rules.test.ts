import assert from 'node:assert/strict';
import { test } from 'node:test';
import { analyzeByRules } from '../../../src/capture/analyzer.ts';
import { detectLanguage } from '../../../src/capture/language.ts';
import { analysisProviderFromConfig } from '../../../src/capture/providers/index.ts';
import { extractPhoneNumbers, extractPreferredDate } from '../../../src/capture/text-rules.ts';
import { loadConfig } from '../../../src/config.ts';

const org = { name: 'Acme Plumbing', language: 'en' };

test('franc detects languages beyond the four templates; the draft then falls back to English', () => {
  const t = `Agent: Pronto, Acme.
Cliente: Buongiorno, mi chiamo Giulia Rossi. Vorrei un appuntamento per la manutenzione della caldaia, possibilmente domani mattina, perché fa molto freddo in casa.`;
  const r = analyzeByRules({ transcript: t, direction: 'inbound', organization: org });
  assert.equal(r.analysis.detected_language, 'it');
  assert.equal(r.followup?.language, 'en');
  assert.equal(
    detectLanguage('Здравствуйте, я хотел бы записаться на обслуживание котла на следующей неделе'),
    'ru',
  );
  assert.equal(
    detectLanguage('Dzień dobry, chciałbym umówić wizytę serwisową kotła na przyszły tydzień, dziękuję'),
    'pl',
  );
});

test('speaker labels do not count as English words', () => {
  const t = `Agent: Guten Tag, Acme Sanitär, was kann ich für Sie tun?
Customer: Ich brauche dringend einen Installateur, das Wasser läuft aus der Leitung im Keller.`;
  assert.equal(
    analyzeByRules({ transcript: t, direction: 'inbound', organization: org }).analysis.detected_language,
    'de',
  );
});

test('chrono-node reads dates and times the phrase list missed, in the call’s language', () => {
  assert.equal(extractPreferredDate('Could you come on the 3rd of March at 2pm?'), '3rd of March at 2pm');
  assert.equal(extractPreferredDate('Could someone come at 5 pm?'), 'at 5 pm');
  assert.equal(
    extractPreferredDate('Pourriez-vous passer lundi prochain à 10h ?', 'fr'),
    'lundi prochain à 10h',
  );
  assert.equal(extractPreferredDate('¿Puede venir el martes a las 10?', 'es'), 'martes a las 10');
  assert.equal(extractPreferredDate('Kommen Sie bitte am Freitag um 14 Uhr.', 'de'), 'Freitag um 14 Uhr');
  // what chrono leaves out, the phrase list still finds
  assert.equal(extractPreferredDate('Sometime by the end of the week would be good.'), 'end of the week');
  assert.equal(extractPreferredDate('I have 3 kids and 2 dogs.'), null);
});

test('libphonenumber-js finds the numbers the customer says, in national format with the country, international without', () => {
  assert.deepEqual(extractPhoneNumbers('You can reach me at (415) 555-2671 after six.', 'US'), [
    '+1 415 555 2671',
  ]);
  assert.deepEqual(extractPhoneNumbers('Meine Nummer ist 0151 23456789.', 'de'), ['+49 1512 3456789']);
  assert.deepEqual(extractPhoneNumbers('My number is +44 20 7946 0958.'), ['+44 20 7946 0958']);
  assert.deepEqual(extractPhoneNumbers('You can reach me at (415) 555-2671.'), []);
  assert.deepEqual(extractPhoneNumbers('We live at 42 Oak Street since 2019.', 'US'), []);
});

test('a number said in the call goes into additional_details and the callback proposal', () => {
  const t = `Agent: Acme Plumbing, hello.
Customer: Hi, I need a plumber for a blocked drain. Please call me back at (415) 555-2671.`;
  const r = analyzeByRules({ transcript: t, direction: 'inbound', organization: org, country: 'US' });
  assert.equal(r.analysis.additional_details, 'Phone number given: +1 415 555 2671.');
  assert.deepEqual(r.analysis.proposal_items, [
    { kind: 'callback', text: 'Call the customer back at +1 415 555 2671' },
  ]);
});

test('the rules provider from the settings is the rule-based analyzer', async () => {
  const p = analysisProviderFromConfig(loadConfig({}));
  assert.equal(p.name, 'rules');
  const r = await p.analyze({
    transcript: 'Customer: Hi, I need a plumber tomorrow.',
    direction: 'inbound',
    organization: org,
  });
  assert.equal(r.analysis.preferred_date, 'tomorrow');
});
