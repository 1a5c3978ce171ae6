/**
 * Errors thrown by the webhook verifier. Every verification failure is a `WebhookVerificationError`
 * (answer it with 400); a `WebhookConfigurationError` means the receiver itself is misconfigured.
 * Each message says what to check, like stripe-node's "Are you passing the raw request body…".
 */

export type WebhookVerificationErrorCode =
  | 'signature_missing'
  | 'signature_malformed'
  | 'signature_mismatch'
  | 'timestamp_out_of_tolerance'
  | 'payload_invalid';

/** Base class: the request must not be trusted. */
export class WebhookVerificationError extends Error {
  readonly code: WebhookVerificationErrorCode;

  constructor(code: WebhookVerificationErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** No `service-signature` header on the request. */
export class WebhookSignatureMissingError extends WebhookVerificationError {
  constructor() {
    super(
      'signature_missing',
      'No service-signature header on this request. Every Call Capture event is signed; only the ' +
        'verification handshake is unsigned (answer it with answerHandshake()). If a proxy sits in front ' +
        'of your receiver, make sure it forwards the service-signature header.',
    );
  }
}

/** The header is present but not of the form `t=<unix seconds>,v1=<64 hex>`. */
export class WebhookSignatureMalformedError extends WebhookVerificationError {
  readonly header: string;

  constructor(header: string, detail: string) {
    super(
      'signature_malformed',
      `The service-signature header is malformed (${detail}). Expected "t=<unix seconds>,v1=<64 lowercase ` +
        'hex characters>". Pass the header value exactly as received.',
    );
    this.header = header;
  }
}

/** No v1 signature matches any accepted secret. */
export class WebhookSignatureMismatchError extends WebhookVerificationError {
  constructor(secretCount: number) {
    super(
      'signature_mismatch',
      `No signature in the service-signature header matches the ${secretCount} accepted secret(s). ` +
        'Are you passing the raw request body you received, byte for byte, before any JSON parsing or ' +
        're-serialisation? Is the signing secret the one shown when the subscription was created (or the ' +
        'new one after a rotation)? During a rotation pass both secrets.',
    );
  }
}

/** The signature is genuine but its timestamp is outside the tolerance window. */
export class WebhookTimestampError extends WebhookVerificationError {
  readonly timestamp: number;
  readonly nowSeconds: number;

  constructor(timestamp: number, nowSeconds: number, toleranceSeconds: number, future: boolean) {
    const skew = Math.abs(nowSeconds - timestamp);
    super(
      'timestamp_out_of_tolerance',
      future
        ? `The signature timestamp ${timestamp} is ${skew} s ahead of this server's clock (at most ` +
            `${toleranceSeconds} s accepted). Check that this server's clock is synchronised (NTP).`
        : `The signature timestamp ${timestamp} is ${skew} s old (at most ${toleranceSeconds} s accepted). ` +
            'This looks like a replayed request, or this server clock is wrong (check NTP). Do not queue ' +
            'raw requests and verify them later: verify on receipt, then queue the parsed event.',
    );
    this.timestamp = timestamp;
    this.nowSeconds = nowSeconds;
  }
}

/** The signed body is not a valid event envelope, or the delivery headers contradict it. */
export class WebhookPayloadError extends WebhookVerificationError {
  constructor(message: string, options?: ErrorOptions) {
    super('payload_invalid', message, options);
  }
}

/** The receiver is misconfigured (for example no non-empty secret); not the sender's fault. */
export class WebhookConfigurationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WebhookConfigurationError';
  }
}
