/**
 * node bench/http-cpu.ts [base-tree] — the main thread's CPU per recording download and per
 * transcription (the split handed to its thread, the speech-to-text uploads and answers), in one
 * process, for this tree and a base tree (an unpacked checkout of another commit with node_modules,
 * e.g. `git archive <commit> | tar -x -C /tmp/base`), alternating base, this, ROUNDS times.
 *
 * The outside world (the fake Twilio serving the bench's 5-second stereo recording, an instant
 * openai-compatible speech-to-text server) runs in a child process (./http-cpu-servers.ts), so the
 * measured thread's CPU is the client's alone. CPU is the main thread's own run time from
 * /proc/self/task/<pid>/schedstat (nanoseconds; the split's worker thread is not in it), and the
 * event loop's utilisation over the same span. Each download is the download stage's path without
 * PostgreSQL: fetchRecordingMp3 → BlobStore.put(cappedChunks(…, Mp3Sniffer)) → measureMp3; each
 * transcription is openAiTranscription().transcribe of the stored file (as the transcribe stage
 * opens it); and Twilio's recording DELETE (a 404). N (default 200) of each per round, one at a time,
 * after WARM (default 50) unmeasured.
 */
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';

const N = Number(process.env.N) || 200;
const WARM = Number(process.env.WARM) || 50;
const ROUNDS = Number(process.env.ROUNDS) || 3;
const here = resolve(import.meta.dirname, '..');
const baseTree = process.argv[2] ? resolve(process.argv[2]) : null;

const mainThreadNs = (): number =>
  Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]);

interface Servers {
  twilio: string;
  account: { accountSid: string; authToken: string };
  recordingUrl: string;
  stt: string;
}
const child = fork(new URL('./http-cpu-servers.ts', import.meta.url), { stdio: 'inherit' });
const servers = await new Promise<Servers>((r) => child.once('message', (m) => r(m as Servers)));

interface Tree {
  label: string;
  download(i: number): Promise<string>;
  transcribe(key: string): Promise<void>;
  /** Twilio's recording DELETE (a sid the fake does not hold: 404, not_found) */
  remove(): Promise<void>;
}

async function load(label: string, tree: string): Promise<Tree> {
  const m = (p: string) => import(pathToFileURL(join(tree, p)).href);
  const rest = await m('src/capture/telephony/twilio/rest.ts');
  const { fileBlobStore } = await m('src/recordings/store.ts');
  const measure = await m('src/recordings/measure.ts');
  const { openAiTranscription } = await m('src/capture/providers/openai-transcription.ts');
  const root = mkdtempSync(join(tmpdir(), 'callcap-httpcpu-'));
  process.on('exit', () => rmSync(root, { recursive: true, force: true }));
  const store = fileBlobStore(root);
  const config = { TWILIO_API_BASE_URL: servers.twilio };
  const clock = { now: () => new Date() };
  const stt = openAiTranscription({ baseUrl: servers.stt, apiKey: 'sk-bench', timeoutMs: 30_000, clock });
  return {
    label,
    async download(i) {
      const key = `recordings/org/call-${i}/${i}.mp3`;
      const media = await rest.fetchRecordingMp3(config, servers.account, servers.recordingUrl);
      const sniffer = new measure.Mp3Sniffer();
      try {
        const { bytes } = await store.put(
          key,
          measure.cappedChunks(media.body, measure.MAX_RECORDING_BYTES, sniffer),
        );
        const d = await measure.measureMp3(store, key, bytes, sniffer);
        if (!(d > 4)) throw new Error(`duration ${d}`);
      } finally {
        media.close();
      }
      return key;
    },
    async remove() {
      const r = await rest.deleteTwilioRecording(config, servers.account, `RE${'f'.repeat(32)}`);
      if (r !== 'not_found') throw new Error(r);
    },
    async transcribe(key) {
      const r = await stt.transcribe({
        openAudio: async () => store.read(key),
        byteLength: 40_000,
        contentType: 'audio/mpeg',
        channels: 2,
        direction: 'inbound',
      });
      if (r.segments.length !== 2) throw new Error(`segments ${r.segments.length}`);
    },
  };
}

const trees = [...(baseTree ? [await load('base', baseTree)] : []), await load('this', here)];
let seq = 0;

async function measure(
  t: Tree,
): Promise<{ download: number; transcribe: number; remove: number; elu: [number, number] }> {
  const keys: string[] = [];
  for (let i = 0; i < WARM; i++) await t.transcribe(await t.download(seq++));
  let ns = mainThreadNs();
  let elu = performance.eventLoopUtilization();
  for (let i = 0; i < N; i++) keys.push(await t.download(seq++));
  const download = (mainThreadNs() - ns) / N / 1e6;
  const eluDownload = performance.eventLoopUtilization(elu).utilization;
  ns = mainThreadNs();
  elu = performance.eventLoopUtilization();
  for (const k of keys) await t.transcribe(k);
  const transcribe = (mainThreadNs() - ns) / N / 1e6;
  const eluTranscribe = performance.eventLoopUtilization(elu).utilization;
  for (let i = 0; i < WARM; i++) await t.remove();
  ns = mainThreadNs();
  for (let i = 0; i < N; i++) await t.remove();
  const remove = (mainThreadNs() - ns) / N / 1e6;
  return { download, transcribe, remove, elu: [eluDownload, eluTranscribe] };
}

const log = (s: string) => process.stdout.write(`${s}\n`);
log(`main thread CPU per operation, ms (N=${N} each, ${WARM} warm-up, one at a time)`);
log(
  '| round | tree | download | transcribe (split + 2 uploads) | Twilio DELETE | ELU download / transcribe |',
);
log('| ---: | --- | ---: | ---: | ---: | --- |');
for (let r = 1; r <= ROUNDS; r++) {
  for (const t of trees) {
    const x = await measure(t);
    log(
      `| ${r} | ${t.label} | ${x.download.toFixed(3)} | ${x.transcribe.toFixed(3)} | ${x.remove.toFixed(3)} | ${x.elu[0].toFixed(2)} / ${x.elu[1].toFixed(2)} |`,
    );
  }
}
child.disconnect();
process.exit(0);
