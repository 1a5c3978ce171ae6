import { type CallContact, type CallPageRow, lineTimesOf } from '../../../../capture/call-page.ts';
import { agentSpeakers, readTranscript } from '../../../../capture/transcript-text.ts';
import { customerShare, type TalkMetrics } from '../../../../domain/talk-metrics.ts';
import type { PageUser } from '../kit/guard.ts';
import { html, type VNode } from '../kit/html.ts';
import { CsrfField } from '../kit/ui.ts';

/**
 * The call page as a listening tool (docs/console.md "The call page"): the transcript's lines with
 * their times, each a button that plays the recording from there; the playing line followed
 * (aria-current); speed and keyboard shortcuts — all wired by assets/player.js. Without JavaScript
 * the transcript reads as text and the play buttons stay hidden. Also the talk metrics and the
 * call's contact (or the "Save as contact" form).
 */

/** 83 → "1:23", 3725 → "1:02:05": a position in the recording. */
export function clock(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** A button that plays the recording from `start` seconds; hidden until player.js finds the player. */
export function PlayFrom({ start, label }: { start: number; label?: string }): VNode {
  return html`<button type="button" class="play-from" data-start=${String(start)} hidden>
    ${label ?? `Play from ${clock(start)}`}
  </button>`;
}

/** How to drive the player by keyboard, said on the page (shown with the player). */
function PlayerControls(): VNode {
  return html`<div class="player-controls" id="player-controls" hidden>
    <div role="group" aria-label="Playback speed" class="speeds">
      <span class="muted">Speed</span>
      ${['1', '1.5', '2'].map(
        (r) =>
          html`<button type="button" class="secondary speed" data-rate=${r} aria-pressed=${r === '1' ? 'true' : 'false'}>
            ${r}×
          </button>`,
      )}
    </div>
    <details class="shortcuts">
      <summary>Keyboard shortcuts</summary>
      <dl>
        <dt><kbd>Space</kbd></dt><dd>play or pause (outside fields and buttons)</dd>
        <dt><kbd>J</kbd> or <kbd>↓</kbd></dt><dd>next transcript line, played from its start</dd>
        <dt><kbd>K</kbd> or <kbd>↑</kbd></dt><dd>previous transcript line</dd>
        <dt><kbd>Enter</kbd> on a line</dt><dd>play from that line</dd>
      </dl>
      <p class="muted">The arrows work on a line of the transcript; J, K and Space anywhere on the page except in a field.</p>
    </details>
  </div>`;
}

export function ListeningControls(): VNode {
  return html`<${PlayerControls} />`;
}

export function Transcript({ c, organizationName }: { c: CallPageRow; organizationName: string }): VNode {
  if (!c.transcript_original) {
    return html`<p class="muted">
      ${c.processing_state === 'queued' ? 'The transcript is being processed.' : 'No transcript for this call.'}
    </p>`;
  }
  const { turns, speakers } = readTranscript(c.transcript_original);
  const agents = agentSpeakers(speakers, organizationName);
  const times = lineTimesOf(c.transcript_times, turns.length);
  const side = (speaker: string | null) =>
    speaker === null ? 'none' : agents.has(speaker) ? 'agent' : speakers.length > 1 ? 'customer' : 'none';
  return html`${
    times || c.recording_state !== 'available'
      ? null
      : html`<p class="muted">
          This transcript has no times (it did not come from this service's speech-to-text), so its lines cannot be
          played one by one.
        </p>`
  }
    <ol class="transcript" id="transcript" aria-label="Transcript">
      ${turns.map((t, i) => {
        const at = times?.[i];
        return html`<li class=${`line side-${side(t.speaker)}`} data-start=${at ? String(at[0]) : undefined}>
          ${
            at
              ? html`<span class="time">${clock(at[0])}</span><button type="button" class="seek" data-start=${String(at[0])} hidden
                  aria-label=${`Play from ${clock(at[0])}${t.speaker ? `, ${t.speaker}` : ''}`}>${clock(at[0])}</button>`
              : null
          }
          <div class="said">
            ${t.speaker ? html`<span class="speaker">${t.speaker}<span class="sr-only">:</span></span> ` : null}<span class="text">${t.text}</span>
          </div>
        </li>`;
      })}
    </ol>`;
}

const pct = (x: number) => `${Math.round(x * 100)} %`;
const secs = (x: number) => (x < 60 ? `${x.toFixed(1)} s` : clock(x));

export function TalkTime({ m }: { m: TalkMetrics | null }): VNode {
  if (!m) {
    return html`<p class="muted">
      Talk time is measured on two-channel recordings transcribed by the service (one side of the call per
      channel). This call has none.
    </p>`;
  }
  const share = customerShare(m);
  const total = m.duration_seconds || 1;
  const mono = m.longest_monologue;
  return html`<div class="talk" id="talk-metrics">
    ${
      share === null
        ? null
        : html`<p class="ratio">
            <label for="talk-share">Customer's share of the talk</label>
            <meter id="talk-share" min="0" max="100" value=${Math.round(share * 100)}>${pct(share)}</meter>
          </p>`
    }
    <dl class="facts">
      <dt>Customer talked</dt>
      <dd>${secs(m.customer_seconds)}${share === null ? null : html` <span class="muted">(${pct(share)} of the talk)</span>`}</dd>
      <dt>Agent talked</dt>
      <dd>${secs(m.agent_seconds)}${share === null ? null : html` <span class="muted">(${pct(1 - share)} of the talk)</span>`}</dd>
      <dt>Talk ratio</dt>
      <dd>${
        share === null
          ? 'Nobody talked'
          : `Customer ${Math.round(share * 100)} : Agent ${100 - Math.round(share * 100)}`
      }</dd>
      <dt>Longest monologue</dt>
      <dd>${
        mono
          ? html`${secs(mono.seconds)} by the ${mono.speaker}, from ${clock(mono.start)} <${PlayFrom} start=${mono.start} label=${`Play the monologue from ${clock(mono.start)}`} />`
          : 'None'
      }</dd>
      <dt>Silence</dt>
      <dd>${secs(m.silence_seconds)} <span class="muted">(${pct(m.silence_seconds / total)} of the recording)</span></dd>
      ${m.overlap_seconds > 0 ? html`<dt>Both talking</dt><dd>${secs(m.overlap_seconds)}</dd>` : null}
    </dl>
    <p class="muted">Measured on the recording in steps of ${Math.round(m.frame_seconds * 1000)} ms; pauses under 0.3 s between words count as talk.</p>
  </div>`;
}

const contactName = (k: CallContact) => [k.first_name, k.last_name].filter(Boolean).join(' ');

/** The call's contact (a link), or the "Save as contact" form prefilled with the number and the caller's name. */
export function CallContactSection({
  c,
  contact,
  user,
  callerName,
}: {
  c: CallPageRow;
  contact: CallContact | null;
  user: PageUser;
  callerName: string | null;
}): VNode {
  if (!c.customer_phone_e164) {
    return html`<p class="muted">This call has no usable customer number, so it cannot be tied to a contact.</p>`;
  }
  if (contact) {
    return html`<p id="call-contact">
      <a href=${`/app/contacts/${contact.id}`}>${contactName(contact) || c.customer_phone_e164}</a>${
        contact.company ? html` <span class="muted">(${contact.company})</span>` : null
      } — every call with ${c.customer_phone_national ?? c.customer_phone_e164} is on the contact's page.
    </p>`;
  }
  const [first, ...rest] = (callerName ?? '').trim().split(/\s+/);
  return html`<p class="muted">No contact has this number yet.</p>
    <form method="post" action="/app/contacts" class="stack" id="save-contact">
      <${CsrfField} user=${user} />
      <input type="hidden" name="from_call" value=${c.id} />
      <div><label for="sc-phone">Phone</label>
        <input type="tel" id="sc-phone" name="phone" value=${c.customer_phone_e164} required maxlength="64" autocomplete="off" /></div>
      <div><label for="sc-first">First name</label>
        <input type="text" id="sc-first" name="first_name" value=${first ?? ''} maxlength="100" autocomplete="off" /></div>
      <div><label for="sc-last">Last name</label>
        <input type="text" id="sc-last" name="last_name" value=${rest.join(' ')} maxlength="100" autocomplete="off" /></div>
      <div><button type="submit">Save as contact</button></div>
    </form>`;
}
