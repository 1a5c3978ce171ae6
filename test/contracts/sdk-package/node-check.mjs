// @callcap/sdk installed from the tarball, on whichever Node runs this. Prints one JSON line.
import {
  BadRequestError,
  CallCaptureClient,
  MaintenanceError,
  NodeCryptoProvider,
  NotFoundError,
  SubtleCryptoProvider,
  verifyWebhook,
  WebhookSignatureMismatchError,
  WebhookVerifier,
} from '@callcap/sdk';
import { verifyWebhook as verifyFromSubpath } from '@callcap/sdk/webhooks';

const input = JSON.parse(process.env.SDK_CHECK_INPUT);
const out = { runtime: process.version };

// The verifier: the synchronous Node provider, and Web Crypto asynchronously.
out.verified = verifyWebhook(input.body, input.headers, input.secret).event_id;
out.verifiedSubpath = verifyFromSubpath(Buffer.from(input.body), input.headers, input.secret).event_type;
const sync = new WebhookVerifier({ secrets: ['', input.secret], crypto: new NodeCryptoProvider() });
out.verifiedSync = sync.verify(input.body, input.headers).event_id;
out.tamperedRejected = (() => {
  try {
    sync.verify(input.body.replace('"duration":', '"duration": '), input.headers);
    return false;
  } catch (e) {
    return e instanceof WebhookSignatureMismatchError;
  }
})();
const web = new WebhookVerifier({ secrets: input.secret, crypto: new SubtleCryptoProvider() });
out.verifiedAsync = (await web.verifyAsync(input.body, input.headers)).event_id;

// The client against the real service over a socket.
const client = new CallCaptureClient({ apiKey: input.apiKey, baseUrl: input.baseUrl });
out.me = (await client.getMe()).organization_id;
out.calls = [];
for await (const call of client.iterateCalls({ limit: 2 })) out.calls.push(call.call_id);
const missing = await client.getCall(input.missingId).catch((e) => e);
out.notFound =
  missing instanceof NotFoundError
    ? {
        status: missing.status,
        code: missing.code,
        retryable: missing.retryable,
        requestId: missing.requestId,
      }
    : String(missing);
const bad = await client.listCalls({ limit: 0 }).catch((e) => e);
out.badRequest =
  bad instanceof BadRequestError
    ? { status: bad.status, code: bad.code, param: bad.param ?? null }
    : String(bad);

// Retries against a flaky server: 503 + Retry-After, a reset connection, 429 + Retry-After.
const flaky = new CallCaptureClient({
  apiKey: 'ck_test',
  baseUrl: input.flakyUrl,
  maxRetries: 3,
  initialRetryDelayMs: 10,
});
out.flakyMe = (await flaky.getMe()).organization_id;
const down = new CallCaptureClient({
  apiKey: 'ck_test',
  baseUrl: input.downUrl,
  maxRetries: 1,
  initialRetryDelayMs: 10,
});
const maintenance = await down.getMe().catch((e) => e);
out.maintenance =
  maintenance instanceof MaintenanceError
    ? { retryable: maintenance.retryable, retryAfterSeconds: maintenance.retryAfterSeconds }
    : String(maintenance);
console.log(JSON.stringify(out));
