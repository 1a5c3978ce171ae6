import { endianness } from 'node:os';
import fvad from '@echogarden/fvad-wasm';

/**
 * Voice activity detection for the speech-to-text upload gate (docs/capture.md "Voice activity:
 * which windows are uploaded", docs/decisions.md): whether a channel's window holds speech, so
 * hum, line hiss, clicks and key tones are not uploaded (speech-to-text models invent words in them)
 * and quiet speech is.
 *
 * Two stages, frame by frame (30 ms):
 * 1. WebRTC's voice activity detector (libfvad compiled to WebAssembly, @echogarden/fvad-wasm) in
 *    its most aggressive mode (VAD_MODE 3): a Gaussian mixture over six sub-band energies with a
 *    noise model that adapts to the line. It runs at 8, 16, 32 or 48 kHz; any other rate (11.025,
 *    12 kHz MP3s) is brought down to 8 kHz first (area averaging, as wav.ts resamples).
 * 2. What WebRTC's detector lets through that is not speech, rejected by two checks of our own:
 *    - key tones: a voiced frame whose energy is mostly one DTMF row tone plus one column tone
 *      (Goertzel at the eight DTMF frequencies, DTMF_SHARE) is not voice;
 *    - steadiness: speech rises and falls with its syllables, a hum or a hiss does not. A run of
 *      voiced frames counts only when it lasts MIN_RUN_MS or more (a click and the detector's own
 *      hangover make 60-90 ms) and its frame energies (after pre-emphasis, so a hum under the
 *      speech weighs little), with the frame on each side of the run, swing by MIN_SWING_DB or more
 *      between their 10th and 90th percentile, and at least MIN_LOUD_FRAMES of them are within
 *      LOUD_DB of the loudest (a syllable holds its level, a click does not) — per SEGMENT_FRAMES
 *      block of a long run, so one click in an hour of hum does not carry the hum. A run's short
 *      last block is judged with the block before it, and a run goes on across a window's edge:
 *      a steady noise that stops dead does not swing into the silence after it.
 * A window is speech when MIN_SPEECH_MS of its frames are in counted runs. Deterministic: the same
 * samples give the same answer (test/capture/providers/vad.test.ts holds it to the labelled set in
 * test/fixtures/vad/).
 */

/** WebRTC VAD aggressiveness, 0 (quality) .. 3 (very aggressive): 3 lets the least noise through. */
export const VAD_MODE = 3;
/** Frame length: 10, 20 or 30 ms are what WebRTC's detector takes; 30 ms is the fewest calls. */
export const FRAME_MS = 30;
/** The shortest run of voiced frames that counts: a click plus the detector's hangover is shorter. */
export const MIN_RUN_MS = 120;
/** A counted run's frame energies must swing this much (10th to 90th percentile): speech is not steady. */
export const MIN_SWING_DB = 6;
/** A counted block needs this many frames within LOUD_DB of its loudest: a click has one or two. */
const MIN_LOUD_FRAMES = 3;
const LOUD_DB = 10;
/** Long runs are judged in blocks of this many frames (about 1 s). */
const SEGMENT_FRAMES = 33;
/** Speech in counted runs a window needs to be uploaded: a short "yes" is 300-400 ms. */
export const MIN_SPEECH_MS = 240;
/** A frame is a key tone when one row and one column DTMF tone hold this share of its energy. */
const DTMF_SHARE = 0.7;
const DTMF_ROWS = [697, 770, 852, 941];
const DTMF_COLUMNS = [1209, 1336, 1477, 1633];
/** The energy, in dB of full scale, of a frame of digital silence (log of 0 is not a number). */
const FLOOR_DB = -120;

const FVAD_RATES = new Set([8000, 16000, 32000, 48000]);

interface FvadModule {
  _fvad_new(): number;
  _fvad_free(h: number): void;
  _fvad_set_mode(h: number, mode: number): number;
  _fvad_set_sample_rate(h: number, rate: number): number;
  _fvad_process(h: number, frame: number, length: number): number;
  _malloc(n: number): number;
  _free(p: number): void;
  HEAP16: Int16Array;
}

const LITTLE_ENDIAN = endianness() === 'LE';

/** The module's memory as a Buffer (byte copies into it), made anew when a memory growth replaced it. */
let heapView: Buffer = Buffer.alloc(0);
function heapBytes(m: FvadModule): Buffer {
  const memory = m.HEAP16.buffer;
  if (heapView.buffer !== memory) heapView = Buffer.from(memory);
  return heapView;
}

let loading: Promise<FvadModule> | null = null;
/** One WebAssembly instance per process; each detector is a small libfvad state inside it. */
function fvadModule(): Promise<FvadModule> {
  loading ??= fvad() as Promise<FvadModule>;
  return loading;
}

/** A streaming voice activity detector for one channel. close() frees it. */
export class VoiceDetector {
  private readonly m: FvadModule;
  private handle: number;
  private readonly frame: number;
  private readonly frameLength: number;
  private readonly rate: number;
  /** source samples per detector sample, when the source rate is not one WebRTC's detector takes */
  private readonly ratio: number;
  private resampleSum = 0;
  private resampleFilled = 0;
  /** samples of the current frame written so far, into the wasm heap at `frame` */
  private filled = 0;
  private lastSample = 0;
  private readonly cos: Float64Array;
  private readonly minRun: number;
  // the current run of voiced frames
  private prevDb: number | null = null;
  private runLength = 0;
  /** energies of the current run's current block, with the frame before the run */
  private block: number[] = [];
  private blockVoiced = 0;
  /** the energies of the run's last full block: a short tail is judged with them */
  private fullBlock: number[] = [];
  /** judgeBlock's energies, sorted */
  private sorted = new Float64Array(64);
  private speechFrames = 0;
  private voicedFrames = 0;
  private frames = 0;

  private constructor(m: FvadModule, sourceRate: number) {
    this.m = m;
    this.rate = FVAD_RATES.has(sourceRate) ? sourceRate : 8000;
    this.ratio = sourceRate / this.rate;
    if (this.ratio < 1) throw new Error(`voice activity: ${sourceRate} Hz is below 8 kHz`);
    this.frameLength = (this.rate * FRAME_MS) / 1000;
    this.handle = m._fvad_new();
    if (!this.handle) throw new Error('voice activity: libfvad could not allocate a detector');
    if (
      m._fvad_set_mode(this.handle, VAD_MODE) !== 0 ||
      m._fvad_set_sample_rate(this.handle, this.rate) !== 0
    )
      throw new Error('voice activity: libfvad refused its settings');
    this.frame = m._malloc(this.frameLength * 2);
    this.cos = Float64Array.from(
      [...DTMF_ROWS, ...DTMF_COLUMNS],
      (f) => 2 * Math.cos((2 * Math.PI * f) / this.rate),
    );
    this.minRun = Math.ceil(MIN_RUN_MS / FRAME_MS);
  }

  /** A detector for 16-bit samples at `sampleRate` (8 kHz or more). */
  static async create(sampleRate: number): Promise<VoiceDetector> {
    return new VoiceDetector(await fvadModule(), sampleRate);
  }

  /** Feeds samples [from, from + n) of `samples`. */
  push(samples: Int16Array, from = 0, n = samples.length - from): void {
    const end = from + n;
    // the frame is written straight into the wasm heap, where libfvad reads it (no copy per frame);
    // the heap view is taken anew per frame: a memory growth replaces it
    const at = this.frame >> 1;
    if (this.ratio === 1) {
      // byte copies (memcpy) into the heap: ~15x faster than a loop over the samples, and, unlike
      // set(subarray), no object per frame (a subarray per frame was most of the detector's garbage)
      const bytes = LITTLE_ENDIAN
        ? Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength)
        : null;
      for (let i = from; i < end; ) {
        const k = Math.min(end - i, this.frameLength - this.filled);
        if (bytes) bytes.copy(heapBytes(this.m), this.frame + this.filled * 2, i * 2, (i + k) * 2);
        else {
          const heap = this.m.HEAP16;
          for (let j = 0, o = at + this.filled; j < k; j++) heap[o + j] = samples[i + j]!;
        }
        this.filled += k;
        i += k;
        if (this.filled === this.frameLength) this.processFrame();
      }
      return;
    }
    // area averaging down to 8 kHz (AreaResampler in wav.ts, on integers)
    const r = this.ratio;
    let sum = this.resampleSum;
    let filled = this.resampleFilled;
    let heap = this.m.HEAP16;
    for (let i = from; i < end; i++) {
      const x = samples[i]!;
      let w = 1;
      while (filled + w >= r) {
        const take = r - filled;
        heap[at + this.filled++] = Math.round((sum + x * take) / r);
        if (this.filled === this.frameLength) {
          this.processFrame();
          heap = this.m.HEAP16;
        }
        sum = 0;
        filled = 0;
        w -= take;
      }
      sum += x * w;
      filled += w;
    }
    this.resampleSum = sum;
    this.resampleFilled = filled;
  }

  /**
   * Feeds samples [from, from + n) of `a`'s channel and of `b`'s (two detectors at the same rate,
   * fed the same lengths: splitStereoMp3's two channels). Each detector's answers are the ones
   * push() gives, number for number; only faster: their frames end together, and the two frames'
   * energies and DTMF row filters are computed in one pass (independent sums side by side, which
   * the CPU overlaps), each with the arithmetic it has alone.
   */
  static pushBoth(
    a: VoiceDetector,
    b: VoiceDetector,
    sa: Int16Array,
    sb: Int16Array,
    from: number,
    n: number,
  ): void {
    if (
      a.ratio !== 1 ||
      b.ratio !== 1 ||
      a.m !== b.m ||
      a.frameLength !== b.frameLength ||
      a.filled !== b.filled ||
      !a.handle ||
      !b.handle
    ) {
      a.push(sa, from, n);
      b.push(sb, from, n);
      return;
    }
    const end = from + n;
    const len = a.frameLength;
    // byte copies (memcpy) into the heap: ~15x faster than a loop over the samples, and, unlike
    // set(subarray), no object per frame
    const bytesA = LITTLE_ENDIAN ? Buffer.from(sa.buffer, sa.byteOffset, sa.byteLength) : null;
    const bytesB = LITTLE_ENDIAN ? Buffer.from(sb.buffer, sb.byteOffset, sb.byteLength) : null;
    for (let i = from; i < end; ) {
      const k = Math.min(end - i, len - a.filled);
      if (bytesA && bytesB) {
        const heap = heapBytes(a.m);
        bytesA.copy(heap, a.frame + a.filled * 2, i * 2, (i + k) * 2);
        bytesB.copy(heap, b.frame + a.filled * 2, i * 2, (i + k) * 2);
      } else {
        const heap = a.m.HEAP16;
        for (let j = 0, oa = (a.frame >> 1) + a.filled, ob = (b.frame >> 1) + a.filled; j < k; j++) {
          heap[oa + j] = sa[i + j]!;
          heap[ob + j] = sb[i + j]!;
        }
      }
      a.filled += k;
      b.filled = a.filled;
      i += k;
      if (a.filled === len) VoiceDetector.processBoth(a, b);
    }
  }

  /**
   * Ends a window (the samples pushed since the last call): whether it held speech, and how many
   * milliseconds were voiced by WebRTC's detector alone and counted as speech. A partial frame at
   * the end is judged with the next window's samples (or never, at the end of the recording).
   */
  endWindow(): { speech: boolean; speechMs: number; voicedMs: number; ms: number } {
    // a run that goes on into the next window is judged here as far as it got, and goes on with
    // what it was: the window's edge is not an edge of the sound
    if (this.runLength > 0 && this.blockVoiced > 0) {
      this.judgeBlock();
      this.fullBlock = this.fullBlock.concat(this.block).slice(-(SEGMENT_FRAMES + 1));
      this.block = [];
      this.blockVoiced = 0;
    }
    const r = {
      speech: this.speechFrames * FRAME_MS >= MIN_SPEECH_MS,
      speechMs: this.speechFrames * FRAME_MS,
      voicedMs: this.voicedFrames * FRAME_MS,
      ms: this.frames * FRAME_MS,
    };
    this.speechFrames = 0;
    this.voicedFrames = 0;
    this.frames = 0;
    return r;
  }

  close(): void {
    if (!this.handle) return;
    this.m._free(this.frame);
    this.m._fvad_free(this.handle);
    this.handle = 0;
  }

  private processFrame(): void {
    this.filled = 0;
    const voiced = this.m._fvad_process(this.handle, this.frame, this.frameLength);
    if (voiced < 0) throw new Error('voice activity: libfvad refused a frame');
    this.measure(voiced === 1);
    this.judgeFrame(voiced === 1);
  }

  /** processFrame() of two detectors whose frames are full (pushBoth()). */
  private static processBoth(a: VoiceDetector, b: VoiceDetector): void {
    a.filled = 0;
    b.filled = 0;
    const va = a.m._fvad_process(a.handle, a.frame, a.frameLength);
    if (va < 0) throw new Error('voice activity: libfvad refused a frame');
    const vb = b.m._fvad_process(b.handle, b.frame, b.frameLength);
    if (vb < 0) throw new Error('voice activity: libfvad refused a frame');
    if (va === 1 && vb === 1) VoiceDetector.measureBoth(a, b);
    else {
      a.measure(va === 1);
      b.measure(vb === 1);
    }
    a.judgeFrame(va === 1);
    b.judgeFrame(vb === 1);
  }

  /** measure() of two voiced frames of the same length and rate, in one pass. */
  private static measureBoth(a: VoiceDetector, b: VoiceDetector): void {
    const heap = a.m.HEAP16;
    const atA = a.frame >> 1;
    const atB = b.frame >> 1;
    const n = a.frameLength;
    const cos = a.cos;
    const c0 = cos[0]!;
    const c1 = cos[1]!;
    const c2 = cos[2]!;
    const c3 = cos[3]!;
    let energyA = 0;
    let energyB = 0;
    let empA = 0;
    let empB = 0;
    let lastA = a.lastSample;
    let lastB = b.lastSample;
    let a1 = 0;
    let a2 = 0;
    let b1 = 0;
    let b2 = 0;
    let d1 = 0;
    let d2 = 0;
    let e1 = 0;
    let e2 = 0;
    let p1 = 0;
    let p2 = 0;
    let q1 = 0;
    let q2 = 0;
    let r1 = 0;
    let r2 = 0;
    let t1 = 0;
    let t2 = 0;
    // one loop: the twelve sums are independent, the CPU overlaps them (two loops were ~30 % slower)
    for (let i = 0; i < n; i++) {
      const x = heap[atA + i]!;
      const y = heap[atB + i]!;
      energyA += x * x;
      energyB += y * y;
      const dx = x - 0.95 * lastA;
      empA += dx * dx;
      lastA = x;
      const dy = y - 0.95 * lastB;
      empB += dy * dy;
      lastB = y;
      const a0 = x + c0 * a1 - a2;
      a2 = a1;
      a1 = a0;
      const p0 = y + c0 * p1 - p2;
      p2 = p1;
      p1 = p0;
      const b0 = x + c1 * b1 - b2;
      b2 = b1;
      b1 = b0;
      const q0 = y + c1 * q1 - q2;
      q2 = q1;
      q1 = q0;
      const d0 = x + c2 * d1 - d2;
      d2 = d1;
      d1 = d0;
      const r0 = y + c2 * r1 - r2;
      r2 = r1;
      r1 = r0;
      const e0 = x + c3 * e1 - e2;
      e2 = e1;
      e1 = e0;
      const t0 = y + c3 * t1 - t2;
      t2 = t1;
      t1 = t0;
    }
    a.lastSample = lastA;
    b.lastSample = lastB;
    a.emphasised = empA;
    b.emphasised = empB;
    a.energy = energyA;
    b.energy = energyB;
    a.rowShare =
      energyA === 0
        ? 0
        : Math.max(
            toneShare(c0, a1, a2, n, energyA),
            toneShare(c1, b1, b2, n, energyA),
            toneShare(c2, d1, d2, n, energyA),
            toneShare(c3, e1, e2, n, energyA),
          );
    b.rowShare =
      energyB === 0
        ? 0
        : Math.max(
            toneShare(c0, p1, p2, n, energyB),
            toneShare(c1, q1, q2, n, energyB),
            toneShare(c2, r1, r2, n, energyB),
            toneShare(c3, t1, t2, n, energyB),
          );
  }

  // the last frame's measures (measure(), measureBoth()), read by judgeFrame()
  private energy = 0;
  private emphasised = 0;
  /** the largest share of the frame's energy in one DTMF row tone: of a voiced frame only */
  private rowShare = 0;

  /**
   * The frame's energy after pre-emphasis and, of a voiced frame (only those are checked for key
   * tones), its energy and its DTMF row tones' share (keyTone()): one pass over the frame in the heap.
   */
  private measure(voiced: boolean): void {
    const heap = this.m.HEAP16;
    const at = this.frame >> 1;
    const n = this.frameLength;
    // the swing is measured after pre-emphasis (x[i] - 0.95 x[i-1]): a hum's low harmonics lose
    // 9-24 dB (450 down to 50 Hz), speech's formants keep theirs, so speech over hum still swings
    let emphasised = 0;
    let last = this.lastSample;
    if (!voiced) {
      for (let i = 0; i < n; i++) {
        const x = heap[at + i]!;
        const d = x - 0.95 * last;
        emphasised += d * d;
        last = x;
      }
      this.lastSample = last;
      this.emphasised = emphasised;
      return;
    }
    // the four row tones' Goertzel filters in the same pass: each filter's arithmetic is the one
    // it has alone (strongest()), so the shares are the same numbers
    const cos = this.cos;
    const c0 = cos[0]!;
    const c1 = cos[1]!;
    const c2 = cos[2]!;
    const c3 = cos[3]!;
    let energy = 0;
    let a1 = 0;
    let a2 = 0;
    let b1 = 0;
    let b2 = 0;
    let d1 = 0;
    let d2 = 0;
    let e1 = 0;
    let e2 = 0;
    for (let i = 0; i < n; i++) {
      const x = heap[at + i]!;
      energy += x * x;
      const d = x - 0.95 * last;
      emphasised += d * d;
      last = x;
      const a = x + c0 * a1 - a2;
      a2 = a1;
      a1 = a;
      const b = x + c1 * b1 - b2;
      b2 = b1;
      b1 = b;
      const dd = x + c2 * d1 - d2;
      d2 = d1;
      d1 = dd;
      const e = x + c3 * e1 - e2;
      e2 = e1;
      e1 = e;
    }
    this.lastSample = last;
    this.emphasised = emphasised;
    this.energy = energy;
    this.rowShare =
      energy === 0
        ? 0
        : Math.max(
            toneShare(c0, a1, a2, n, energy),
            toneShare(c1, b1, b2, n, energy),
            toneShare(c2, d1, d2, n, energy),
            toneShare(c3, e1, e2, n, energy),
          );
  }

  /** The frame's verdict (measure()'s numbers) into the runs and the window's counts. */
  private judgeFrame(voiced: boolean): void {
    const n = this.frameLength;
    const emphasised = this.emphasised;
    const db = emphasised > 0 ? 10 * Math.log10(emphasised / n / (32768 * 32768)) : FLOOR_DB;
    this.frames++;
    if (voiced) this.voicedFrames++;
    if (voiced && !this.keyTone(this.energy)) {
      if (this.runLength === 0) {
        this.block = this.prevDb === null ? [] : [this.prevDb];
        this.blockVoiced = 0;
        this.fullBlock = [];
      }
      this.runLength++;
      this.block.push(db);
      this.blockVoiced++;
      if (this.blockVoiced === SEGMENT_FRAMES) {
        this.judgeBlock();
        this.fullBlock = this.block;
        this.block = [db];
        this.blockVoiced = 0;
      }
    } else this.endRun(db);
    this.prevDb = db;
  }

  /** Ends the current run (if any), with the energy of the frame after it when there is one. */
  private endRun(afterDb: number | null): void {
    if (this.runLength === 0) return;
    if (afterDb !== null) this.block.push(afterDb);
    if (this.blockVoiced > 0) this.judgeBlock();
    this.runLength = 0;
    this.block = [];
    this.blockVoiced = 0;
    this.fullBlock = [];
  }

  /** Counts the block's voiced frames as speech when its run is long enough and its energy swings. */
  private judgeBlock(): void {
    if (this.runLength < this.minRun) return;
    // the tail of a long run is judged with the block before it: a steady noise that stops dead
    // would otherwise swing from its few last frames to the silence after it
    // sorted in a reused typed array (numeric order, as (a, b) => a - b): no array per block
    const withFull = this.blockVoiced < SEGMENT_FRAMES;
    const len = (withFull ? this.fullBlock.length : 0) + this.block.length;
    if (this.sorted.length < len) this.sorted = new Float64Array(Math.max(len, this.sorted.length * 2, 64));
    // indexed loops: an array iterator per loop was the detector's largest garbage left
    const { fullBlock, block, sorted } = this;
    let at = 0;
    if (withFull) for (let i = 0; i < fullBlock.length; i++) sorted[at++] = fullBlock[i]!;
    for (let i = 0; i < block.length; i++) sorted[at++] = block[i]!;
    const v = sorted.subarray(0, len).sort();
    const lo = v[Math.floor(0.1 * (v.length - 1))]!;
    const hi = v[Math.ceil(0.9 * (v.length - 1))]!;
    if (hi - lo < MIN_SWING_DB) return;
    // a click is one loud frame and the detector's hangover: speech holds its level for a syllable
    const top = v[v.length - 1]!;
    let loud = 0;
    // counted in the block's own frames: the silent hangover after a noise that stops dead is not speech
    for (let i = 0; i < block.length; i++) if (block[i]! >= top - LOUD_DB) loud++;
    if (loud >= MIN_LOUD_FRAMES) this.speechFrames += this.blockVoiced;
  }

  /**
   * Whether the voiced frame in the heap is a DTMF key tone: one row and one column tone hold most of
   * its energy. The four row tones' Goertzel filters ran in measure()'s pass over the frame, then —
   * only when a row tone holds at least a tenth of it (speech's frames mostly stop here) — the four
   * columns' run in another: each filter's arithmetic is the one it had alone, so the shares are the
   * same numbers.
   */
  private keyTone(energy: number): boolean {
    if (energy === 0) return false;
    const row = this.rowShare;
    if (row < 0.1) return false;
    const column = this.strongest(4, energy);
    return row + column >= DTMF_SHARE && column >= 0.1;
  }

  /** The largest share of the frame's energy held by one of the four tones from `first` of `cos`. */
  private strongest(first: number, energy: number): number {
    const heap = this.m.HEAP16;
    const at = this.frame >> 1;
    const n = this.frameLength;
    const c0 = this.cos[first]!;
    const c1 = this.cos[first + 1]!;
    const c2 = this.cos[first + 2]!;
    const c3 = this.cos[first + 3]!;
    let a1 = 0;
    let a2 = 0;
    let b1 = 0;
    let b2 = 0;
    let d1 = 0;
    let d2 = 0;
    let e1 = 0;
    let e2 = 0;
    for (let i = 0; i < n; i++) {
      const x = heap[at + i]!;
      const a = x + c0 * a1 - a2;
      a2 = a1;
      a1 = a;
      const b = x + c1 * b1 - b2;
      b2 = b1;
      b1 = b;
      const d = x + c2 * d1 - d2;
      d2 = d1;
      d1 = d;
      const e = x + c3 * e1 - e2;
      e2 = e1;
      e1 = e;
    }
    return Math.max(
      toneShare(c0, a1, a2, n, energy),
      toneShare(c1, b1, b2, n, energy),
      toneShare(c2, d1, d2, n, energy),
      toneShare(c3, e1, e2, n, energy),
    );
  }
}

/**
 * The share of a frame's energy in one Goertzel filter's tone, from its last two states: |X|² of the
 * tone over the frame's energy (a full-frame sine of amplitude A has |X|² = (nA/2)² and energy nA²/2).
 */
function toneShare(c: number, s1: number, s2: number, n: number, energy: number): number {
  return (2 * (s1 * s1 + s2 * s2 - c * s1 * s2)) / (n * energy);
}
