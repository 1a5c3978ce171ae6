import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { type AddressInfo, createServer } from 'node:net';
import { Readable } from 'node:stream';
import { after, before, test } from 'node:test';
import { parseRetryAfter } from '../../../src/capture/providers/http.ts';
import {
  analysisProviderFromConfig,
  transcriptionProviderFromConfig,
} from '../../../src/capture/providers/index.ts';
import type { TranscriptionInput, TranscriptionProvider } from '../../../src/capture/providers/types.ts';
import { FakeClock } from '../../../src/clock.ts';
import { loadConfig } from '../../../src/config.ts';
import { startEndlessAnswer } from '../../helpers/endless-answer.ts';
import { type FakeProviders, startFakeProviders } from '../../helpers/fake-providers.ts';
import { monoMp3 } from '../../helpers/stereo-mp3.ts';

const clock = new FakeClock('2026-06-15T10:00:00.000Z');
const KEY = 'sk-live-very-secret-abcdef';
let fake: FakeProviders;
let mono: Buffer;

before(async () => {
  fake = await startFakeProviders();
  mono = monoMp3({ seconds: 1 });
});
after(() => fake.close());

const input = (): TranscriptionInput => ({
  openAudio: async () => Readable.from([mono]),
  byteLength: mono.length,
  contentType: 'audio/mpeg',
  channels: 1,
  direction: 'inbound',
});

/**
 * The providers' time-out where the fake answers: far above any answer's time on a loaded machine, so
 * only the time-out test (which sets its own 1000 ms, against a fake that never answers) can meet it.
 */
const ANSWERS_WITHIN = '60000';

const providers = (env: Record<string, string> = {}) => {
  const openai = transcriptionProviderFromConfig(
    loadConfig({
      TRANSCRIPTION_PROVIDER: 'openai',
      TRANSCRIPTION_BASE_URL: fake.openaiBaseUrl,
      TRANSCRIPTION_API_KEY: KEY,
      TRANSCRIPTION_TIMEOUT_MS: ANSWERS_WITHIN,
      ...env,
    }),
    clock,
  ) as TranscriptionProvider;
  const deepgram = transcriptionProviderFromConfig(
    loadConfig({
      TRANSCRIPTION_PROVIDER: 'deepgram',
      TRANSCRIPTION_BASE_URL: fake.deepgramBaseUrl,
      TRANSCRIPTION_API_KEY: KEY,
      TRANSCRIPTION_TIMEOUT_MS: ANSWERS_WITHIN,
      ...env,
    }),
    clock,
  ) as TranscriptionProvider;
  const analysis = analysisProviderFromConfig(
    loadConfig({
      ANALYSIS_PROVIDER: 'openai',
      ANALYSIS_BASE_URL: fake.openaiBaseUrl,
      ANALYSIS_API_KEY: KEY,
      ANALYSIS_TIMEOUT_MS: ANSWERS_WITHIN,
      ...env,
    }),
    clock,
  );
  return [
    { route: 'transcriptions' as const, name: 'openai', run: () => openai.transcribe(input()) },
    { route: 'listen' as const, name: 'deepgram', run: () => deepgram.transcribe(input()) },
    {
      route: 'chat' as const,
      name: 'openai',
      run: () =>
        analysis.analyze({
          transcript: 'Agent: Hello.\nCustomer: Hi.',
          direction: 'inbound',
          organization: { name: 'Acme', language: 'en' },
        }),
    },
  ];
};

test('a 429 is retryable and carries Retry-After in seconds', async () => {
  for (const p of providers()) {
    fake.script(p.route, {
      status: 429,
      headers: { 'retry-after': '7' },
      body: { error: { message: 'Rate limit reached' } },
    });
    await assert.rejects(p.run(), {
      name: 'ProviderError',
      kind: 'retryable',
      provider: p.name,
      status: 429,
      retryAfterMs: 7000,
      message: `${p.name} answered 429: Rate limit reached`,
    });
  }
});

test('a 503 is retryable and carries Retry-After given as an HTTP date, measured on the injected clock', async () => {
  for (const p of providers()) {
    fake.script(p.route, {
      status: 503,
      headers: { 'retry-after': 'Mon, 15 Jun 2026 10:01:30 GMT' },
      body: 'upstream overloaded',
    });
    await assert.rejects(p.run(), {
      kind: 'retryable',
      status: 503,
      retryAfterMs: 90_000,
      message: `${p.name} answered 503: upstream overloaded`,
    });
  }
});

test('a 500 without Retry-After is retryable with no retryAfterMs', async () => {
  for (const p of providers()) {
    fake.script(p.route, { status: 500, body: { error: { message: 'internal' } } });
    await assert.rejects(p.run(), (err: { kind: string; retryAfterMs: unknown; status: number }) => {
      assert.equal(err.kind, 'retryable');
      assert.equal(err.status, 500);
      assert.equal(err.retryAfterMs, undefined);
      return true;
    });
  }
});

test("any other 4xx is fatal and keeps the provider's message, with the key redacted", async () => {
  const bodies = {
    transcriptions: {
      error: { message: `Invalid file format. Key ${KEY} used.`, type: 'invalid_request_error' },
    },
    listen: { err_code: 'Bad Request', err_msg: `Bad Request: failed to process audio (key ${KEY})` },
    chat: { error: { message: `Invalid schema for response_format (key ${KEY})` } },
  };
  const expected = {
    transcriptions: 'openai answered 400: Invalid file format. Key [redacted] used.',
    listen: 'deepgram answered 400: Bad Request: failed to process audio (key [redacted])',
    chat: 'openai answered 400: Invalid schema for response_format (key [redacted])',
  };
  for (const p of providers()) {
    fake.script(p.route, { status: 400, body: bodies[p.route] });
    await assert.rejects(p.run(), { kind: 'fatal', status: 400, message: expected[p.route] });
  }
});

test('a 401 is fatal (a wrong key does not heal by retrying)', async () => {
  for (const p of providers()) {
    fake.script(p.route, { status: 401, body: { error: { message: 'Incorrect API key provided' } } });
    await assert.rejects(p.run(), {
      kind: 'fatal',
      status: 401,
      message: `${p.name} answered 401: Incorrect API key provided`,
    });
  }
});

test('a long provider message is trimmed to 500 characters', async () => {
  const [p] = providers();
  fake.script(p.route, { status: 422, body: `${'x'.repeat(2000)}` });
  await assert.rejects(p.run(), (err: Error) => {
    assert.equal(err.message.length, 'openai answered 422: '.length + 500);
    assert.ok(err.message.endsWith('…'));
    return true;
  });
});

test('a provider that does not answer in time is retryable, naming the time-out', async () => {
  for (const p of providers({ TRANSCRIPTION_TIMEOUT_MS: '1000', ANALYSIS_TIMEOUT_MS: '1000' })) {
    fake.script(p.route, { hang: true });
    await assert.rejects(p.run(), {
      kind: 'retryable',
      message: `${p.name} did not answer within 1000 ms`,
    });
  }
});

test('a request the caller cancels (its AbortSignal) is retryable and says so', async () => {
  fake.script('transcriptions', { hang: true });
  const openai = transcriptionProviderFromConfig(
    loadConfig({
      TRANSCRIPTION_PROVIDER: 'openai',
      TRANSCRIPTION_BASE_URL: fake.openaiBaseUrl,
      TRANSCRIPTION_TIMEOUT_MS: '60000',
    }),
    clock,
  ) as TranscriptionProvider;
  const controller = new AbortController();
  const pending = openai.transcribe({ ...input(), signal: controller.signal });
  setTimeout(() => controller.abort(), 200);
  await assert.rejects(pending, { kind: 'retryable', message: 'openai request was cancelled' });
});

test('a refused connection is retryable', async () => {
  // a port that was just free: nothing listens there
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
  const dead = `http://127.0.0.1:${port}`;
  const ps = providers({ TRANSCRIPTION_BASE_URL: `${dead}/v1`, ANALYSIS_BASE_URL: `${dead}/v1` });
  for (const p of ps) {
    await assert.rejects(p.run(), {
      kind: 'retryable',
      message: `${p.name} could not be reached (ECONNREFUSED)`,
    });
  }
});

test('a 200 whose body is not JSON is fatal', async () => {
  for (const p of providers()) {
    fake.script(p.route, { status: 200, body: '<html>gateway</html>' });
    await assert.rejects(p.run(), {
      kind: 'fatal',
      status: 200,
      message: `${p.name} answered 200 with a body that is not JSON`,
    });
  }
});

/**
 * What a client that stops at its limit may still have been sent when it closed the connection: the
 * server's socket send buffer and the client's receive buffer (Linux: at most tcp_wmem's 4 MiB and
 * tcp_rmem's 32 MiB by default) and one read in flight. A client that buffers the answer reads all of it.
 */
const SOCKET_SLACK = 48 * 1024 * 1024;
const MiB = 1024 * 1024;

test('a 200 answer longer than PROVIDER_MAX_ANSWER_BYTES is answer_too_large: the connection is closed at the limit, never read to its end', async () => {
  const offered = 256 * MiB;
  const srv = await startEndlessAnswer({ offerBytes: offered });
  try {
    const ps = providers({
      TRANSCRIPTION_BASE_URL: srv.url,
      ANALYSIS_BASE_URL: srv.url,
      TRANSCRIPTION_TIMEOUT_MS: '60000',
      ANALYSIS_TIMEOUT_MS: '60000',
      PROVIDER_MAX_ANSWER_BYTES: String(MiB),
    });
    for (const [i, p] of ps.entries()) {
      await assert.rejects(p.run(), {
        name: 'ProviderError',
        kind: 'answer_too_large',
        provider: p.name,
        status: 200,
        message: `${p.name} answered 200 with a body over 1048576 bytes, the most this service reads (PROVIDER_MAX_ANSWER_BYTES); the answer was dropped`,
      });
      const written = (await srv.closed(i + 1))[i];
      console.log(`${p.route}: ${written} bytes written of ${offered} offered when the client closed`);
      assert.ok(written <= MiB + SOCKET_SLACK, `${p.route}: ${written} bytes written`);
    }
    assert.deepEqual(
      srv.requests.map((r) => r.path.split('?')[0]),
      ['/audio/transcriptions', '/v1/listen', '/chat/completions'],
    );
  } finally {
    await srv.close();
  }
});

test('an error answer is read for its message only: a 503 that never ends is retryable, cut at 64 KiB', async () => {
  const srv = await startEndlessAnswer({
    status: 503,
    offerBytes: 256 * MiB,
    block: Buffer.alloc(64 * 1024, 'x'),
  });
  try {
    const ps = providers({
      TRANSCRIPTION_BASE_URL: srv.url,
      ANALYSIS_BASE_URL: srv.url,
      TRANSCRIPTION_TIMEOUT_MS: '60000',
      ANALYSIS_TIMEOUT_MS: '60000',
    });
    for (const [i, p] of ps.entries()) {
      await assert.rejects(p.run(), (err: { kind: string; status: number; message: string }) => {
        assert.equal(err.kind, 'retryable');
        assert.equal(err.status, 503);
        assert.equal(err.message, `${p.name} answered 503: {"text":"${'x'.repeat(490)}…`);
        return true;
      });
      const written = (await srv.closed(i + 1))[i];
      assert.ok(written <= 64 * 1024 + SOCKET_SLACK, `${p.route}: ${written} bytes written`);
    }
  } finally {
    await srv.close();
  }
});

test('a 200 whose Content-Length is over the limit is refused before its body is read', async () => {
  // headers promise 100 MiB, then the body stalls: only the header can end this request in time
  const srv = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(100 * MiB) });
      res.write('{"text":"');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  try {
    const [openai] = providers({
      TRANSCRIPTION_BASE_URL: url,
      TRANSCRIPTION_TIMEOUT_MS: '60000',
      PROVIDER_MAX_ANSWER_BYTES: String(MiB),
    });
    await assert.rejects(openai.run(), { kind: 'answer_too_large', status: 200 });
  } finally {
    srv.closeAllConnections();
    await new Promise<void>((r) => srv.close(() => r()));
  }
});

test('Retry-After: seconds, HTTP dates (past ones are 0), garbage and absence', () => {
  const now = new Date('2026-06-15T10:00:00.000Z');
  assert.equal(parseRetryAfter('0', now), 0);
  assert.equal(parseRetryAfter(' 120 ', now), 120_000);
  assert.equal(parseRetryAfter('Mon, 15 Jun 2026 10:00:05 GMT', now), 5000);
  assert.equal(parseRetryAfter('Mon, 15 Jun 2026 09:00:00 GMT', now), 0);
  assert.equal(parseRetryAfter('999999', now), 6 * 60 * 60 * 1000);
  assert.equal(parseRetryAfter('-1', now), undefined);
  assert.equal(parseRetryAfter('soon', now), undefined);
  assert.equal(parseRetryAfter('', now), undefined);
  assert.equal(parseRetryAfter(null, now), undefined);
});

test('settings: defaults, the factory, and invalid values that name the setting', () => {
  const d = loadConfig({});
  assert.equal(d.TRANSCRIPTION_PROVIDER, 'none');
  assert.equal(d.ANALYSIS_PROVIDER, 'rules');
  assert.equal(transcriptionProviderFromConfig(d), null);
  assert.equal(analysisProviderFromConfig(d).name, 'rules');
  const o = transcriptionProviderFromConfig(
    loadConfig({ TRANSCRIPTION_PROVIDER: 'openai', TRANSCRIPTION_API_KEY: 'k' }),
  );
  assert.equal(o?.name, 'openai');
  assert.equal(o?.maxUploadBytes, 26_214_400);
  const g = transcriptionProviderFromConfig(
    loadConfig({ TRANSCRIPTION_PROVIDER: 'deepgram', TRANSCRIPTION_API_KEY: 'k' }),
  );
  assert.equal(g?.name, 'deepgram');
  assert.equal(g?.maxUploadBytes, 2 * 1024 ** 3);
  const local = transcriptionProviderFromConfig(
    loadConfig({
      TRANSCRIPTION_PROVIDER: 'openai',
      TRANSCRIPTION_BASE_URL: 'http://127.0.0.1:8080/v1/',
      TRANSCRIPTION_MAX_UPLOAD_BYTES: '1000000000',
    }),
  );
  assert.equal(local?.maxUploadBytes, 1_000_000_000);

  assert.throws(() => loadConfig({ TRANSCRIPTION_PROVIDER: 'whisper' }), /TRANSCRIPTION_PROVIDER/);
  assert.throws(() => loadConfig({ ANALYSIS_PROVIDER: 'gpt' }), /ANALYSIS_PROVIDER/);
  assert.throws(() => loadConfig({ TRANSCRIPTION_BASE_URL: 'ftp://x.example' }), /TRANSCRIPTION_BASE_URL/);
  assert.throws(() => loadConfig({ ANALYSIS_BASE_URL: 'not a url' }), /ANALYSIS_BASE_URL/);
  assert.throws(() => loadConfig({ TRANSCRIPTION_TIMEOUT_MS: '10' }), /TRANSCRIPTION_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ ANALYSIS_TIMEOUT_MS: 'soon' }), /ANALYSIS_TIMEOUT_MS/);
  assert.throws(() => loadConfig({ TRANSCRIPTION_MAX_UPLOAD_BYTES: '5' }), /TRANSCRIPTION_MAX_UPLOAD_BYTES/);
  assert.equal(d.PROVIDER_MAX_ANSWER_BYTES, 32 * 1024 * 1024);
  assert.equal(loadConfig({ PROVIDER_MAX_ANSWER_BYTES: '1048576' }).PROVIDER_MAX_ANSWER_BYTES, 1048576);
  assert.throws(() => loadConfig({ PROVIDER_MAX_ANSWER_BYTES: '1000' }), /PROVIDER_MAX_ANSWER_BYTES/);
  assert.throws(
    () => loadConfig({ PROVIDER_MAX_ANSWER_BYTES: String(2 * 1024 ** 3) }),
    /PROVIDER_MAX_ANSWER_BYTES/,
  );
  assert.throws(() => loadConfig({ TRANSCRIPTION_PROVIDER: 'deepgram' }), /TRANSCRIPTION_API_KEY: required/);
  assert.throws(() => loadConfig({ ANALYSIS_PROVIDER: 'openai' }), /ANALYSIS_API_KEY: required/);
  // a key never appears in a configuration error
  assert.throws(
    () => loadConfig({ TRANSCRIPTION_PROVIDER: 'nope', TRANSCRIPTION_API_KEY: KEY }),
    (err: Error) => !err.message.includes(KEY),
  );
});
