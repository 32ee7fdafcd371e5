// Console behaviour without inline scripts (the Content-Security-Policy allows scripts from this origin only):
// forms marked data-confirm ask first; the "Copy" button next to a newly created key copies it; cards that
// scroll sideways say so.
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
// A card whose table is wider than the card scrolls sideways: mark it (base.html draws shadows at the edge
// that hides more, and shows a one-line hint) whenever the window's width changes.
function markScrollingCards() {
  document.querySelectorAll(".card").forEach((card) => {
    const scrolls = card.scrollWidth > card.clientWidth + 1;
    card.classList.toggle("scrolls", scrolls);
    if (scrolls && !card.querySelector(":scope > .scroll-hint")) {
      const hint = document.createElement("p");
      hint.className = "scroll-hint";
      hint.textContent = "Scroll sideways for more columns \u2192";
      card.prepend(hint);
    }
  });
}
document.addEventListener("DOMContentLoaded", markScrollingCards);
window.addEventListener("resize", markScrollingCards);
// On a narrow screen the navigation is one line that scrolls sideways: bring the current page's link into it.
document.addEventListener("DOMContentLoaded", () => {
  const nav = document.querySelector("nav.console"), current = nav && nav.querySelector("[aria-current=page]");
  if (nav && current && nav.scrollWidth > nav.clientWidth) {
    nav.scrollLeft = current.offsetLeft - nav.offsetLeft - (nav.clientWidth - current.offsetWidth) / 2;
  }
});
