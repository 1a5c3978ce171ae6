import type { Clock } from '../../clock.ts';
import { channelOfSpeaker, speakerOfChannel } from '../../domain/recording-channels.ts';
import { type ProviderHttp, postJson, tooLarge } from './http.ts';
import { labelledText, mergeSegments, whisperLanguage } from './transcript.ts';
import {
  ProviderError,
  type Speaker,
  type TranscriptionInput,
  type TranscriptionProvider,
  type TranscriptionResult,
  type TranscriptSegment,
  type TranscriptWord,
} from './types.ts';

/**
 * Deepgram pre-recorded speech-to-text: `POST {base}/v1/listen` with the stored audio as the body
 * (streamed, never buffered), `Authorization: Token …`. A dual-channel recording is sent with
 * `multichannel=true`, and each utterance's channel labelled with its side for the call's direction
 * (src/domain/recording-channels.ts: the parent leg on channel 0 — the caller on an inbound call,
 * the agent on a click-to-call); a mono one with `diarize=true`. Deepgram's utterances
 * (`utterances=true`) become the segments, each with its words' times (Deepgram answers `words` in
 * every utterance and alternative without being asked; `punctuated_word` is the word as the
 * formatted transcript writes it): what audio redaction silences (docs/capture.md "Redaction").
 *
 * Mono speakers: one voice is the customer (a voicemail). If diarization hears several, the first
 * voice is the side that picks up — the agent on an inbound call, the customer on an outbound one —
 * and every other voice the other side.
 */

export const DEEPGRAM_DEFAULT_BASE_URL = 'https://api.deepgram.com';
export const DEEPGRAM_DEFAULT_MODEL = 'nova-3';
/** Deepgram's documented limit for pre-recorded audio: 2 GB. */
export const DEEPGRAM_MAX_UPLOAD_BYTES = 2 * 1024 * 1024 * 1024;

export interface DeepgramOptions {
  baseUrl?: string;
  apiKey?: string;
  model?: string;
  maxUploadBytes?: number;
  timeoutMs: number;
  /** most bytes of an answer read (PROVIDER_MAX_ANSWER_BYTES; http.ts) */
  maxAnswerBytes?: number;
  clock: Clock;
}

interface Utterance {
  start: number;
  end: number;
  channel: number;
  speaker?: number;
  transcript: string;
  words?: TranscriptWord[];
}

/**
 * Deepgram's `words` ([{word, punctuated_word?, start, end}]) as the transcript writes them; undefined
 * when absent, empty or not readable (then the segment has no word times, and a redacted call is
 * flagged rather than silenced).
 */
function wordsOf(value: unknown): TranscriptWord[] | undefined {
  if (!Array.isArray(value) || value.length === 0) return undefined;
  const out: TranscriptWord[] = [];
  for (const w of value as { word?: unknown; punctuated_word?: unknown; start?: unknown; end?: unknown }[]) {
    const text = typeof w?.punctuated_word === 'string' ? w.punctuated_word : w?.word;
    if (typeof text !== 'string' || typeof w.start !== 'number' || typeof w.end !== 'number')
      return undefined;
    out.push({ text, start: w.start, end: w.end });
  }
  return out;
}

export function deepgramTranscription(opts: DeepgramOptions): TranscriptionProvider {
  const name = 'deepgram';
  const base = (opts.baseUrl ?? DEEPGRAM_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const model = opts.model ?? DEEPGRAM_DEFAULT_MODEL;
  const maxUploadBytes = opts.maxUploadBytes ?? DEEPGRAM_MAX_UPLOAD_BYTES;
  const http: ProviderHttp = {
    provider: name,
    timeoutMs: opts.timeoutMs,
    maxAnswerBytes: opts.maxAnswerBytes,
    clock: opts.clock,
    secrets: opts.apiKey ? [opts.apiKey] : [],
  };

  return {
    name,
    maxUploadBytes,
    async transcribe(input: TranscriptionInput): Promise<TranscriptionResult> {
      if (input.byteLength > maxUploadBytes) throw tooLarge(name, input.byteLength, maxUploadBytes);
      const q = new URLSearchParams({
        model,
        punctuate: 'true',
        smart_format: 'true',
        utterances: 'true',
        detect_language: 'true',
      });
      if (input.channels === 2) q.set('multichannel', 'true');
      else q.set('diarize', 'true');
      const headers: Record<string, string> = {
        'content-type': input.contentType,
        'content-length': String(input.byteLength),
      };
      if (opts.apiKey) headers.authorization = `Token ${opts.apiKey}`;
      const audio = await input.openAudio();
      let answer: unknown;
      try {
        answer = await postJson(http, `${base}/v1/listen?${q}`, {
          headers,
          body: audio,
          signal: input.signal,
        });
      } finally {
        audio.destroy();
      }
      try {
        return parseListen(answer, input);
      } catch (err) {
        if (err instanceof ProviderError) throw err;
        throw new ProviderError(
          name,
          'fatal',
          `deepgram answered a transcription that cannot be read: ${(err as Error).message}`,
          {
            cause: err,
          },
        );
      }
    },
  };
}

function parseListen(answer: unknown, input: TranscriptionInput): TranscriptionResult {
  const results = (answer as { results?: { channels?: unknown; utterances?: unknown } })?.results;
  if (!results || !Array.isArray(results.channels)) throw new Error('the answer has no results.channels');
  const channels = results.channels as {
    detected_language?: unknown;
    alternatives?: { transcript?: unknown; words?: { start?: unknown; end?: unknown; word?: unknown }[] }[];
  }[];
  let utterances: Utterance[];
  if (Array.isArray(results.utterances)) {
    utterances = results.utterances.map((u: Partial<Omit<Utterance, 'words'>> & { words?: unknown }) => {
      if (typeof u?.start !== 'number' || typeof u.end !== 'number' || typeof u.transcript !== 'string')
        throw new Error('an utterance lacks start, end or transcript');
      return {
        start: u.start,
        end: u.end,
        channel: typeof u.channel === 'number' ? u.channel : 0,
        speaker: typeof u.speaker === 'number' ? u.speaker : undefined,
        transcript: u.transcript,
        words: wordsOf(u.words),
      };
    });
  } else {
    // no utterances (a server without the option): one segment per channel
    utterances = channels.map((c, channel) => {
      const alt = c.alternatives?.[0];
      if (typeof alt?.transcript !== 'string') throw new Error(`channel ${channel} has no transcript`);
      const words = alt.words ?? [];
      const first = words[0]?.start;
      const last = words.at(-1)?.end;
      return {
        start: typeof first === 'number' ? first : 0,
        end: typeof last === 'number' ? last : 0,
        channel,
        transcript: alt.transcript,
        words: wordsOf(words),
      };
    });
  }

  const speakerOf = speakerMapping(utterances, input);
  const segments: TranscriptSegment[] = utterances.map((u) => ({
    speaker: speakerOf(u),
    start: u.start,
    end: u.end,
    text: u.transcript,
    ...(u.words ? { words: u.words } : {}),
  }));
  const merged = mergeSegments(segments);
  // the customer's channel first: the follow-up draft is written to them
  const customer = channelOfSpeaker('customer', input.direction);
  const order = input.channels === 2 ? [customer, 1 - customer] : [0];
  const language =
    order.map((i) => whisperLanguage(channels[i]?.detected_language)).find((l) => l !== null) ?? null;
  return { text: labelledText(merged), language, segments: merged };
}

function speakerMapping(utterances: Utterance[], input: TranscriptionInput): (u: Utterance) => Speaker {
  if (input.channels === 2) return (u) => speakerOfChannel(u.channel, input.direction);
  const voices = [...new Set([...utterances].sort((a, b) => a.start - b.start).map((u) => u.speaker ?? 0))];
  if (voices.length <= 1) return () => 'customer';
  const first: Speaker = input.direction === 'inbound' ? 'agent' : 'customer';
  const other: Speaker = first === 'agent' ? 'customer' : 'agent';
  return (u) => ((u.speaker ?? 0) === voices[0] ? first : other);
}
