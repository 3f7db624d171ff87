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
  const regions = document.querySelectorAll("[data-live-region]").length > 0;
  if (list || detail || regions) liveCalls(list, detail, regions);
  const convs = document.querySelector("[data-live-conversations]");
  if (convs) liveConversations();
  const preview = document.querySelector("[data-widget-preview]");
  if (preview) previewWidget(preview);
  const log = document.querySelector("[data-event-log]");
  if (log && !document.querySelector('a[rel="next"]')) followLog(log);
});

// followLog appends the organization's new events to the event log as the
// stream delivers them (the page's type filter applies).
function followLog(log) {
  const badge = document.querySelector("[data-live]");
  if (!window.EventSource) return;
  const types = (log.dataset.types || "").split(",").filter(Boolean);
  const src = new EventSource("/api/v2/events/stream" + (types.length ? "?" + types.map((t) => "type=" + encodeURIComponent(t)).join("&") : ""));
  src.addEventListener("open", () => { if (badge) { badge.hidden = false; badge.textContent = "live"; badge.classList.remove("off"); } });
  src.addEventListener("error", () => { if (badge && src.readyState !== EventSource.OPEN) { badge.textContent = "reconnecting"; badge.classList.add("off"); } });
  const add = (ev) => {
    let e;
    try { e = JSON.parse(ev.data); } catch { return; }
    if (!e.id || log.querySelector(`tr[data-event="${CSS.escape(e.id)}"]`)) return;
    const row = document.createElement("tr");
    row.dataset.event = e.id;
    row.className = "arrived";
    const cell = (text, code) => {
      const td = document.createElement("td");
      if (code) {
        const c = document.createElement("code");
        c.textContent = text;
        if (code === "data") c.className = "data";
        td.append(c);
      } else {
        td.className = "nowrap";
        td.textContent = text;
      }
      return td;
    };
    row.append(cell(new Date(e.createdAt).toLocaleString()), cell(e.type, true), cell(JSON.stringify(e.data), "data"));
    log.tBodies[0].append(row);
  };
  const all = types.length ? types : (log.dataset.all || "").split(",").filter(Boolean);
  for (const t of all) src.addEventListener(t, add);
  window.addEventListener("pagehide", () => src.close());
}

const callEvents = ["call.queued", "call.ringing", "call.answered", "call.retry_scheduled", "call.ended", "call.result", "batch.completed"];

// liveCalls follows the organization's call events. A row of the calls
// list gets its new status, attempts and duration at once; new calls, the
// call detail and the page's [data-live-region] parts (Overview counters,
// Batches progress) are fetched again, at most once a second however many
// events arrive, and swapped in place: no reload, no flicker. EventSource
// resumes after a dropped connection with Last-Event-ID by itself. A role
// without events:read (viewer) cannot open the stream: the page then
// refreshes the same parts every 5 s.
function liveCalls(list, detail, regions) {
  const badge = document.querySelector("[data-live]");
  const show = (text, off) => {
    if (!badge) return;
    badge.hidden = false;
    badge.textContent = text;
    badge.classList.toggle("off", off);
  };
  let running = false, timer = 0, last = 0, again = false;
  const refresh = () => {
    if (running) { again = true; return; }
    running = true;
    last = Date.now();
    refreshFrom(list, detail).finally(() => {
      running = false;
      if (again) { again = false; schedule(); }
    });
  };
  // schedule refreshes once within a second of the first event, then
  // at most once a second while events keep coming.
  const schedule = () => {
    if (timer) return;
    timer = setTimeout(() => { timer = 0; refresh(); }, Math.max(250, last + 1000 - Date.now()));
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
    let data;
    try { data = JSON.parse(ev.data).data; } catch { return; }
    if (!data) return;
    if (regions) schedule();
    // The row shows the event at once; the refetch that follows brings
    // new rows and undoes any older answer that was still in flight.
    if (list && data.id) { updateRow(list, data); schedule(); }
    if (detail && detail.dataset.callDetail === data.id) schedule();
  };
  for (const t of callEvents) src.addEventListener(t, onEvent);
  window.addEventListener("pagehide", () => src.close());
}

// updateRow shows a call's new status in its row; false when the list has
// no row for it.
function updateRow(list, call) {
  const row = list.querySelector(`tr[data-call="${CSS.escape(call.id)}"]`);
  if (!row) return false;
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
  return true;
}

// refreshFrom fetches the page again and swaps in what changed: the rows of
// the calls list (new ones at the top, on the first page), the call detail,
// and every [data-live-region].
async function refreshFrom(list, detail) {
  const res = await fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } });
  if (!res.ok) return;
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  if (list) mergeRows(list, doc);
  for (const region of document.querySelectorAll("[data-live-region]")) {
    const fresh = doc.querySelector(`[data-live-region="${CSS.escape(region.dataset.liveRegion)}"]`);
    if (fresh && fresh.innerHTML !== region.innerHTML) region.innerHTML = fresh.innerHTML;
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

// mergeRows brings the list to the fetched one: known rows keep their
// element and get their cells; on the first page, rows it lacks are
// inserted where the fetched list has them (new calls at the top) and rows
// that fell off the page go. Later pages only update their rows.
function mergeRows(list, doc) {
  const body = list.tBodies[0];
  const freshRows = doc.querySelectorAll("[data-live-calls] tr[data-call]");
  const firstPage = !new URLSearchParams(location.search).get("offset");
  const keep = new Set();
  let prev = null;
  for (const fresh of freshRows) {
    const id = fresh.dataset.call;
    keep.add(id);
    let row = body.querySelector(`tr[data-call="${CSS.escape(id)}"]`);
    if (row) {
      for (const f of ["status", "attempts", "duration"]) {
        const cell = row.querySelector(`[data-field="${f}"]`);
        const next = fresh.querySelector(`[data-field="${f}"]`);
        if (cell && next && cell.innerHTML !== next.innerHTML) cell.innerHTML = next.innerHTML;
      }
    } else if (firstPage) {
      row = document.importNode(fresh, true);
      row.classList.add("arrived");
      body.insertBefore(row, prev ? prev.nextSibling : body.firstChild);
    }
    if (row) prev = row;
  }
  if (!firstPage || freshRows.length === 0) return;
  for (const row of body.querySelectorAll("tr")) {
    if (!row.dataset.call || !keep.has(row.dataset.call)) row.remove();
  }
  const pager = doc.querySelector("nav.pager");
  const mine = document.querySelector("nav.pager");
  if (pager && mine && pager.innerHTML !== mine.innerHTML) mine.innerHTML = pager.innerHTML;
}

// liveConversations refreshes the conversations list or transcript when a
// conversation starts or ends ([data-live-region] parts are swapped).
function liveConversations() {
  const badge = document.querySelector("[data-live]");
  if (!window.EventSource) return;
  const src = new EventSource("/api/v2/events/stream?type=conversation.started&type=conversation.ended");
  src.addEventListener("open", () => { if (badge) { badge.hidden = false; badge.textContent = "live"; badge.classList.remove("off"); } });
  src.addEventListener("error", () => { if (badge && src.readyState !== EventSource.OPEN) { badge.textContent = "reconnecting"; badge.classList.add("off"); } });
  let pending = null;
  const refresh = () => {
    if (pending) return;
    pending = setTimeout(() => { pending = null; refreshFrom(null, null); }, 150);
  };
  src.addEventListener("conversation.started", refresh);
  src.addEventListener("conversation.ended", refresh);
}

// previewWidget hands the chat settings of the agent form to the widget's
// preview as they are edited.
function previewWidget(box) {
  const fields = { theme: "a-theme", primaryColor: "a-color", position: "a-position", greeting: "a-greeting", placeholder: "a-placeholder" };
  const send = () => {
    const detail = {};
    for (const [k, id] of Object.entries(fields)) {
      const el = document.getElementById(id);
      if (el) detail[k] = el.value;
    }
    box.dispatchEvent(new CustomEvent("agentd:preview", { detail }));
  };
  for (const id of Object.values(fields)) {
    const el = document.getElementById(id);
    if (el) { el.addEventListener("input", send); el.addEventListener("change", send); }
  }
}
