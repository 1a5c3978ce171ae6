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

// Drag and drop (progressive enhancement): a card can be dragged to another column; the drop posts
// the form its buttons post (/app/calls/bulk: ids, crm_status = the column's data-status, back to
// the card's anchor, the CSRF field), so the server does one thing, whichever way the card moved.
let dragged = null;
const columnOf = (el) => el?.closest('section.column[data-status]');
for (const card of document.querySelectorAll('[data-card]')) {
  card.draggable = true;
  card.addEventListener('dragstart', (event) => {
    dragged = card;
    card.classList.add('dragging');
    event.dataTransfer.effectAllowed = 'move';
    event.dataTransfer.setData('text/plain', card.id);
  });
  card.addEventListener('dragend', () => {
    card.classList.remove('dragging');
    for (const c of document.querySelectorAll('.drop-target')) c.classList.remove('drop-target');
    dragged = null;
  });
}
for (const column of document.querySelectorAll('section.column[data-status]')) {
  const accepts = () => dragged && columnOf(dragged) !== column;
  column.addEventListener('dragover', (event) => {
    if (!accepts()) return;
    event.preventDefault();
    event.dataTransfer.dropEffect = 'move';
    column.classList.add('drop-target');
  });
  column.addEventListener('dragleave', (event) => {
    if (!column.contains(event.relatedTarget)) column.classList.remove('drop-target');
  });
  column.addEventListener('drop', (event) => {
    if (!accepts()) return;
    event.preventDefault();
    const card = dragged;
    const csrf = card.querySelector('input[name="_csrf"]');
    if (!csrf) return;
    const form = document.createElement('form');
    form.method = 'post';
    form.action = '/app/calls/bulk';
    form.hidden = true;
    const fields = {
      _csrf: csrf.value,
      ids: card.id.slice('card-'.length),
      crm_status: column.dataset.status,
      back: `/app/calls/board#${card.id}`,
    };
    for (const [name, value] of Object.entries(fields)) {
      const input = document.createElement('input');
      input.type = 'hidden';
      input.name = name;
      input.value = value;
      form.append(input);
    }
    document.body.append(form);
    form.submit();
  });
}
