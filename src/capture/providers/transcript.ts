import type { Speaker, TranscriptSegment } from './types.ts';

/**
 * The speaker-labelled transcript every speech-to-text provider answers (docs/capture.md
 * "Transcript format"): segments of both channels sorted by start time, one line per turn —
 * consecutive segments of the same speaker joined — as `Agent: …` / `Customer: …`. A segment whose
 * speaker is unknown is written `Speaker: …`. src/capture/transcript-text.ts reads these labels
 * (Agent = company side, anything else = customer side).
 */

const LABEL: Record<Speaker, string> = { agent: 'Agent', customer: 'Customer', unknown: 'Speaker' };

/** Sorts by start (then end, agent first on a tie), drops empty segments, trims text. */
export function mergeSegments(segments: TranscriptSegment[]): TranscriptSegment[] {
  const order: Record<Speaker, number> = { agent: 0, customer: 1, unknown: 2 };
  return segments
    .map((s) => ({ ...s, text: s.text.replace(/\s+/g, ' ').trim() }))
    .filter((s) => s.text.length > 0)
    .sort((a, b) => a.start - b.start || a.end - b.end || order[a.speaker] - order[b.speaker]);
}

export function labelledText(segments: TranscriptSegment[]): string {
  const lines: { speaker: Speaker; text: string }[] = [];
  for (const s of segments) {
    const last = lines.at(-1);
    if (last && last.speaker === s.speaker) last.text += ` ${s.text}`;
    else lines.push({ speaker: s.speaker, text: s.text });
  }
  return lines.map((l) => `${LABEL[l.speaker]}: ${l.text}`).join('\n');
}

/**
 * The start and end (seconds) of each line labelledText writes for these segments, in order: a
 * line's first segment's start and its last segment's end. Stored beside the transcript
 * (calls.transcript_times) so that the call page can play the recording from a line.
 */
export function lineTimes(segments: TranscriptSegment[]): [number, number][] {
  const out: { speaker: Speaker; start: number; end: number }[] = [];
  for (const s of segments) {
    const last = out.at(-1);
    if (last && last.speaker === s.speaker) last.end = Math.max(last.end, s.end);
    else out.push({ speaker: s.speaker, start: s.start, end: s.end });
  }
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return out.map((l) => [r(l.start), r(l.end)]);
}

/**
 * Whisper's language answer as ISO 639-1: OpenAI's verbose_json says "english", whisper.cpp and
 * others say "en". Null for anything else.
 */
export function whisperLanguage(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const v = value.trim().toLowerCase();
  if (/^[a-z]{2}$/.test(v)) return v;
  const m = /^([a-z]{2})[-_][a-z0-9]+$/.exec(v);
  if (m) return m[1];
  return WHISPER_LANGUAGES[v] ?? null;
}

/** Whisper's language names (tokenizer.py LANGUAGES) → ISO 639-1, where a two-letter code exists. */
const WHISPER_LANGUAGES: Record<string, string> = Object.fromEntries(
  (
    'en english,zh chinese,de german,es spanish,ru russian,ko korean,fr french,ja japanese,pt portuguese,' +
    'tr turkish,pl polish,ca catalan,nl dutch,ar arabic,sv swedish,it italian,id indonesian,hi hindi,' +
    'fi finnish,vi vietnamese,he hebrew,uk ukrainian,el greek,ms malay,cs czech,ro romanian,da danish,' +
    'hu hungarian,ta tamil,no norwegian,th thai,ur urdu,hr croatian,bg bulgarian,lt lithuanian,la latin,' +
    'mi maori,ml malayalam,cy welsh,sk slovak,te telugu,fa persian,lv latvian,bn bengali,sr serbian,' +
    'az azerbaijani,sl slovenian,kn kannada,et estonian,mk macedonian,br breton,eu basque,is icelandic,' +
    'hy armenian,ne nepali,mn mongolian,bs bosnian,kk kazakh,sq albanian,sw swahili,gl galician,' +
    'mr marathi,pa punjabi,si sinhala,km khmer,sn shona,yo yoruba,so somali,af afrikaans,oc occitan,' +
    'ka georgian,be belarusian,tg tajik,sd sindhi,gu gujarati,am amharic,yi yiddish,lo lao,uz uzbek,' +
    'fo faroese,ht haitian creole,ps pashto,tk turkmen,nn nynorsk,mt maltese,sa sanskrit,lb luxembourgish,' +
    'my myanmar,bo tibetan,tl tagalog,mg malagasy,as assamese,tt tatar,ln lingala,ha hausa,ba bashkir,' +
    'jv javanese,su sundanese,yue cantonese'
  )
    .split(',')
    .map((pair) => {
      const at = pair.indexOf(' ');
      return [pair.slice(at + 1), pair.slice(0, at)];
    })
    .filter(([, code]) => code.length === 2),
);
