import assert from 'node:assert/strict';
import { test } from 'node:test';
import { consentAllowsRecording, type RecordingConsent } from '../../src/domain/recording-consent.ts';

const CASES: [RecordingConsent, boolean][] = [
  [null, true], // no announcement was due
  ['accepted', true], // silence through the announcement
  ['refused', false], // a key pressed
  ['announced', false], // never answered: the caller hung up during the announcement
];

for (const [consent, allowed] of CASES) {
  test(`consent ${consent}: recording ${allowed ? 'allowed' : 'refused'}`, () => {
    assert.equal(consentAllowsRecording(consent), allowed);
  });
}
