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
  const query = types.map((t) => "type=" + encodeURIComponent(t));
  let lastID = "";
  const add = (ev) => {
    let e;
    try { e = JSON.parse(ev.data); } catch { return; }
    if (!e.id || log.querySelector(`tr[data-event="${CSS.escape(e.id)}"]`)) return;
    const row = document.createElement("tr");
    row.dataset.event = e.id;
    row.className = "arrived";
    // The labels are the ones the page's own rows carry (cards on a phone).
    const cell = (text, code, label) => {
      const td = document.createElement("td");
      if (label) td.dataset.label = label;
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
    row.append(cell(new Date(e.createdAt).toLocaleString()), cell(e.type, true, "Type"), cell(JSON.stringify(e.data), "data", "Data"));
    log.tBodies[0].append(row);
  };
  const all = types.length ? types : (log.dataset.all || "").split(",").filter(Boolean);
  const handlers = {};
  for (const t of all) handlers[t] = (ev) => { if (ev.lastEventId) lastID = ev.lastEventId; add(ev); };
  // A reopened stream resumes after the last event shown.
  stream(() => "/api/v2/events/stream?" + query.concat(lastID ? ["after=" + encodeURIComponent(lastID)] : []).join("&"),
    handlers, (state) => { if (state !== "refused") showLive(badge, state); });
}

// showLive sets a page's live badge: "live", "reconnecting" or "auto-refresh".
function showLive(badge, state) {
  if (!badge) return;
  badge.hidden = false;
  badge.textContent = state;
  badge.classList.toggle("off", state === "reconnecting");
}

// stream follows the event stream at url() with one handler per event type
// and tells onState how it goes. EventSource reconnects by itself after a
// dropped connection, but gives up for good when a reconnect is answered
// with an error status (a restart, a moment of overload): then the stream
// is opened again after a few seconds, for as long as the page is open.
// onState gets "live", "reconnecting" and, if the very first attempt
// fails (a role without events:read), "refused"; then it stops.
function stream(url, handlers, onState) {
  let src = null, opened = false, closed = false;
  const open = () => {
    if (closed) return;
    src = new EventSource(url());
    for (const [t, h] of Object.entries(handlers)) src.addEventListener(t, h);
    src.addEventListener("open", () => { opened = true; onState("live"); });
    src.addEventListener("error", () => {
      if (!opened) { src.close(); closed = true; onState("refused"); return; }
      if (src.readyState === EventSource.OPEN) return;
      onState("reconnecting");
      if (src.readyState === EventSource.CLOSED) setTimeout(open, 3000 + Math.random() * 2000);
    });
  };
  open();
  window.addEventListener("pagehide", () => { closed = true; if (src) src.close(); });
}

const callEvents = ["call.queued", "call.ringing", "call.answered", "call.retry_scheduled", "call.ended", "call.result", "call.transcript", "batch.completed"];

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
  let running = false, timer = 0, last = 0, again = false;
  const refresh = () => {
    if (running) { again = true; return; }
    running = true;
    last = Date.now();
    // A refetch that fails (a restart, an overloaded moment) is tried
    // again: the events that asked for it will not come twice.
    refreshFrom(list, detail).then((ok) => { if (!ok) again = true; }, () => { again = true; }).finally(() => {
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
    showLive(badge, "auto-refresh");
    setInterval(refresh, 5000);
  };
  if (!window.EventSource) return poll();
  const onEvent = (ev) => {
    let data;
    try { data = JSON.parse(ev.data).data; } catch { return; }
    if (!data) return;
    if (regions) schedule();
    // The row shows the event at once; the refetch that follows brings
    // new rows and undoes any older answer that was still in flight.
    if (list && data.id) { updateRow(list, data); schedule(); }
    // call.transcript carries a line of a call (callId): its page shows it.
    if (detail && detail.dataset.callDetail === (data.id || data.callId)) schedule();
  };
  const handlers = {};
  for (const t of callEvents) handlers[t] = onEvent;
  let down = false;
  stream(() => "/api/v2/events/stream?" + callEvents.map((t) => "type=" + t).join("&"), handlers, (state) => {
    if (state === "refused") return poll();
    // Back from a gap: what changed meanwhile is fetched once.
    if (state === "live" && down) schedule();
    down = state === "reconnecting";
    showLive(badge, state);
  });
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
  if (!res.ok) return false;
  const doc = new DOMParser().parseFromString(await res.text(), "text/html");
  if (list) mergeRows(list, doc);
  for (const region of document.querySelectorAll("[data-live-region]")) {
    const fresh = doc.querySelector(`[data-live-region="${CSS.escape(region.dataset.liveRegion)}"]`);
    if (fresh && fresh.innerHTML !== region.innerHTML) region.innerHTML = fresh.innerHTML;
  }
  const fresh = doc.querySelector("[data-call-detail]");
  if (!detail || !fresh) return true;
  const live = detail.querySelector("[data-live]");
  detail.replaceChildren(...fresh.childNodes);
  const again = detail.querySelector("[data-live]");
  if (live && again) again.replaceWith(live);
  for (const form of detail.querySelectorAll("form[data-confirm]")) {
    form.addEventListener("submit", (e) => { if (!window.confirm(form.dataset.confirm)) e.preventDefault(); });
  }
  return true;
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
  let pending = null;
  const refresh = () => {
    if (pending) return;
    pending = setTimeout(() => { pending = null; refreshFrom(null, null); }, 150);
  };
  stream(() => "/api/v2/events/stream?type=conversation.started&type=conversation.ended",
    { "conversation.started": refresh, "conversation.ended": refresh }, (state) => {
      if (state === "live") refresh();
      if (state !== "refused") showLive(badge, state);
    });
}

// previewWidget hands the chat settings of the agent form to the widget's
// preview as they are edited.
function previewWidget(box) {
  const fields = { theme: "a-theme", primaryColor: "a-color", position: "a-position", greeting: "a-greeting", placeholder: "a-placeholder", title: "a-title", name: "a-name" };
  const send = () => {
    const detail = {};
    for (const [k, id] of Object.entries(fields)) {
      const el = document.getElementById(id);
      if (el) detail[k] = el.value;
    }
    detail.title = detail.title || detail.name; // the header, as the widget shows it
    box.dispatchEvent(new CustomEvent("agentd:preview", { detail }));
  };
  for (const id of Object.values(fields)) {
    const el = document.getElementById(id);
    if (el) { el.addEventListener("input", send); el.addEventListener("change", send); }
  }
}

// A file dropped on a form marked data-drop goes to its file input and
// the form is sent, as if chosen and submitted (keyboard users choose it).
for (const form of document.querySelectorAll("form[data-drop]")) {
  const input = form.querySelector("input[type=file]");
  if (!input) continue;
  form.addEventListener("dragover", (e) => { e.preventDefault(); form.classList.add("dragging"); });
  form.addEventListener("dragleave", () => form.classList.remove("dragging"));
  form.addEventListener("drop", (e) => {
    e.preventDefault();
    form.classList.remove("dragging");
    if (!e.dataTransfer || e.dataTransfer.files.length === 0) return;
    input.files = e.dataTransfer.files;
    form.requestSubmit();
  });
}
