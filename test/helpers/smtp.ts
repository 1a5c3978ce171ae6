import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** One e-mail as the SMTP server received it; `text` is the raw message with quoted-printable undone. */
export interface CapturedMail {
  from: string;
  to: string[];
  raw: string;
  text: string;
}

/** A local SMTP server that keeps every e-mail it is given: `SMTP_URL: smtp.url`; close() in `after`. */
export interface SmtpCapture {
  url: string;
  inbox: CapturedMail[];
  close(): Promise<void>;
}

/** Quoted-printable soft breaks and escapes removed, so assertions read the text as written. */
const unQuote = (raw: string) =>
  raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, h) => String.fromCharCode(Number.parseInt(h, 16)));

export async function startSmtpCapture(): Promise<SmtpCapture> {
  const inbox: CapturedMail[] = [];
  const smtp = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        inbox.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          text: unQuote(raw),
        });
        callback();
      });
    },
  });
  await new Promise<void>((r) => smtp.listen(0, '127.0.0.1', () => r()));
  const { port } = smtp.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    inbox,
    close: () => new Promise<void>((r) => smtp.close(() => r())),
  };
}
