// Runs under block-node-builtins.mjs: @callcap/sdk/web with Web Crypto only. Prints one JSON line.
import {
  CallCaptureClient,
  CryptoProviderOnlySupportsAsyncError,
  handleWebhook,
  MemoryEventIdStore,
  NotFoundError,
  SubtleCryptoProvider,
  signPayloadAsync,
  verifyWebhookAsync,
  WebhookSignatureMismatchError,
  WebhookVerifier,
} from '@callcap/sdk/web';

const input = JSON.parse(process.env.SDK_CHECK_INPUT);
const out = { runtime: process.version };

const verifier = new WebhookVerifier({ secrets: input.secret, crypto: new SubtleCryptoProvider() });
out.verified = (await verifier.verifyAsync(input.body, input.headers)).event_id;
out.verifiedFn = (
  await verifyWebhookAsync(new TextEncoder().encode(input.body), input.headers, input.secret)
).event_type;
out.tamperedRejected = await verifier
  .verifyAsync(input.body.replace('"duration":', '"duration": '), input.headers)
  .then(
    () => false,
    (e) => e instanceof WebhookSignatureMismatchError,
  );
try {
  verifier.verify(input.body, input.headers);
  out.syncRefused = false;
} catch (e) {
  out.syncRefused = e instanceof CryptoProviderOnlySupportsAsyncError;
}
out.signatureEqual =
  (await signPayloadAsync(input.body, input.secret, input.timestamp)) === input.headers['service-signature'];
const handled = await handleWebhook({
  rawBody: input.body,
  headers: input.headers,
  secrets: input.secret,
  store: new MemoryEventIdStore(),
  onEvent: () => {},
});
out.handled = handled.outcome;
// The Node entry point must NOT load here: proves the hook really blocks node:crypto.
out.nodeEntry = await import('@callcap/sdk').then(
  () => 'loaded',
  (e) => e.code ?? e.message,
);

const client = new CallCaptureClient({ apiKey: input.apiKey, baseUrl: input.baseUrl });
out.me = (await client.getMe()).organization_id;
const missing = await client.getCall(input.missingId).catch((e) => e);
out.notFound = missing instanceof NotFoundError ? [missing.status, missing.code] : String(missing);
console.log(JSON.stringify(out));
