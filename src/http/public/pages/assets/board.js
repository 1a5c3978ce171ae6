// The board's keys (calls/board.ts): on a focused card (or anything inside it), ← and → press its
// "move" buttons; after the move the page comes back with the card's anchor, and the card is focused
// again so the next key moves it further. The buttons work without JavaScript.
for (const card of document.querySelectorAll('[data-card]')) {
  card.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || event.shiftKey) return;
    const dir = event.key === 'ArrowLeft' ? 'prev' : event.key === 'ArrowRight' ? 'next' : null;
    const button = dir && card.querySelector(`button[data-move="${dir}"]`);
    if (!button) return;
    event.preventDefault();
    button.click();
  });
}
const target = location.hash.startsWith('#card-') ? document.getElementById(location.hash.slice(1)) : null;
if (target?.matches('[data-card]')) target.focus();
