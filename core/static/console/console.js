// Console behaviour without inline scripts (the Content-Security-Policy allows scripts from this origin only):
// forms marked data-confirm ask first; the "Copy" button next to a newly created key copies it.
document.addEventListener("submit", (event) => {
  const form = event.target.closest("form[data-confirm]");
  if (form && !window.confirm(form.dataset.confirm)) event.preventDefault();
});
document.addEventListener("DOMContentLoaded", () => {
  const button = document.getElementById("copy-key");
  if (!button) return;
  button.addEventListener("click", async () => {
    const input = document.getElementById("new-key"), status = document.getElementById("copy-status");
    try { await navigator.clipboard.writeText(input.value); status.textContent = "Copied."; }
    catch (e) { input.select(); status.textContent = "Press Ctrl+C (\u2318C) to copy."; }
  });
});
