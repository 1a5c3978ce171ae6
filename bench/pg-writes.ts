/**
 * The service's writes to PostgreSQL over bench:capture's timed window, per call: a deterministic
 * figure beside the timings (each write is one send syscall; almost all are one round trip each).
 * Loaded into the service process through BENCH_NODE_FLAGS:
 *
 *   BENCH_NODE_FLAGS=--import=./bench/pg-writes.ts npm run bench:capture
 *
 * It counts each socket flush (net.Socket's _write or _writev: pg corks the socket around an
 * extended-protocol query, so its messages leave in one) to the port of BENCH_DATABASE_URL (5432
 * by default), from the driver's 'start' command to the service's answer to 'wait', less the
 * bench's own completion polls (their SQL is recognised), and prints the figure on stderr.
 */
import net from 'node:net';

const port = Number(new URL(process.env.BENCH_DATABASE_URL ?? 'postgres://127.0.0.1:5432/').port || 5432);
const calls = Number(process.env.BENCH_CALLS) || 200;
/** the completion polls of capture-service.ts (UNTIL): not the service's */
const POLLS = [
  Buffer.from('count(*)::int AS n FROM events e JOIN calls c'),
  Buffer.from('count(*)::int AS n FROM calls WHERE organization_id = $1 AND recording_state'),
];
let writes = 0;
let polls = 0;
const isPoll = (chunks: Buffer[]) => chunks.some((c) => POLLS.some((p) => c.includes(p)));

const proto = net.Socket.prototype as unknown as {
  _write(chunk: Buffer, encoding: string, cb: () => void): void;
  _writev(chunks: Array<{ chunk: Buffer }>, cb: () => void): void;
};
const { _write, _writev } = proto;
proto._write = function (this: net.Socket, chunk, encoding, cb) {
  if (this.remotePort === port) {
    writes++;
    if (Buffer.isBuffer(chunk) && isPoll([chunk])) polls++;
  }
  return _write.call(this, chunk, encoding, cb);
};
proto._writev = function (this: net.Socket, chunks, cb) {
  if (this.remotePort === port) {
    writes++;
    if (isPoll(chunks.map((c) => c.chunk).filter((c) => Buffer.isBuffer(c)))) polls++;
  }
  return _writev.call(this, chunks, cb);
};

let start: { writes: number; polls: number } | undefined;
process.on('message', (m: { cmd?: string }) => {
  if (m?.cmd === 'start') start = { writes, polls };
});
const send = process.send?.bind(process) as ((m: unknown, ...rest: unknown[]) => boolean) | undefined;
if (send) {
  process.send = ((m: { reply?: string }, ...rest: unknown[]) => {
    if (m?.reply === 'wait' && start) {
      const w = writes - start.writes;
      const p = polls - start.polls;
      process.stderr.write(
        `[pg-writes] window: ${w} writes to PostgreSQL, ${p} of them the bench's completion polls; ` +
          `the service's: ${w - p} = ${((w - p) / calls).toFixed(2)} per call (${calls} calls)\n`,
      );
      start = undefined;
    }
    return send(m, ...rest);
  }) as typeof process.send;
}
process.on('exit', () => {
  if (!send) process.stderr.write(`[pg-writes] ${writes} writes to PostgreSQL\n`);
});
