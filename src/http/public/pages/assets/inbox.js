// The inbox's keys (calls/list.ts): j / k (or ↓ / ↑ with a row focused) move to the next or previous
// call, x ticks the focused call's box for the bulk form, / goes to the search box. Keys typed into a
// field are left alone. Without JavaScript every action is still a link, a box or a form.
const rows = [...document.querySelectorAll('tr[data-row]')];
const typing = (el) =>
  el instanceof HTMLElement && el.closest('input, select, textarea, button, [contenteditable]');
const current = () => rows.findIndex((r) => r.contains(document.activeElement));
const focusRow = (i) => rows[Math.max(0, Math.min(rows.length - 1, i))]?.querySelector('a.who')?.focus();

document.addEventListener('keydown', (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const search = document.getElementById('f-q');
  if (event.key === '/' && search && !typing(event.target)) {
    event.preventDefault();
    search.focus();
    return;
  }
  if (rows.length === 0 || typing(event.target)) return;
  const i = current();
  if (event.key === 'j' || (event.key === 'ArrowDown' && i >= 0)) {
    event.preventDefault();
    focusRow(i + 1);
  } else if (event.key === 'k' || (event.key === 'ArrowUp' && i >= 0)) {
    event.preventDefault();
    focusRow(i < 0 ? 0 : i - 1);
  } else if (event.key === 'x' && i >= 0) {
    event.preventDefault();
    const box = rows[i].querySelector('input[type=checkbox]');
    if (box) box.checked = !box.checked;
  }
});
