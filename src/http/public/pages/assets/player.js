// The call page as a listening tool (pages/calls/listening.ts): the transcript's line buttons and the
// "Play from" buttons play the recording (audio#call-audio) from their data-start second; the line
// being played is marked aria-current and kept in view; speed buttons; keyboard shortcuts (Space
// play/pause, J/K or the arrows on a line: next/previous line). Without JavaScript, or without a
// player on the page, nothing here runs: the transcript reads as text and the play buttons stay hidden.
const audio = document.getElementById('call-audio');
if (audio instanceof HTMLAudioElement) {
  const lines = [...document.querySelectorAll('#transcript li[data-start]')];
  const starts = lines.map((li) => Number(li.dataset.start));
  let current = -1;

  const mark = (i) => {
    if (i === current) return;
    if (current >= 0) lines[current].removeAttribute('aria-current');
    current = i;
    if (i < 0) return;
    lines[i].setAttribute('aria-current', 'true');
    const reduce = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    if (!audio.paused) lines[i].scrollIntoView({ block: 'nearest', behavior: reduce ? 'auto' : 'smooth' });
  };
  const lineAt = (t) => {
    let i = -1;
    for (let k = 0; k < starts.length; k++) if (starts[k] <= t + 0.05) i = k;
    return i;
  };
  const playFrom = (t) => {
    audio.currentTime = t;
    mark(lineAt(t));
    const p = audio.play();
    if (p) p.catch(() => {});
  };
  // the line to move from: the focused line, else the one playing, else the one at the player's time
  const here = () => {
    const li = document.activeElement?.closest?.('#transcript li[data-start]');
    const i = li ? lines.indexOf(li) : -1;
    return i >= 0 ? i : current >= 0 ? current : lineAt(audio.currentTime);
  };
  const toLine = (i) => {
    if (i < 0 || i >= lines.length) return;
    lines[i].querySelector('button.seek')?.focus();
    playFrom(starts[i]);
  };

  audio.addEventListener('timeupdate', () => mark(lineAt(audio.currentTime)));
  audio.addEventListener('seeked', () => mark(lineAt(audio.currentTime)));

  for (const b of document.querySelectorAll('button.play-from[data-start]')) {
    b.hidden = false;
    b.addEventListener('click', () => playFrom(Number(b.dataset.start)));
  }
  for (const [i, li] of lines.entries()) {
    // the time becomes a button (without JavaScript it is plain text: nothing could play)
    const seek = li.querySelector('button.seek');
    if (seek) {
      seek.hidden = false;
      const time = li.querySelector('.time');
      if (time) time.hidden = true;
      seek.addEventListener('click', () => playFrom(starts[i]));
    }
    // a click anywhere on the line plays it too, unless the reader is selecting its text
    li.addEventListener('click', (e) => {
      if (e.target instanceof Element && e.target.closest('button, a')) return;
      if (String(window.getSelection() ?? '')) return;
      playFrom(starts[i]);
    });
    li.classList.add('playable');
  }

  const controls = document.getElementById('player-controls');
  if (controls) controls.hidden = false;
  const speeds = [...document.querySelectorAll('button.speed[data-rate]')];
  for (const b of speeds) {
    b.addEventListener('click', () => {
      audio.playbackRate = Number(b.dataset.rate);
      for (const o of speeds) o.setAttribute('aria-pressed', o === b ? 'true' : 'false');
    });
  }

  const typing = (el) =>
    el instanceof HTMLElement &&
    (el.isContentEditable ||
      el.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"]'));
  document.addEventListener('keydown', (e) => {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
    const onLine = e.target instanceof Element && e.target.closest('#transcript');
    const interactive = e.target instanceof Element && e.target.closest('button, a, summary, audio');
    const key = e.key;
    if (key === ' ' && !interactive) {
      e.preventDefault();
      if (audio.paused) audio.play().catch(() => {});
      else audio.pause();
    } else if (key === 'j' || key === 'J' || (key === 'ArrowDown' && onLine)) {
      e.preventDefault();
      toLine(Math.min(lines.length - 1, here() + 1));
    } else if (key === 'k' || key === 'K' || (key === 'ArrowUp' && onLine)) {
      e.preventDefault();
      toLine(Math.max(0, here() - 1));
    }
  });
}
