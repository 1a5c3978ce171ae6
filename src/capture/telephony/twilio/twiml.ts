/**
 * TwiML answers (https://www.twilio.com/docs/voice/twiml), built as strings with every attribute and
 * text escaped. Only the verbs the adapter uses.
 */
export type Verb =
  | { verb: 'Say'; text: string; language?: string }
  | {
      verb: 'Gather';
      action: string;
      numDigits: number;
      timeout: number;
      say: { text: string; language?: string };
    }
  | { verb: 'Redirect'; url: string }
  | {
      verb: 'Dial';
      number: string;
      action: string;
      callerId?: string;
      timeout?: number;
      record?: 'record-from-answer-dual';
      recordingStatusCallback?: string;
      /** the status callback of the dialled leg (<Number statusCallback>) */
      numberStatusCallback?: string;
      /** a URL Twilio fetches for the dialled party before connecting (<Number url>: whisper, confirmation) */
      numberUrl?: string;
    }
  | { verb: 'Record'; action: string; maxLength: number; timeout: number; recordingStatusCallback: string }
  | { verb: 'Hangup' };

const escapeXml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' })[c]!,
  );

function attrs(a: Record<string, string | number | undefined>): string {
  return Object.entries(a)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => ` ${k}="${escapeXml(String(v))}"`)
    .join('');
}

function say(text: string, language?: string): string {
  return `<Say${attrs({ language })}>${escapeXml(text)}</Say>`;
}

function render(v: Verb): string {
  switch (v.verb) {
    case 'Say':
      return say(v.text, v.language);
    case 'Gather':
      return `<Gather${attrs({ action: v.action, method: 'POST', input: 'dtmf', numDigits: v.numDigits, timeout: v.timeout })}>${say(v.say.text, v.say.language)}</Gather>`;
    case 'Redirect':
      return `<Redirect method="POST">${escapeXml(v.url)}</Redirect>`;
    case 'Dial': {
      const recording = v.record
        ? {
            record: v.record,
            recordingStatusCallback: v.recordingStatusCallback,
            recordingStatusCallbackMethod: 'POST',
            recordingStatusCallbackEvent: 'completed absent',
          }
        : {};
      const number = v.numberStatusCallback
        ? {
            statusCallback: v.numberStatusCallback,
            statusCallbackMethod: 'POST',
            statusCallbackEvent: 'initiated ringing answered completed',
          }
        : {};
      return `<Dial${attrs({ action: v.action, method: 'POST', callerId: v.callerId, timeout: v.timeout, ...recording })}><Number${attrs({ ...number, url: v.numberUrl })}>${escapeXml(v.number)}</Number></Dial>`;
    }
    case 'Record':
      return `<Record${attrs({
        action: v.action,
        method: 'POST',
        maxLength: v.maxLength,
        timeout: v.timeout,
        playBeep: 'true',
        recordingStatusCallback: v.recordingStatusCallback,
        recordingStatusCallbackMethod: 'POST',
        recordingStatusCallbackEvent: 'completed absent',
      })}/>`;
    case 'Hangup':
      return '<Hangup/>';
  }
}

export function twiml(verbs: Verb[]): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response>${verbs.map(render).join('')}</Response>`;
}
