// Copy buttons: <button class="copy" data-copy-target="ID" hidden> copies the text of element ID.
// Hidden without JavaScript (the text itself stays selectable); shown and wired here.
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
    } catch {
      button.textContent = 'Copy failed: select the text';
    }
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  });
}
