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
