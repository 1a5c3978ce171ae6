import type { CliIo } from './command.ts';

/**
 * Progress of `callcap export` on stderr. The REST API gives no total, so progress is the share of
 * the date range already walked: the export goes newest first, from the end of the range towards
 * its start, and created_at of the last call written tells how far it got. Without a start of the
 * range there is no share and no ETA, only the count and the rate. On a terminal one bar is redrawn
 * in place (at most 10 times a second); otherwise a plain line is written at most once a second.
 */

export interface ProgressState {
  calls: number;
  /** share of the range done, 0..1, or null when unknown */
  fraction: number | null;
  /** calls per second in this run */
  rate: number;
  /** seconds left, or null when unknown */
  etaSeconds: number | null;
}

const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

export function formatDuration(s: number): string {
  const t = Math.max(0, Math.round(s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = t % 60;
  return h > 0
    ? `${h}:${String(m).padStart(2, '0')}:${String(sec).padStart(2, '0')}`
    : `${m}:${String(sec).padStart(2, '0')}`;
}

/** The bar drawn on a terminal, fitted to `columns`. */
export function renderBar(p: ProgressState, columns = 80): string {
  const pct = p.fraction === null ? '' : `${String(Math.floor(p.fraction * 100)).padStart(3)}%`;
  const tail = [
    pct,
    `${fmtInt(p.calls)} calls`,
    `${fmtInt(p.rate)}/s`,
    p.etaSeconds === null ? '' : `ETA ${formatDuration(p.etaSeconds)}`,
  ]
    .filter(Boolean)
    .join('  ');
  if (p.fraction === null) return `export  ${tail}`;
  const width = Math.max(10, Math.min(40, columns - tail.length - 4));
  const full = Math.round(p.fraction * width);
  return `[${'█'.repeat(full)}${'░'.repeat(width - full)}]  ${tail}`;
}

/** The line written when stderr is not a terminal. */
export function renderLine(p: ProgressState): string {
  const parts = [`export: ${fmtInt(p.calls)} calls`];
  if (p.fraction !== null) parts.push(`${Math.floor(p.fraction * 100)}% of the date range`);
  parts.push(`${fmtInt(p.rate)} calls/s`);
  if (p.etaSeconds !== null) parts.push(`ETA ${formatDuration(p.etaSeconds)}`);
  return parts.join(', ');
}

export class Progress {
  readonly #io: CliIo;
  readonly #tty: boolean;
  readonly #range: { fromMs: number | null; toMs: number };
  readonly #started = Date.now();
  #startCalls = 0;
  #startFraction: number | null = null;
  #last = 0;
  #drawn = false;
  #state: ProgressState = { calls: 0, fraction: null, rate: 0, etaSeconds: null };

  constructor(io: CliIo, range: { fromMs: number | null; toMs: number }) {
    this.#io = io;
    this.#tty = io.stderrIsTty === true;
    this.#range = range;
  }

  /** Where this run starts (a resumed export starts part-way). */
  start(calls: number, cursorMs: number | null): void {
    this.#startCalls = calls;
    this.#startFraction = this.#fraction(cursorMs) ?? (this.#range.fromMs === null ? null : 0);
    this.#state = { calls, fraction: this.#startFraction, rate: 0, etaSeconds: null };
  }

  #fraction(cursorMs: number | null): number | null {
    const { fromMs, toMs } = this.#range;
    if (fromMs === null || cursorMs === null) return null;
    if (toMs <= fromMs) return 1;
    return Math.min(1, Math.max(0, (toMs - cursorMs) / (toMs - fromMs)));
  }

  update(calls: number, cursorMs: number | null, done = false): void {
    const elapsed = Math.max(0.001, (Date.now() - this.#started) / 1000);
    const fraction =
      done && this.#range.fromMs !== null ? 1 : (this.#fraction(cursorMs) ?? this.#state.fraction);
    let eta: number | null = null;
    if (fraction !== null && this.#startFraction !== null && fraction > this.#startFraction) {
      eta = done ? 0 : ((1 - fraction) * elapsed) / (fraction - this.#startFraction);
    }
    this.#state = { calls, fraction, rate: (calls - this.#startCalls) / elapsed, etaSeconds: eta };
    const now = Date.now();
    if (!done && now - this.#last < (this.#tty ? 100 : 1000)) return;
    this.#last = now;
    this.#draw();
  }

  #draw(): void {
    if (this.#tty) {
      this.#io.stderr(`\r\x1b[K${renderBar(this.#state, this.#io.columns)}`);
      this.#drawn = true;
    } else {
      this.#io.stderr(`${renderLine(this.#state)}\n`);
    }
  }

  /** A message on its own line (the bar is redrawn under it). */
  note(message: string): void {
    if (this.#tty && this.#drawn) this.#io.stderr('\r\x1b[K');
    this.#io.stderr(`export: ${message}\n`);
    if (this.#tty && this.#drawn) this.#draw();
  }

  /** Leaves the terminal on a fresh line. */
  end(): void {
    if (this.#tty && this.#drawn) this.#io.stderr('\n');
    this.#drawn = false;
  }
}
