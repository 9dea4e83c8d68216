// cortex web: live pages. The server sends an event when one of the page's documents changes
// (a KV watch); the page fetches itself and swaps in the new <main>, keeping the focus where it
// was. Without JavaScript the pages are the same, only not live.
(() => {
  "use strict";
  const source = document.body.dataset.live;
  if (!source || !window.EventSource || !window.DOMParser) return;
  let busy = false;
  let again = false;

  const typing = (el) => el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type !== "hidden"));
  const focusKey = (el) => {
    if (!el || el === document.body) return null;
    if (el.id) return "#" + CSS.escape(el.id);
    const form = el.closest("form");
    if (form && form.getAttribute("action")) return `form[action="${CSS.escape(form.getAttribute("action"))}"] button`;
    if (el.getAttribute("href")) return `a[href="${CSS.escape(el.getAttribute("href"))}"]`;
    return null;
  };

  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      const main = document.querySelector("main");
      if (main.contains(document.activeElement) && typing(document.activeElement)) return;  // never under the cursor
      const response = await fetch(location.href, { headers: { "X-Cortex-Live": "1" }, credentials: "same-origin" });
      if (!response.ok) return;
      const fresh = new DOMParser().parseFromString(await response.text(), "text/html").querySelector("main");
      if (!fresh) return;
      const key = main.contains(document.activeElement) ? focusKey(document.activeElement) : null;
      // a correction's notice is said once: the fresh page's copy goes, the one on screen stays
      // (the correction's own change swaps the page moments after it is shown)
      fresh.querySelectorAll(".notice").forEach((n) => n.remove());
      const shown = main.querySelector(".notice");
      if (shown) fresh.prepend(shown);
      main.replaceWith(fresh);
      const again_focus = key && fresh.querySelector(key);
      if (again_focus) again_focus.focus();
      document.body.dataset.updated = String(Date.now());
    } catch (_) {
      // the server is restarting: the next change refreshes again
    } finally {
      busy = false;
      if (again) { again = false; refresh(); }
    }
  }

  const events = new EventSource(source);
  events.addEventListener("change", refresh);
  events.addEventListener("open", () => { document.body.dataset.live_open = "1"; });
})();
