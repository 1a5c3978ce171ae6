/**
 * Service e-mail (auto-pause notices). An e-mail is first a row of email_outbox, written in the same
 * transaction as the change it reports (status 'queued'); after commit it is dispatched:
 * - SMTP_URL set: sent with nodemailer → 'sent', or 'failed' with the error;
 * - no SMTP_URL: kept in the table ('kept') and logged (recipient and subject only), so a local
 *   install still shows what would have been sent.
 * A dispatch first claims the row (attempted_at), so two workers never send one e-mail twice; a
 * send interrupted by a crash is picked up again by dispatchStale() after STALE_SEND_MS.
 */
import nodemailer from 'nodemailer';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Db, Queryable } from '../db/types.ts';
import type { Deps } from '../deps.ts';
import { newId } from '../ids.ts';

/** A claimed send not finished after this is presumed interrupted (longer than every SMTP time-out). */
export const STALE_SEND_MS = 5 * 60_000;
/** SMTP time-outs: an unreachable mail server must not hold a worker for minutes. */
const SMTP_TIMEOUTS = { connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 30_000 };

export interface OutgoingEmail {
  organizationId: string | null;
  to: string;
  subject: string;
  body: string;
  /** the call the e-mail quotes something of (a pause notice's last reply): erasing it redacts the quote */
  callId?: string | null;
}

/** Stores an e-mail as 'queued'; call inside the transaction that makes the change it reports. */
export async function queueEmail(tx: Queryable, mail: OutgoingEmail, now: Date): Promise<string> {
  const id = newId();
  await tx.query(
    `INSERT INTO email_outbox (id, organization_id, to_address, subject, body, status, created_at, call_id)
     VALUES ($1, $2, $3, $4, $5, 'queued', $6, $7)`,
    [id, mail.organizationId, mail.to, mail.subject, mail.body, now, mail.callId ?? null],
  );
  return id;
}

export type DispatchResult = 'sent' | 'kept' | 'failed' | 'not_queued';

export interface Mailer {
  /** Sends (or keeps) one queued e-mail; 'not_queued' when it was already handled or is being sent. */
  dispatch(id: string): Promise<DispatchResult>;
  /** Dispatches e-mails left 'queued' by an interrupted process; returns how many were handled. */
  dispatchStale(): Promise<number>;
  close(): Promise<void>;
}

/** Minimal transport shape (nodemailer's), injectable for tests. */
export interface MailTransport {
  sendMail(m: { from: string; to: string; subject: string; text: string }): Promise<unknown>;
  close(): void;
}

export function createMailer(
  deps: { db: Db; clock: Clock; config: Pick<Config, 'SMTP_URL' | 'MAIL_FROM'>; log: Deps['log'] },
  opts: { transport?: MailTransport } = {},
): Mailer {
  const transport: MailTransport | null =
    opts.transport ??
    (deps.config.SMTP_URL
      ? nodemailer.createTransport({ url: deps.config.SMTP_URL, ...SMTP_TIMEOUTS })
      : null);

  async function dispatch(id: string): Promise<DispatchResult> {
    const now = deps.clock.now();
    const claimed = await deps.db.query<{ to_address: string; subject: string; body: string }>(
      `UPDATE email_outbox SET attempted_at = $2
        WHERE id = $1 AND status = 'queued' AND (attempted_at IS NULL OR attempted_at < $3)
        RETURNING to_address, subject, body`,
      [id, now, new Date(now.getTime() - STALE_SEND_MS)],
    );
    if (claimed.rowCount === 0) return 'not_queued';
    const mail = claimed.rows[0];
    if (!transport) {
      await deps.db.query(`UPDATE email_outbox SET status = 'kept' WHERE id = $1`, [id]);
      deps.log.info(
        { emailId: id, to: mail.to_address, subject: mail.subject },
        'e-mail kept in email_outbox (no SMTP_URL)',
      );
      return 'kept';
    }
    try {
      await transport.sendMail({
        from: deps.config.MAIL_FROM,
        to: mail.to_address,
        subject: mail.subject,
        text: mail.body,
      });
      await deps.db.query(
        `UPDATE email_outbox SET status = 'sent', sent_at = $2, last_error = NULL WHERE id = $1`,
        [id, deps.clock.now()],
      );
      return 'sent';
    } catch (err) {
      const message = (err instanceof Error ? err.message : String(err)).slice(0, 500);
      await deps.db.query(`UPDATE email_outbox SET status = 'failed', last_error = $2 WHERE id = $1`, [
        id,
        message,
      ]);
      deps.log.warn({ emailId: id, err: message }, 'e-mail could not be sent');
      return 'failed';
    }
  }

  return {
    dispatch,
    async dispatchStale() {
      const cutoff = new Date(deps.clock.now().getTime() - STALE_SEND_MS);
      const { rows } = await deps.db.query<{ id: string }>(
        `SELECT id FROM email_outbox
          WHERE status = 'queued' AND created_at < $1 AND (attempted_at IS NULL OR attempted_at < $1)
          ORDER BY created_at LIMIT 100`,
        [cutoff],
      );
      let handled = 0;
      for (const r of rows) if ((await dispatch(r.id)) !== 'not_queued') handled++;
      return handled;
    },
    async close() {
      transport?.close();
    },
  };
}
