import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Clock } from '../../clock.ts';
import { channelOfSpeaker, speakerOfChannel } from '../../domain/recording-channels.ts';
import { Multipart, type ProviderHttp, postJson, tooLarge } from './http.ts';
import { splitStereoMp3InThread, startSplitThread } from './split-thread.ts';
import { labelledText, mergeSegments, whisperLanguage } from './transcript.ts';
import {
  type ChannelActivity,
  ProviderError,
  type Speaker,
  type TranscriptionInput,
  type TranscriptionProvider,
  type TranscriptionResult,
  type TranscriptSegment,
  type TranscriptWord,
} from './types.ts';

/**
 * Speech-to-text through `POST {base}/audio/transcriptions` (multipart, `response_format=verbose_json`):
 * OpenAI, Groq, whisper.cpp's server, speaches / faster-whisper-server and vLLM all speak it.
 *
 * A dual-channel recording is decoded and each channel uploaded on its own as 16-bit PCM WAV, in
 * windows of at most WINDOW_SECONDS that also fit the upload limit; each channel's segments are
 * labelled with its side for the call's direction (src/domain/recording-channels.ts: the parent leg
 * on channel 0 — the caller on an inbound call, the agent on a click-to-call) and, offset by their
 * window's start, merged by time into the labelled transcript. A mono recording (voicemail: only the caller speaks) is uploaded as it is and labelled
 * Customer. Audio over the upload limit is refused (ProviderError 'too_large'), never cut.
 */

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com/v1';
export const OPENAI_DEFAULT_TRANSCRIPTION_MODEL = 'whisper-1';
/** OpenAI's documented file limit: 25 MB (its error names 26214400 bytes). */
export const OPENAI_MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
/** Ten minutes per uploaded window: short enough for every server's limit at telephone rates. */
export const WINDOW_SECONDS = 600;
/**
 * A window's WAV up to this size per channel (32 s at 16 kHz) is kept in memory and uploaded from
 * there — no file written, opened and read back; a longer one goes to disk as it grows. At most
 * 2 × 1 MiB per running transcription (PROCESSING_CONCURRENCY of them).
 */
export const WINDOW_MEMORY_BYTES = 1024 * 1024;
/** The longest dual-channel recording transcribed: four hours. */
export const MAX_RECORDING_SECONDS = 4 * 60 * 60;

export interface OpenAiTranscriptionOptions {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  maxUploadBytes?: number;
  timeoutMs: number;
  /** most bytes of an answer read (PROVIDER_MAX_ANSWER_BYTES; http.ts) */
  maxAnswerBytes?: number;
  clock: Clock;
  /** the longest dual-channel recording transcribed, in seconds; default MAX_RECORDING_SECONDS */
  maxRecordingSeconds?: number;
  /** where window files go (a fresh folder per call, removed afterwards); default os.tmpdir() */
  tmpDir?: string;
}

type WindowSegment = { start: number; end: number; text: string; words?: TranscriptWord[] };

const verboseJson = (j: unknown): { language: string | null; segments: WindowSegment[] } => {
  const o = j as {
    language?: unknown;
    text?: unknown;
    duration?: unknown;
    segments?: unknown;
    words?: unknown;
  };
  if (typeof o !== 'object' || o === null || typeof o.text !== 'string')
    throw new Error('the answer has no text');
  const language = whisperLanguage(o.language);
  const words = wordsOf(o.words);
  let segments: WindowSegment[];
  if (Array.isArray(o.segments)) {
    segments = o.segments.map((s: { start?: unknown; end?: unknown; text?: unknown }) => {
      if (typeof s?.start !== 'number' || typeof s.end !== 'number' || typeof s.text !== 'string')
        throw new Error('a segment lacks start, end or text');
      return { start: s.start, end: s.end, text: s.text };
    });
  } else {
    // servers that answer verbose_json without segments: the whole text is one segment
    const end = typeof o.duration === 'number' ? o.duration : (words?.at(-1)?.end ?? 0);
    segments = o.text.trim() ? [{ start: 0, end, text: o.text }] : [];
  }
  if (words) {
    // the answer's words (a list beside the segments) go to the segment they fall in
    for (const s of segments) s.words = [];
    for (const w of words) {
      const mid = (w.start + w.end) / 2;
      const seg =
        segments.find((s) => mid >= s.start && mid <= s.end) ?? segments.find((s) => w.start < s.end);
      seg?.words?.push(w);
    }
  }
  return { language, segments };
};

/** verbose_json's `words` ([{word, start, end}]) when the server gave them; null otherwise. */
function wordsOf(value: unknown): TranscriptWord[] | null {
  if (!Array.isArray(value)) return null;
  const out: TranscriptWord[] = [];
  for (const w of value as { word?: unknown; start?: unknown; end?: unknown }[]) {
    if (typeof w?.word !== 'string' || typeof w.start !== 'number' || typeof w.end !== 'number') return null;
    out.push({ text: w.word, start: w.start, end: w.end });
  }
  return out;
}

export function openAiTranscription(opts: OpenAiTranscriptionOptions): TranscriptionProvider {
  const name = 'openai';
  const base = (opts.baseUrl ?? OPENAI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const model = opts.model ?? OPENAI_DEFAULT_TRANSCRIPTION_MODEL;
  const maxUploadBytes = opts.maxUploadBytes ?? OPENAI_MAX_UPLOAD_BYTES;
  const http: ProviderHttp = {
    provider: name,
    timeoutMs: opts.timeoutMs,
    maxAnswerBytes: opts.maxAnswerBytes,
    clock: opts.clock,
    secrets: opts.apiKey ? [opts.apiKey] : [],
  };

  /** `audio`: a file's path, or the bytes of a window kept in memory */
  const upload = async (audio: string | Buffer, filename: string, type: string, signal?: AbortSignal) => {
    const form = new Multipart()
      .file('file', typeof audio === 'string' ? { path: audio } : audio, filename, type)
      .field('model', model)
      .field('response_format', 'verbose_json')
      .field('timestamp_granularities[]', 'segment')
      // word times: what silencing a redacted card number in the recording needs (docs/capture.md "Redaction")
      .field('timestamp_granularities[]', 'word')
      .field('temperature', '0');
    const headers: Record<string, string> = {};
    if (opts.apiKey) headers.authorization = `Bearer ${opts.apiKey}`;
    const body = await postJson(http, `${base}/audio/transcriptions`, { headers, body: form, signal });
    try {
      return verboseJson(body);
    } catch (err) {
      throw new ProviderError(
        name,
        'fatal',
        `openai answered a transcription that cannot be read: ${(err as Error).message}`,
        {
          cause: err,
        },
      );
    }
  };

  return {
    name,
    maxUploadBytes,
    warmUp: startSplitThread,
    async transcribe(input: TranscriptionInput): Promise<TranscriptionResult> {
      if (input.channels === 1 && input.byteLength > maxUploadBytes)
        throw tooLarge(name, input.byteLength, maxUploadBytes);
      // made when first needed: a dual-channel recording whose windows stay in memory needs no folder
      let dir: string | null = null;
      const folder = async () => {
        dir ??= await mkdtemp(join(opts.tmpDir ?? tmpdir(), 'callcap-stt-'));
        return dir;
      };
      try {
        const segments: TranscriptSegment[] = [];
        const languages: (string | null)[] = [];
        let channelActivity: ChannelActivity | undefined;
        if (input.channels === 1) {
          const ext = extensionOf(input.contentType);
          const file = join(await folder(), `recording.${ext}`);
          await pipeline(await input.openAudio(), createWriteStream(file));
          const r = await upload(file, `recording.${ext}`, input.contentType, input.signal);
          languages.push(r.language);
          for (const s of r.segments) segments.push({ speaker: 'customer', ...s });
        } else {
          const split = await splitStereoMp3InThread(name, await input.openAudio(), folder, {
            maxWindowSeconds: WINDOW_SECONDS,
            maxWindowBytes: maxUploadBytes,
            maxSeconds: opts.maxRecordingSeconds ?? MAX_RECORDING_SECONDS,
            memoryBytes: WINDOW_MEMORY_BYTES,
          });
          channelActivity = split.activity ?? undefined;
          const speakers: Speaker[] = [
            speakerOfChannel(0, input.direction),
            speakerOfChannel(1, input.direction),
          ];
          const perChannel: (string | null)[][] = [[], []];
          for (const [wi, w] of split.windows.entries()) {
            const answers = await Promise.all(
              ([0, 1] as const).map((ch) =>
                w.speech[ch]
                  ? upload(
                      w.wavs?.[ch] ?? w.files[ch],
                      `${speakers[ch]}-${wi}.wav`,
                      'audio/wav',
                      input.signal,
                    )
                  : null,
              ),
            );
            for (const ch of [0, 1] as const) {
              const a = answers[ch];
              if (!a) continue;
              perChannel[ch].push(a.language);
              for (const s of a.segments)
                segments.push({
                  speaker: speakers[ch],
                  start: s.start + w.offset,
                  end: s.end + w.offset,
                  text: s.text,
                  ...(s.words
                    ? {
                        words: s.words.map((x) => ({
                          ...x,
                          start: x.start + w.offset,
                          end: x.end + w.offset,
                        })),
                      }
                    : {}),
                });
            }
          }
          // the customer's language first: the follow-up draft is written to them
          const customer = channelOfSpeaker('customer', input.direction);
          languages.push(...perChannel[customer], ...perChannel[1 - customer]);
        }
        const merged = mergeSegments(segments);
        return {
          text: labelledText(merged),
          language: languages.find((l) => l !== null) ?? null,
          segments: merged,
          ...(channelActivity ? { channelActivity } : {}),
        };
      } finally {
        if (dir) await rm(dir, { recursive: true, force: true });
      }
    },
  };
}

function extensionOf(contentType: string): string {
  const t = contentType.split(';')[0].trim().toLowerCase();
  const known: Record<string, string> = {
    'audio/mpeg': 'mp3',
    'audio/mp3': 'mp3',
    'audio/wav': 'wav',
    'audio/x-wav': 'wav',
    'audio/wave': 'wav',
    'audio/ogg': 'ogg',
    'audio/webm': 'webm',
    'audio/mp4': 'm4a',
    'audio/x-m4a': 'm4a',
    'audio/flac': 'flac',
  };
  return known[t] ?? 'mp3';
}
