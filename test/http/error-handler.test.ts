import assert from 'node:assert/strict';
import { maxHeaderSize } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { createHarness, type Harness } from '../helpers/harness.ts';
import { adminHeaders, errorBody, errorJson } from '../helpers/http.ts';

/**
 * Answers produced before routing or while reading the body: every one in the spec's error shape,
 * on both listeners (issue 11, item 2).
 */
let h: Harness;
before(async () => {
  h = await createHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  await h.operator.listen({ port: 0, host: '127.0.0.1' });
});
after(async () => {
  await h.close();
});

interface RawAnswer {
  status: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends `request` as raw bytes and reads the answer until the server closes the connection. */
function raw(app: FastifyInstance, request: string | Buffer): Promise<RawAnswer> {
  const { port } = app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('the server did not close the connection within 5 s'));
    }, 5000);
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {});
    socket.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = text.split('\r\n\r\n');
      const [status, ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status, headers, body: rest.join('\r\n\r\n') });
    });
  });
}

const expectRaw = (res: RawAnswer, status: string, message: string) => {
  // No request could be read: the answer carries a fresh request id, in the header and the body.
  const requestId = res.headers['x-request-id'];
  assert.match(requestId ?? '', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const expected = errorBody('BAD_REQUEST', message);
  const body = JSON.stringify({ ...expected, meta: { ...expected.meta, request_id: requestId } });
  assert.deepEqual(res, {
    status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(body)),
      'x-request-id': requestId,
      'cache-control': 'no-store',
      connection: 'close',
    },
    body,
  });
};

const HEADER_MESSAGE = `The request headers are too large: at most ${maxHeaderSize} bytes in total are accepted.`;

for (const listener of ['public', 'operator'] as const) {
  const appOf = () => (listener === 'public' ? h.app : h.operator);
  const path = listener === 'public' ? '/api/v1/me' : '/admin/v1/organizations';

  test(`${listener}: headers over the size limit answer 431 in the error shape (Node's parser)`, async () => {
    const res = await raw(appOf(), `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectRaw(res, 'HTTP/1.1 431 Request Header Fields Too Large', HEADER_MESSAGE);
  });

  test(`${listener}: a request line with a control byte answers 400 in the error shape (Node's parser)`, async () => {
    const res = await raw(appOf(), `GET ${path}\x01 HTTP/1.1\r\nHost: x\r\n\r\n`);
    expectRaw(
      res,
      'HTTP/1.1 400 Bad Request',
      'The request is not valid HTTP/1.1 (HPE_INVALID_URL): check the request line and the headers.',
    );
  });

  test(`${listener}: a header with a byte not allowed in it answers 400 in the error shape`, async () => {
    const res = await raw(appOf(), `GET ${path} HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n`);
    expectRaw(
      res,
      'HTTP/1.1 400 Bad Request',
      'The request is not valid HTTP/1.1 (HPE_INVALID_HEADER_TOKEN): check the request line and the headers.',
    );
  });
}

/** Console login and an operator JSON route: where a body is read. */
const bodyRoutes = [
  { listener: 'public', url: '/app/api/login', headers: {} },
  { listener: 'operator', url: '/admin/v1/organizations', headers: adminHeaders },
] as const;

for (const r of bodyRoutes) {
  const appOf = () => (r.listener === 'public' ? h.app : h.operator);

  test(`${r.listener}: POST ${r.url} with an unsupported Content-Type answers 415 UNSUPPORTED_MEDIA_TYPE`, async () => {
    const res = await appOf().inject({
      method: 'POST',
      url: r.url,
      headers: { ...r.headers, 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    assert.equal(res.statusCode, 415);
    assert.deepEqual(
      errorJson(res),
      errorBody(
        'UNSUPPORTED_MEDIA_TYPE',
        'Unsupported Content-Type "application/xml"; send the body as JSON with Content-Type: application/json.',
      ),
    );
  });

  test(`${r.listener}: POST ${r.url} with malformed JSON answers 400 BAD_REQUEST in the error shape`, async () => {
    for (const payload of ['{bad', '{"a":1', 'nul']) {
      const res = await appOf().inject({
        method: 'POST',
        url: r.url,
        headers: { ...r.headers, 'content-type': 'application/json' },
        payload,
      });
      assert.equal(res.statusCode, 400, payload);
      assert.deepEqual(
        errorJson(res),
        errorBody(
          'BAD_REQUEST',
          'The request body is not valid JSON; send a JSON object with Content-Type: application/json.',
        ),
      );
    }
  });
}

test('public: a body over 1 MiB answers 413 PAYLOAD_TOO_LARGE naming the limit', async () => {
  const res = await h.app.inject({
    method: 'POST',
    url: '/app/api/login',
    headers: { 'content-type': 'application/json' },
    payload: `{"email":"${'a'.repeat(1024 * 1024)}"}`,
  });
  assert.equal(res.statusCode, 413);
  assert.deepEqual(
    errorJson(res),
    errorBody(
      'PAYLOAD_TOO_LARGE',
      'The request body is too large: this operation accepts at most 1048576 bytes.',
    ),
  );
});

test('public: a malformed percent-encoding in the path answers 400 BAD_REQUEST in the error shape', async () => {
  const res = await h.app.inject({ method: 'GET', url: '/app/api/%zz' });
  assert.equal(res.statusCode, 400);
  assert.deepEqual(
    errorJson(res),
    errorBody('BAD_REQUEST', 'The request URL is malformed (FST_ERR_BAD_URL): check its percent-encoding.'),
  );
});
