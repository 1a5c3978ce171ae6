/**
 * The outside world of bench/http-cpu.ts, in its own process so that its CPU is not the measured
 * thread's: the fake Twilio of the tests serving the bench's recording (5 s, stereo) and an
 * openai-compatible /audio/transcriptions answering at once after reading the upload. Sends
 * { twilio, account, recordingUrl, stt } over IPC, then runs until its parent disconnects.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startFakeTwilio } from '../test/helpers/fake-twilio.ts';
import { INBOUND_TONES, stereoMp3 } from '../test/helpers/stereo-mp3.ts';

const fake = await startFakeTwilio({ publicBaseUrl: 'https://calls.example.test' });
const rec = fake.addRecording({ callSid: 'CA0', audio: stereoMp3({ seconds: 5, ...INBOUND_TONES }) });
const answer = JSON.stringify({
  text: 'Hello, I need a plumber tomorrow morning.',
  language: 'english',
  duration: 3,
  segments: [{ id: 0, start: 0, end: 2.5, text: ' Hello, I need a plumber tomorrow morning.' }],
});
const stt = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
});
await new Promise<void>((r) => stt.listen(0, '127.0.0.1', r));
process.send?.({
  twilio: fake.url,
  account: fake.account,
  recordingUrl: rec.url,
  stt: `http://127.0.0.1:${(stt.address() as AddressInfo).port}`,
});
process.on('disconnect', () => process.exit(0));
