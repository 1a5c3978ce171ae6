import { MPEGDecoder } from 'mpg123-decoder';

/**
 * The mpg123 decoders of every decode of a stored recording (the transcription's split into WAV
 * channels, the talk metrics' levels, redaction's silencing). Decoders are reused: each instance
 * holds its own 16 MB WebAssembly memory, and making one per decode had the garbage collector
 * reclaim 16 MB each time (the talk metrics' decoder alone: V8's GC threads ~26 ms per call). Between recordings the mpg123 decoder
 * inside the instance is destroyed and created again (mpg123-decoder's reset() would instantiate the
 * whole module anew), through the package's internals, checked before use: should they change, a
 * fresh instance is made per recording as before. At most MAX_IDLE_DECODERS wait for work.
 */
const MAX_IDLE_DECODERS = 8;
const idleDecoders: MPEGDecoder[] = [];

interface Mpg123Internals {
  _decoder: number | undefined;
  _sampleRate: number;
  _inputBytes: number;
  _outputSamples: number;
  _frameNumber: number;
  _common: {
    allocateTypedArray(
      len: number,
      t: Uint32ArrayConstructor,
      track: boolean,
    ): { ptr: number; buf: Uint32Array };
    wasm: {
      mpeg_frame_decoder_create(ptr: number, gapless: number): number;
      mpeg_frame_decoder_destroy(decoder: number): void;
      free(ptr: number): void;
    };
  };
}

/** A decoder ready to decode a recording from its start; give it back (giveBackDecoder) when done. */
export async function takeDecoder(): Promise<MPEGDecoder> {
  const idle = idleDecoders.pop();
  if (idle) return idle;
  const decoder = new MPEGDecoder();
  await decoder.ready;
  return decoder;
}

/** Done with a decoder: `healthy` false (it threw) frees it instead of keeping it. */
export function giveBackDecoder(decoder: MPEGDecoder, healthy: boolean): void {
  if (healthy && idleDecoders.length < MAX_IDLE_DECODERS && renewDecoder(decoder)) {
    idleDecoders.push(decoder);
    return;
  }
  try {
    decoder.free();
  } catch {
    // a decoder whose renewal failed half-way has nothing left to free but its instance (GC)
  }
}

/** A fresh mpg123 decoder in the same instance, as `new MPEGDecoder()` creates it; false when not possible. */
export function renewDecoder(decoder: MPEGDecoder): boolean {
  const d = decoder as unknown as Partial<Mpg123Internals>;
  const common = d._common;
  const wasm = common?.wasm;
  if (
    typeof d._decoder !== 'number' ||
    typeof common?.allocateTypedArray !== 'function' ||
    typeof wasm?.mpeg_frame_decoder_create !== 'function' ||
    typeof wasm.mpeg_frame_decoder_destroy !== 'function' ||
    typeof wasm.free !== 'function'
  )
    return false;
  // destroy frees the handle's memory itself (mpg123_delete, then free of the handle): a free here
  // too was a double free, corrupting the instance's heap for the recordings decoded after it
  wasm.mpeg_frame_decoder_destroy(d._decoder);
  d._decoder = undefined;
  const p = common.allocateTypedArray(1, Uint32Array, false);
  const error = wasm.mpeg_frame_decoder_create(p.ptr, 1);
  const created = p.buf[0]!;
  wasm.free(p.ptr);
  if (error) return false;
  d._decoder = created;
  d._sampleRate = 0;
  d._inputBytes = 0;
  d._outputSamples = 0;
  d._frameNumber = 0;
  return true;
}

/**
 * One decoded chunk, both channels, in buffers reused from chunk to chunk (decodeInto): valid until
 * the next decode into the same PcmChunk. `left`/`right` hold `samples` samples from 0 (they are
 * longer; never read past `samples`).
 */
export class PcmChunk {
  left = new Float32Array(0);
  right = new Float32Array(0);
  samples = 0;
  sampleRate = 0;

  /** Room for `n` more samples past `samples`, keeping those. */
  reserve(n: number): void {
    const need = this.samples + n;
    if (this.left.length >= need) return;
    const size = Math.max(need, this.left.length * 2, 8192);
    const l = new Float32Array(size);
    const r = new Float32Array(size);
    l.set(this.left.subarray(0, this.samples));
    r.set(this.right.subarray(0, this.samples));
    this.left = l;
    this.right = r;
  }
}

const chunks = new WeakMap<MPEGDecoder, PcmChunk>();

/** The PcmChunk that goes with a (pooled) decoder: its arrays are reused from recording to recording too. */
export function chunkOf(decoder: MPEGDecoder): PcmChunk {
  let c = chunks.get(decoder);
  if (!c) {
    c = new PcmChunk();
    chunks.set(decoder, c);
  }
  c.samples = 0;
  return c;
}

interface Mpg123DecodeInternals {
  _decoder: number;
  _inputBytes: number;
  _outputSamples: number;
  _frameNumber: number;
  _input: { ptr: number; len: number; buf: Uint8Array };
  _output: { ptr: number; len: number; buf: Float32Array };
  _samplesDecodedPtr: { ptr: number; buf: Uint32Array };
  _sampleRatePtr: { ptr: number; buf: Uint32Array };
  _errorStringPtr: { ptr: number; buf: Uint32Array };
  _getErrorMessage(error: number): string;
  _common: {
    wasm: {
      mpeg_decoder_feed(decoder: number, ptr: number, len: number): number;
      mpeg_decoder_read(
        decoder: number,
        out: number,
        outLen: number,
        samplesPtr: number,
        ratePtr: number,
        errorPtr: number,
      ): number;
    };
  };
}

function decodeInternals(decoder: MPEGDecoder): Mpg123DecodeInternals | null {
  const d = decoder as unknown as Partial<Mpg123DecodeInternals>;
  const wasm = d._common?.wasm;
  if (
    typeof d._decoder !== 'number' ||
    !(d._input?.buf instanceof Uint8Array) ||
    !(d._output?.buf instanceof Float32Array) ||
    !(d._samplesDecodedPtr?.buf instanceof Uint32Array) ||
    !(d._sampleRatePtr?.buf instanceof Uint32Array) ||
    !(d._errorStringPtr?.buf instanceof Uint32Array) ||
    typeof d._getErrorMessage !== 'function' ||
    typeof wasm?.mpeg_decoder_feed !== 'function' ||
    typeof wasm.mpeg_decoder_read !== 'function'
  )
    return null;
  return d as Mpg123DecodeInternals;
}

/**
 * `decoder.decode(data)` into `out` (from 0) instead of fresh arrays: mpg123-decoder's decode copies
 * each read of the WebAssembly output into two new Float32Arrays and then concatenates them into two
 * more, four arrays per chunk for the garbage collector. The same loop as the package's decode
 * (mpg123-decoder 1.x, src/MPEGDecoder.js), through its internals, checked before use: should they
 * change, the package's decode is used and its arrays copied. Answers out.samples.
 */
export function decodeInto(decoder: MPEGDecoder, data: Uint8Array, out: PcmChunk): number {
  out.samples = 0;
  const d = decodeInternals(decoder);
  if (!d) {
    const r = decoder.decode(data);
    out.reserve(r.samplesDecoded);
    if (r.samplesDecoded > 0) {
      out.left.set(r.channelData[0]!.subarray(0, r.samplesDecoded));
      out.right.set((r.channelData[1] ?? r.channelData[0]!).subarray(0, r.samplesDecoded));
    }
    out.samples = r.samplesDecoded;
    out.sampleRate = r.sampleRate;
    return out.samples;
  }
  const wasm = d._common.wasm;
  const input = d._input;
  const output = d._output;
  for (let at = 0, len = 0; at < data.length; at += len) {
    const part = data.subarray(at, input.len + at);
    len = part.length;
    d._inputBytes += len;
    input.buf.set(part);
    let error = wasm.mpeg_decoder_feed(d._decoder, input.ptr, len);
    if (error === -10) continue; // MPG123_NEED_MORE
    while (true) {
      d._samplesDecodedPtr.buf[0] = 0;
      error = wasm.mpeg_decoder_read(
        d._decoder,
        output.ptr,
        output.len,
        d._samplesDecodedPtr.ptr,
        d._sampleRatePtr.ptr,
        d._errorStringPtr.ptr,
      );
      const n = d._samplesDecodedPtr.buf[0]!;
      d._outputSamples += n;
      if (n) {
        // the WebAssembly memory may have grown (a new buffer) since the last read
        const buf = output.buf;
        out.reserve(n);
        out.left.set(buf.subarray(0, n), out.samples);
        out.right.set(buf.subarray(n, n * 2), out.samples);
        out.samples += n;
      }
      if (error === -11) continue; // MPG123_NEW_FORMAT
      if (error === -10) break; // MPG123_NEED_MORE
      if (error) console.error(`mpg123-decoder: ${d._getErrorMessage(error)}`);
    }
  }
  out.sampleRate = d._sampleRatePtr.buf[0]!;
  return out.samples;
}
