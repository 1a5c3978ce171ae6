// Forms with data-confirm="question" ask before they are sent. A convenience only: destructive
// actions also have their own confirmation page or a required checkbox that works without JavaScript.
for (const form of document.querySelectorAll('form[data-confirm]')) {
  form.addEventListener('submit', (event) => {
    if (!window.confirm(form.dataset.confirm)) event.preventDefault();
  });
}
