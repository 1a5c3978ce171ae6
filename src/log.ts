import { type BaseLogger, type Bindings, type ChildLoggerOptions, type DestinationStream, pino } from 'pino';

/** Request serializer for the logger: never logs query strings (recording tokens) or headers. */
export function safeRequestSerializer(req: { method: string; url: string; ip?: string }) {
  return { method: req.method, url: req.url.split('?')[0], remoteAddress: req.ip };
}

/**
 * JSON logger. Nothing secret is ever logged: request logs carry method, path (no query string, so
 * no recording tokens) and address; headers (Authorization, cookies, signatures) are never logged.
 */
export function createLogger(level: string, destination?: DestinationStream) {
  const options = {
    level,
    serializers: {
      req: safeRequestSerializer,
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
    redact: {
      paths: [
        '*.authorization',
        '*.password',
        '*.secret',
        '*.key',
        '*.token',
        '*.owner_password',
        '*.auth_token',
        '*.authToken',
      ],
      censor: '[redacted]',
    },
  };
  // stdout by default; a test reads what is logged through its own stream
  return destination ? pino(options, destination) : pino(options);
}

/** What every role logs through (Deps.log): pino's methods, the shape Fastify takes as its loggerInstance. */
export interface Logger
  extends Pick<BaseLogger, 'level' | 'info' | 'error' | 'debug' | 'fatal' | 'warn' | 'trace' | 'silent'> {
  child(bindings: Bindings, options?: ChildLoggerOptions): Logger;
}
