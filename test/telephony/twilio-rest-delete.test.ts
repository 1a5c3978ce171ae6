import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { deleteTwilioRecording, TwilioRestError } from '../../src/capture/telephony/twilio/rest.ts';
import { type FakeTwilio, startFakeTwilio } from '../helpers/fake-twilio.ts';
import { monoMp3 } from '../helpers/stereo-mp3.ts';

/** deleteTwilioRecording on node:http: Twilio's answers, and what fetch threw, as it threw it. */

let fake: FakeTwilio;
before(async () => {
  fake = await startFakeTwilio({ publicBaseUrl: 'https://calls.example.test' });
});
after(() => fake.close());

test('a recording is deleted (204), then gone (404); a 5xx is a TwilioRestError with its code and message', async () => {
  const config = { TWILIO_API_BASE_URL: fake.url };
  const rec = fake.addRecording({ callSid: 'CA1', audio: monoMp3({ seconds: 1 }) });
  assert.equal(await deleteTwilioRecording(config, fake.account, rec.sid), 'deleted');
  assert.equal(fake.recordings.get(rec.sid)!.deleted, true);
  assert.equal(await deleteTwilioRecording(config, fake.account, rec.sid), 'not_found');
  fake.failRecordingDeletes = 500;
  try {
    await assert.rejects(deleteTwilioRecording(config, fake.account, rec.sid), (err: unknown) => {
      assert.ok(err instanceof TwilioRestError);
      assert.equal(err.status, 500);
      assert.equal(err.twilioCode, 20500);
      assert.equal(err.message, 'Twilio answered 500: Internal Server Error');
      return true;
    });
  } finally {
    fake.failRecordingDeletes = null;
  }
  // wrong credentials: Twilio's 401
  await assert.rejects(deleteTwilioRecording(config, { ...fake.account, authToken: 'wrong' }, rec.sid), {
    name: 'TwilioRestError',
    status: 401,
    message: 'Twilio answered 401: Authenticate',
  });
  const del = fake.restRequests.filter((r) => r.method === 'DELETE');
  assert.equal(del.length, 4);
});

test('a redirect is followed as fetch follows it (DELETE kept), and a refused connection throws as fetch did', async () => {
  const rec = fake.addRecording({ callSid: 'CA2', audio: monoMp3({ seconds: 1 }) });
  const front = createServer((req, res) => res.writeHead(307, { location: `${fake.url}${req.url}` }).end());
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  const port = (front.address() as AddressInfo).port;
  try {
    // the redirect leaves the origin: fetch drops the credentials, and so Twilio answers 401
    await assert.rejects(
      deleteTwilioRecording({ TWILIO_API_BASE_URL: `http://127.0.0.1:${port}` }, fake.account, rec.sid),
      { name: 'TwilioRestError', status: 401 },
    );
  } finally {
    front.closeAllConnections();
    await new Promise<void>((r) => front.close(() => r()));
  }
  // a port that was just free, never connected to (the one above may have a kept-alive socket)
  const dead = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  await assert.rejects(
    deleteTwilioRecording({ TWILIO_API_BASE_URL: `http://127.0.0.1:${dead}` }, fake.account, rec.sid),
    (err: Error & { cause?: { code?: string } }) => {
      assert.equal(err.name, 'TypeError');
      assert.equal(err.message, 'fetch failed');
      assert.equal(err.cause?.code, 'ECONNREFUSED');
      return true;
    },
  );
});
