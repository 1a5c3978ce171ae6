/**
 * Reading a plain-text transcript: speaker turns ("Agent: …", "Caller: …", "Speaker 1: …") and
 * sentences. Pure; the rule-based analyzer builds on it.
 */

export interface Turn {
  speaker: string | null;
  text: string;
}

export interface ReadTranscript {
  turns: Turn[];
  /** distinct speaker labels, in order of first appearance (empty when the text has no labels) */
  speakers: string[];
  /** what the customer said: turns of the non-agent speakers, or the whole text when unlabelled */
  customerText: string;
}

const LABEL = /^\s*([\p{Lu}][\p{L}\p{N}'.-]*(?: [\p{L}\p{N}'.-]+){0,2})\s*:\s*(.*)$/u;
const AGENT_LABEL =
  /^(agent|rep|representative|operator|staff|company|support|receptionist|reception|employee|sales|advisor|assistant|mitarbeiter|agente|conseiller)\b/i;

export function readTranscript(text: string, organizationName = ''): ReadTranscript {
  const turns: Turn[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (!line.trim()) continue;
    const m = LABEL.exec(line);
    if (m && !/^https?$/i.test(m[1])) turns.push({ speaker: m[1].trim(), text: m[2].trim() });
    else if (turns.length) turns[turns.length - 1].text += ` ${line.trim()}`;
    else turns.push({ speaker: null, text: line.trim() });
  }
  const speakers = [...new Set(turns.map((t) => t.speaker).filter((s): s is string => s !== null))];
  return { turns, speakers, customerText: customerSide(turns, speakers, organizationName) };
}

function customerSide(turns: Turn[], speakers: string[], organizationName: string): string {
  if (speakers.length < 2)
    return turns
      .map((t) => t.text)
      .join(' ')
      .trim();
  const agents = agentSpeakers(speakers, organizationName);
  return turns
    .filter((t) => t.speaker === null || !agents.has(t.speaker))
    .map((t) => t.text)
    .join(' ')
    .trim();
}

/**
 * The labels of the company's side (two or more speakers): agent-like labels or the organization's
 * name; with generic labels (Speaker 1/Speaker 2) the first speaker — the company side speaks first,
 * answering or dialling. Empty with fewer than two speakers (everything is the customer's).
 */
export function agentSpeakers(speakers: string[], organizationName: string): Set<string> {
  if (speakers.length < 2) return new Set();
  const org = organizationName.trim().toLowerCase();
  const isAgent = (s: string) => AGENT_LABEL.test(s) || (org !== '' && s.toLowerCase() === org);
  return speakers.some(isAgent) ? new Set(speakers.filter(isAgent)) : new Set([speakers[0]]);
}

/**
 * True when nobody said anything: the text is empty or whitespace, or its turns carry no letter or
 * digit (speaker labels or punctuation alone). Such a transcript is analysed by no model: its
 * analysis is all null and it gets no draft (analyzer.ts silentCallResult).
 */
export function nothingSaid(text: string): boolean {
  if (!text.trim()) return true;
  return readTranscript(text).turns.every((t) => !/[\p{L}\p{N}]/u.test(t.text));
}

/** Sentences of a text (split after . ! ? followed by a space), trimmed, empties dropped. */
export function sentences(text: string): string[] {
  return text
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

const GREETING =
  /^(hi|hello|hey|good (morning|afternoon|evening)|hallo|guten tag|bonjour|hola|buenos días|yes|yeah|ok|okay|thanks|thank you)[.!?,]*$/i;

/** Sentences that carry content (bare greetings and acknowledgements removed). */
export function contentSentences(text: string): string[] {
  return sentences(text).filter((s) => !GREETING.test(s));
}
