// Live countdowns: <span class="countdown" data-until="ISO time">23 h 59 min</span> counts down every
// 30 s. The page renders the time left on the server (it works without JavaScript); the server's
// clock (data-now on the page) is the reference, so a wrong clock on this device does not matter.
const nowEl = document.querySelector('[data-now]');
const serverNow = nowEl ? Date.parse(nowEl.dataset.now) : Date.now();
const loadedAt = Date.now();
const spans = document.querySelectorAll('span.countdown[data-until]');

function left(until) {
  const ms = Date.parse(until) - (serverNow + (Date.now() - loadedAt));
  if (!(ms > 0)) return 'expired';
  const min = Math.ceil(ms / 60000);
  const h = Math.floor(min / 60);
  return h > 0 ? `${h} h ${min % 60} min` : `${min} min`;
}

if (spans.length > 0) {
  setInterval(() => {
    for (const span of spans) span.textContent = left(span.dataset.until);
  }, 30000);
}
