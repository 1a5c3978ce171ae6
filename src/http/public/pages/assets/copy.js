// Copy buttons: <button class="copy" data-copy-target="ID" hidden> copies the text of element ID.
// Hidden without JavaScript (the text itself stays selectable); shown and wired here.
// What happened is also said in one polite live region, so a screen reader announces "Copied".
let live = null;
const announce = (text) => {
  if (!live) {
    live = document.createElement('p');
    live.className = 'sr-only';
    live.setAttribute('role', 'status');
    live.id = 'copy-status';
    document.body.append(live);
  }
  live.textContent = '';
  // A new text node after clearing, so saying the same thing twice is announced twice.
  setTimeout(() => {
    live.textContent = text;
  }, 50);
};
for (const button of document.querySelectorAll('button[data-copy-target]')) {
  const target = document.getElementById(button.dataset.copyTarget);
  if (!target || !navigator.clipboard) continue;
  const label = button.textContent;
  button.hidden = false;
  button.addEventListener('click', async () => {
    const text = 'value' in target ? target.value : target.textContent;
    try {
      await navigator.clipboard.writeText(text.trim());
      button.textContent = 'Copied';
      announce('Copied');
    } catch {
      button.textContent = 'Copy failed: select the text';
      announce('Copy failed: select the text');
    }
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
}
