// agentd dashboard: a little plain JavaScript on server-rendered pages.
// Copy buttons, confirmations, the agent form's type switch, and live call
// status from the server-sent event stream (GET /api/v2/events/stream).
"use strict";

document.addEventListener("DOMContentLoaded", () => {
  // Copy the value of the input a [data-copy] button names.
  for (const btn of document.querySelectorAll("[data-copy]")) {
    btn.addEventListener("click", async () => {
      const input = document.getElementById(btn.dataset.copy);
      try {
        await navigator.clipboard.writeText(input.value);
      } catch {
        input.select();
        document.execCommand("copy");
      }
      btn.textContent = "Copied";
    });
  }

  // Ask before a destructive form is sent.
  for (const form of document.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (e) => {
      if (!window.confirm(form.dataset.confirm)) e.preventDefault();
    });
  }

  // The agent form shows the settings of the chosen type only.
  const typeSelect = document.querySelector("[data-type-select]");
  if (typeSelect) {
    const sync = () => {
      for (const fs of document.querySelectorAll("fieldset[data-type]")) {
        fs.hidden = fs.dataset.type !== typeSelect.value;
      }
    };
    typeSelect.addEventListener("change", sync);
    sync();
  }

  const list = document.querySelector("[data-live-calls]");
  const detail = document.querySelector("[data-call-detail]");
  if (list || detail) liveCalls(list, detail);
});

const callEvents = ["call.queued", "call.ringing", "call.answered", "call.retry_scheduled", "call.ended", "call.result"];

// liveCalls follows the organization's call events: a row of the calls
// list gets its new status, attempts and duration; the call detail page
// re-renders its content in place. EventSource resumes after a dropped
// connection with Last-Event-ID by itself. A role without events:read
// (viewer) cannot open the stream: the page then polls itself every 5 s.
function liveCalls(list, detail) {
  const badge = document.querySelector("[data-live]");
  const show = (text, off) => {
    if (!badge) return;
    badge.hidden = false;
    badge.textContent = text;
    badge.classList.toggle("off", off);
  };
  let refreshing = false;
  const refresh = () => {
    if (refreshing) return;
    refreshing = true;
    refreshFrom(list, detail).finally(() => { refreshing = false; });
  };
  const poll = () => {
    show("auto-refresh", false);
    setInterval(refresh, 5000);
  };
  if (!window.EventSource) return poll();
  const src = new EventSource("/api/v2/events/stream?" + callEvents.map((t) => "type=" + t).join("&"));
  let opened = false;
  src.addEventListener("open", () => { opened = true; show("live", false); });
  src.addEventListener("error", () => {
    if (!opened) { src.close(); poll(); return; }
    if (src.readyState !== EventSource.OPEN) show("reconnecting", true);
  });
  const onEvent = (ev) => {
    let call;
    try { call = JSON.parse(ev.data).data; } catch { return; }
    if (!call || !call.id) return;
    if (list) updateRow(list, call);
    if (detail && detail.dataset.callDetail === call.id) refresh();
  };
  for (const t of callEvents) src.addEventListener(t, onEvent);
  window.addEventListener("pagehide", () => src.close());
}

function updateRow(list, call) {
  const row = list.querySelector(`tr[data-call="${CSS.escape(call.id)}"]`);
  if (!row) {
    const notice = document.querySelector("[data-new-calls]");
    if (notice && call.status === "queued" && !location.search.includes("offset=")) notice.hidden = false;
    return;
  }
  const cell = row.querySelector('[data-field="status"]');
  if (cell && call.status) {
    const b = document.createElement("span");
    b.className = "badge flash st-" + call.status;
    b.textContent = call.status.replace(/_/g, " ");
    cell.replaceChildren(b);
  }
  const attempts = row.querySelector('[data-field="attempts"]');
  if (attempts && typeof call.attempts === "number") attempts.textContent = String(call.attempts);
  const dur = row.querySelector('[data-field="duration"]');
  if (dur && typeof call.duration === "number") dur.textContent = call.duration.toFixed(1) + "s";
}

// refreshFrom fetches the page again and swaps in the call detail, or the
// status, attempts and duration of each row of the list.
async function refreshFrom(list, detail) {
  const res = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
  if (!res.ok) return;
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  if (list) {
    for (const fresh of doc.querySelectorAll("tr[data-call]")) {
      const row = list.querySelector(`tr[data-call="${CSS.escape(fresh.dataset.call)}"]`);
      if (!row) continue;
      for (const f of ["status", "attempts", "duration"]) {
        const cell = row.querySelector(`[data-field="${f}"]`);
        const next = fresh.querySelector(`[data-field="${f}"]`);
        if (cell && next && cell.innerHTML !== next.innerHTML) cell.innerHTML = next.innerHTML;
      }
    }
  }
  const fresh = doc.querySelector("[data-call-detail]");
  if (!detail || !fresh) return;
  const live = detail.querySelector("[data-live]");
  detail.replaceChildren(...fresh.childNodes);
  const again = detail.querySelector("[data-live]");
  if (live && again) again.replaceWith(live);
  for (const form of detail.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (e) => { if (!window.confirm(form.dataset.confirm)) e.preventDefault(); });
  }
}
