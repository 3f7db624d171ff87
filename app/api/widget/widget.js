/* agentd chat widget: <script src="https://AGENTD/widget.js" data-agent="AGENT_ID" async></script>
 * One file, no dependency, no build step. Everything lives in a shadow root
 * so the page's CSS and ours never meet; styles are a constructed
 * stylesheet and model output is only ever put in text nodes, so the
 * widget works under a strict CSP that allows the agentd origin. */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || !script.src) return;
  var agent = script.getAttribute("data-agent") || "";
  var base = new URL(script.src).origin;
  var storeKey = "agentd-widget:" + agent;
  // data-preview="#selector": the dashboard's preview, drawn inside that
  // element from data-settings and updated by "agentd:preview" events;
  // it talks to no endpoint.
  var preview = script.getAttribute("data-preview");

  var CSS = [
    ":host{all:initial;position:fixed;z-index:2147483000;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;",
    "--p:#2563eb;--bg:#fff;--fg:#111827;--muted:#6b7280;--bubble:#f3f4f6;--line:#e5e7eb}",
    ":host(.dark){--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--bubble:#1f2937;--line:#374151}",
    "@media (prefers-color-scheme:dark){:host(.auto){--bg:#111827;--fg:#f9fafb;--muted:#9ca3af;--bubble:#1f2937;--line:#374151}}",
    ":host(.preview){position:absolute}:host(.preview) .panel{height:540px;max-height:540px}",
    ":host(.bottom-right){right:16px;bottom:16px}:host(.bottom-left){left:16px;bottom:16px}",
    ":host(.top-right){right:16px;top:16px}:host(.top-left){left:16px;top:16px}",
    "*{box-sizing:border-box}",
    ".launch,.panel{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;letter-spacing:normal;text-transform:none}",
    ".launch{width:56px;height:56px;border-radius:50%;border:0;background:var(--p);color:#fff;cursor:pointer;",
    "box-shadow:0 4px 14px rgba(0,0,0,.25);display:flex;align-items:center;justify-content:center}",
    ".launch svg{width:26px;height:26px;fill:currentColor}",
    "button:focus-visible,textarea:focus-visible,a:focus-visible{outline:2px solid var(--p);outline-offset:2px}",
    ".panel{position:absolute;width:370px;height:560px;max-height:calc(100vh - 100px);display:flex;flex-direction:column;",
    "background:var(--bg);color:var(--fg);border:1px solid var(--line);border-radius:14px;overflow:hidden;box-shadow:0 10px 40px rgba(0,0,0,.25)}",
    ":host(.bottom-right) .panel{right:0;bottom:68px}:host(.bottom-left) .panel{left:0;bottom:68px}",
    ":host(.top-right) .panel{right:0;top:68px}:host(.top-left) .panel{left:0;top:68px}",
    ".panel[hidden]{display:none}",
    "header{display:flex;align-items:center;gap:6px;padding:10px 12px;background:var(--p);color:#fff}",
    "header h2{flex:1;margin:0;font-size:15px;font-weight:600}",
    "header button{background:transparent;border:1px solid rgba(255,255,255,.5);color:#fff;border-radius:8px;padding:4px 8px;cursor:pointer;font:inherit;font-size:12px}",
    ".log{flex:1;overflow-y:auto;padding:12px;display:flex;flex-direction:column;gap:8px}",
    ".msg{max-width:85%;padding:8px 11px;border-radius:12px;background:var(--bubble);word-wrap:break-word;overflow-wrap:anywhere}",
    ".msg.user{align-self:flex-end;background:var(--p);color:#fff}",
    ".msg p{margin:0 0 6px}.msg p:last-child{margin-bottom:0}.msg ul,.msg ol{margin:4px 0;padding-left:20px}",
    ".msg pre{white-space:pre-wrap;background:rgba(0,0,0,.06);padding:6px;border-radius:6px;margin:4px 0}",
    ".msg code{font-family:ui-monospace,monospace;font-size:12.5px}",
    ".msg a{color:inherit;text-decoration:underline}",
    ".src{display:flex;flex-wrap:wrap;gap:4px;margin-top:6px;font-size:11.5px;color:var(--muted)}",
    ".src a,.src span{border:1px solid var(--line);border-radius:10px;padding:1px 7px;color:var(--muted);max-width:100%;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}",
    ".note{align-self:center;font-size:12px;color:var(--muted);text-align:center}",
    ".note.err{color:#b91c1c}",
    "form{display:flex;gap:6px;padding:10px;border-top:1px solid var(--line)}",
    "textarea{flex:1;resize:none;height:40px;max-height:120px;padding:9px 10px;border:1px solid var(--line);border-radius:10px;",
    "background:var(--bg);color:var(--fg);font:inherit}",
    "form button{border:0;border-radius:10px;background:var(--p);color:#fff;padding:0 14px;cursor:pointer;font:inherit}",
    "button:disabled{opacity:.55;cursor:default}",
    "form .mic{background:transparent;color:var(--p);border:1px solid var(--line);padding:0 10px}.mic svg{width:18px;height:18px;fill:currentColor;vertical-align:middle}",
    "form .mic[aria-pressed=true]{background:#dc2626;border-color:#dc2626;color:#fff}.mic[hidden]{display:none}",
    ".sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}",
    // Phones (upright or on their side): the open panel is the whole screen
    // (these selectors outrank the position rules above) and the launcher
    // steps aside; the header's close button closes it.
    "@media (max-width:480px),(max-height:480px){:host(:not(.preview)) .panel.panel{position:fixed;inset:0;width:auto;height:auto;max-height:none;border:0;border-radius:0}",
    ":host(.open:not(.preview)) .launch{display:none}header button{padding:8px 10px}}"
  ].join("");

  // el makes an element; text is always a text node, never markup.
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function safeURL(u) {
    try {
      var x = new URL(u);
      return x.protocol === "http:" || x.protocol === "https:" ? x.href : null;
    } catch (_) {
      return null;
    }
  }

  function link(href, text) {
    var a = el("a", "", text);
    a.href = href;
    a.target = "_blank";
    a.rel = "noopener noreferrer";
    return a;
  }

  // inline renders `code`, **bold**, *italic*, [text](url) and bare URLs;
  // a link that is not http(s) stays as the text it was written as.
  var INLINE = /`([^`\n]+)`|\*\*([^*\n]+)\*\*|\[([^\]\n]+)\]\(([^)\s]+)\)|\*([^*\s][^*\n]*)\*|(https?:\/\/[^\s<>()]+)/;
  function inline(parent, s) {
    var m;
    while ((m = INLINE.exec(s))) {
      if (m.index > 0) parent.appendChild(document.createTextNode(s.slice(0, m.index)));
      if (m[1] != null) parent.appendChild(el("code", "", m[1]));
      else if (m[2] != null) inline(parent.appendChild(el("strong")), m[2]);
      else if (m[3] != null) {
        var h = safeURL(m[4]);
        parent.appendChild(h ? link(h, m[3]) : document.createTextNode(m[0]));
      } else if (m[5] != null) inline(parent.appendChild(el("em")), m[5]);
      else {
        var u = safeURL(m[6]);
        parent.appendChild(u ? link(u, m[6]) : document.createTextNode(m[6]));
      }
      s = s.slice(m.index + m[0].length);
    }
    if (s) parent.appendChild(document.createTextNode(s));
  }

  // markdown renders paragraphs, lists, headings and code blocks.
  function markdown(parent, text) {
    parent.textContent = "";
    var lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    var i = 0;
    while (i < lines.length) {
      var line = lines[i];
      if (/^\s*```/.test(line)) {
        var code = [];
        for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i]);
        i++;
        parent.appendChild(el("pre")).appendChild(el("code", "", code.join("\n")));
        continue;
      }
      if (!line.trim()) { i++; continue; }
      var item = /^\s*([-*+]|\d+[.)])\s+/;
      if (item.test(line)) {
        var list = parent.appendChild(el(/^\s*\d/.test(line) ? "ol" : "ul"));
        for (; i < lines.length && item.test(lines[i]); i++) inline(list.appendChild(el("li")), lines[i].replace(item, ""));
        continue;
      }
      var hd = /^#{1,6}\s+(.*)$/.exec(line);
      if (hd) {
        inline(parent.appendChild(el("p")).appendChild(el("strong")), hd[1]);
        i++;
        continue;
      }
      var p = parent.appendChild(el("p"));
      for (var first = true; i < lines.length && lines[i].trim() && !item.test(lines[i]) && !/^\s*```/.test(lines[i]) && !/^#{1,6}\s/.test(lines[i]); i++) {
        if (!first) p.appendChild(el("br"));
        inline(p, lines[i]);
        first = false;
      }
    }
  }

  // The UI.
  var host = el("div");
  host.setAttribute("data-agentd-widget", agent);
  host.className = "light bottom-right";
  var root = host.attachShadow({ mode: "open" });
  try {
    var sheet = new CSSStyleSheet();
    sheet.replaceSync(CSS);
    root.adoptedStyleSheets = [sheet];
  } catch (_) {
    root.appendChild(el("style", "", CSS)); // older browsers
  }
  var launch = el("button", "launch");
  launch.type = "button";
  launch.setAttribute("aria-label", "Open chat");
  launch.setAttribute("aria-expanded", "false");
  launch.setAttribute("aria-controls", "agentd-panel");
  var svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", "0 0 24 24");
  svg.setAttribute("aria-hidden", "true");
  var path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  // The launcher's icon: a speech bubble while closed, a cross while open.
  var BUBBLE = "M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z";
  var CROSS = "M6.4 5 12 10.6 17.6 5 19 6.4 13.4 12 19 17.6 17.6 19 12 13.4 6.4 19 5 17.6 10.6 12 5 6.4z";
  path.setAttribute("d", BUBBLE);
  svg.appendChild(path);
  launch.appendChild(svg);

  var panel = el("div", "panel");
  panel.id = "agentd-panel";
  panel.hidden = true;
  panel.setAttribute("role", "dialog");
  panel.setAttribute("aria-label", "Chat");
  var head = panel.appendChild(el("header"));
  var title = head.appendChild(el("h2", "", "Chat"));
  var fresh = head.appendChild(el("button", "new", "New conversation"));
  fresh.type = "button";
  var close = head.appendChild(el("button", "close", "✕"));
  close.type = "button";
  close.setAttribute("aria-label", "Close chat");
  var log = panel.appendChild(el("div", "log"));
  log.setAttribute("role", "log");
  log.setAttribute("aria-live", "polite");
  log.setAttribute("aria-relevant", "additions");
  var form = panel.appendChild(el("form"));
  var label = form.appendChild(el("label", "sr", "Message"));
  label.htmlFor = "agentd-input";
  var input = form.appendChild(el("textarea"));
  input.id = "agentd-input";
  input.rows = 1;
  input.maxLength = 4000;
  var mic = form.appendChild(el("button", "mic"));
  mic.type = "button";
  mic.hidden = true;
  mic.setAttribute("aria-pressed", "false");
  mic.setAttribute("aria-label", "Talk by voice");
  mic.title = "Talk by voice";
  var msvg = mic.appendChild(document.createElementNS(svg.namespaceURI, "svg"));
  msvg.setAttribute("viewBox", "0 0 24 24");
  msvg.setAttribute("aria-hidden", "true");
  msvg.appendChild(document.createElementNS(svg.namespaceURI, "path")).setAttribute("d",
    "M12 14a3 3 0 0 0 3-3V5a3 3 0 0 0-6 0v6a3 3 0 0 0 3 3zm5-3a5 5 0 0 1-10 0H5a7 7 0 0 0 6 6.9V21h2v-3.1a7 7 0 0 0 6-6.9h-2z");
  var send = form.appendChild(el("button", "", "Send"));
  send.type = "submit";
  root.appendChild(panel);
  root.appendChild(launch);

  var st = { token: "", conv: "", greeting: "", busy: false, off: false };
  try {
    var saved = JSON.parse(localStorage.getItem(storeKey) || "null");
    if (saved && saved.token && saved.conv) { st.token = saved.token; st.conv = saved.conv; }
  } catch (_) {}

  function save() {
    try {
      if (st.token) localStorage.setItem(storeKey, JSON.stringify({ token: st.token, conv: st.conv }));
      else localStorage.removeItem(storeKey);
    } catch (_) {}
  }

  function apply(s) {
    if (!s) return;
    host.className = (s.theme === "dark" || s.theme === "auto" ? s.theme : "light") + " " + (s.position || "bottom-right") + (preview ? " preview" : "") + (panel.hidden ? "" : " open");
    title.textContent = s.title || "Chat";
    panel.setAttribute("aria-label", title.textContent);
    if (/^#[0-9a-fA-F]{6}$/.test(s.primaryColor || "")) host.style.setProperty("--p", s.primaryColor);
    input.placeholder = s.placeholder || "";
    st.greeting = s.greeting || "";
    mic.hidden = !s.voiceEnabled;
  }

  function note(text, err) {
    var n = log.appendChild(el("div", "note" + (err ? " err" : ""), text));
    log.scrollTop = log.scrollHeight;
    return n;
  }

  function sources(box, cites) {
    if (!cites || !cites.length) return;
    var s = box.appendChild(el("div", "src"));
    s.appendChild(el("span", "sr", "Sources:"));
    cites.forEach(function (c) {
      var title = c.title || c.externalId || "Source";
      var h = safeURL(c.externalId || "");
      var e = s.appendChild(h ? link(h, title) : el("span", "", title));
      e.className = "cite";
      if (c.text) e.title = c.text.slice(0, 300);
    });
  }

  function bubble(role, content, cites) {
    var b = log.appendChild(el("div", "msg " + (role === "user" ? "user" : "bot")));
    var body = b.appendChild(el("div", "body"));
    if (role === "user") body.textContent = content;
    else markdown(body, content);
    sources(b, cites);
    log.scrollTop = log.scrollHeight;
    return b;
  }

  function unavailable() {
    st.off = true;
    log.textContent = "";
    note("Chat is unavailable right now.", true);
    input.disabled = send.disabled = fresh.disabled = true;
  }

  function greet() {
    log.textContent = "";
    if (st.greeting) bubble("assistant", st.greeting).className += " greeting";
  }

  function api(method, p, body) {
    var h = {};
    if (st.token) h.Authorization = "Bearer " + st.token;
    if (body) h["Content-Type"] = "application/json";
    return fetch(base + p, { method: method, headers: h, body: body ? JSON.stringify(body) : undefined, credentials: "omit" });
  }

  function problem(res) {
    return res.json().then(function (j) { return (j && j.error && j.error.message) || "Something went wrong."; }, function () { return "Something went wrong."; })
      .then(function (m) {
        if (res.status === 429) {
          var after = +res.headers.get("Retry-After") || 0;
          if (after > 0 && after < 120) m += " (try again in " + after + " s)";
        }
        return m;
      });
  }

  // init shows the saved conversation, or the agent's look and greeting.
  function init() {
    var first = st.token
      ? api("GET", "/api/public/chat/sessions/" + encodeURIComponent(st.conv) + "/messages").then(function (res) {
          if (!res.ok) { st.token = st.conv = ""; save(); return null; }
          return res.json().then(function (j) {
            var d = j.data;
            st.token = d.token;
            save();
            apply(d.settings);
            greet();
            d.messages.forEach(function (m) { bubble(m.role, m.content, m.citations); });
            return true;
          });
        })
      : Promise.resolve(null);
    first.then(function (ok) {
      if (ok) return;
      return api("GET", "/api/public/chat/" + encodeURIComponent(agent) + "/config").then(function (res) {
        if (!res.ok) return unavailable();
        return res.json().then(function (j) { apply(j.data); greet(); });
      }, function (e) {
        // A refused origin gets no CORS header, so the browser shows the
        // page only a bare network error: say what to check, once.
        console.warn("agentd widget: " + base + " refused the chat on this page's origin " + location.origin +
          " (or is unreachable). Add " + location.origin + " to the agent's allowedDomains.");
        throw e;
      });
    }).catch(unavailable);
  }

  function session() {
    if (st.token) return Promise.resolve();
    return api("POST", "/api/public/chat/" + encodeURIComponent(agent) + "/sessions", {}).then(function (res) {
      if (!res.ok) return problem(res).then(function (m) { throw new Error(m); });
      return res.json().then(function (j) { st.token = j.data.token; st.conv = j.data.conversationId; save(); });
    });
  }

  // stream reads the server-sent events of one answer.
  function stream(res, out) {
    var reader = res.body.getReader(), dec = new TextDecoder(), buf = "", text = "", done = false;
    var body = out.querySelector(".body");
    function handle(block) {
      var ev = "message", data = "";
      block.split("\n").forEach(function (l) {
        if (l.indexOf("event:") === 0) ev = l.slice(6).trim();
        else if (l.indexOf("data:") === 0) data += l.slice(5).trim();
      });
      var d = data ? JSON.parse(data) : {};
      if (ev === "delta") { text += d.content || ""; markdown(body, text); }
      else if (ev === "done") { done = true; markdown(body, d.message.content); sources(out, d.message.citations); }
      else if (ev === "error") throw new Error((d.error && d.error.message) || "The answer failed.");
      log.scrollTop = log.scrollHeight;
    }
    function pump() {
      return reader.read().then(function (r) {
        if (r.value) buf += dec.decode(r.value, { stream: true });
        var i;
        while ((i = buf.indexOf("\n\n")) >= 0) { handle(buf.slice(0, i)); buf = buf.slice(i + 2); }
        if (r.done) { if (!done) throw new Error("The answer was cut off."); return; }
        return pump();
      });
    }
    return pump();
  }

  function ask(text, retried) {
    return session().then(function () {
      return api("POST", "/api/public/chat/sessions/" + encodeURIComponent(st.conv) + "/messages", { content: text });
    }).then(function (res) {
      // An expired token (401) or an ended conversation (409): start a new one.
      if ((res.status === 401 || res.status === 409) && !retried) { st.token = st.conv = ""; save(); return ask(text, true); }
      if (!res.ok) return problem(res).then(function (m) { throw new Error(m); });
      var out = bubble("assistant", "");
      out.setAttribute("aria-busy", "true");
      return stream(res, out).then(function () { out.removeAttribute("aria-busy"); }, function (e) {
        out.removeAttribute("aria-busy");
        throw e;
      });
    });
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = input.value.trim();
    if (!text || st.busy || st.off) return;
    st.busy = true;
    send.disabled = true;
    input.value = "";
    bubble("user", text);
    ask(text).catch(function (err) { note(err.message || "Something went wrong.", true); }).then(function () {
      st.busy = false;
      send.disabled = false;
      input.focus();
    });
  });
  input.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit ? form.requestSubmit() : send.click();
    }
  });

  // Voice: a WebSocket to the conversation's voice session (8 kHz PCM
  // frames both ways, JSON controls), the audio through /widget-audio.js;
  // what both sides say appears in the chat.
  var vc = null;
  function voiceOff(why) {
    if (!vc) return;
    var v = vc;
    vc = null;
    try { v.ws.close(); } catch (_) {}
    if (v.stream) v.stream.getTracks().forEach(function (t) { t.stop(); });
    v.ctx.close();
    mic.setAttribute("aria-pressed", "false");
    mic.setAttribute("aria-label", "Talk by voice");
    input.disabled = send.disabled = false;
    if (why) note(why, !v.ready || why.indexOf(":") > 0);
  }
  function voiceOn() {
    var ctx = new AudioContext(), v = { ctx: ctx, ready: false };
    vc = v;
    mic.setAttribute("aria-pressed", "true");
    mic.setAttribute("aria-label", "Stop talking");
    input.disabled = send.disabled = true;
    v.note = note("Connecting the microphone…");
    session().then(function () {
      return navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
    }).then(function (stream) {
      v.stream = stream;
      return ctx.audioWorklet.addModule(base + "/widget-audio.js");
    }).then(function () {
      if (vc !== v) return;
      var m = new AudioWorkletNode(ctx, "agentd-mic"), play = new AudioWorkletNode(ctx, "agentd-play", { outputChannelCount: [1] });
      var level = ctx.createAnalyser();
      play.connect(level);
      level.connect(ctx.destination);
      host.agentdAnalyser = level; // the agent's voice as played
      ctx.createMediaStreamSource(v.stream).connect(m);
      var ws = v.ws = new WebSocket(base.replace(/^http/, "ws") + "/api/public/chat/sessions/" + encodeURIComponent(st.conv) + "/voice?token=" + encodeURIComponent(st.token));
      ws.binaryType = "arraybuffer";
      m.port.onmessage = function (e) { if (v.ready && ws.readyState === 1) ws.send(e.data); };
      ws.onmessage = function (e) {
        if (typeof e.data !== "string") return play.port.postMessage(e.data, [e.data]);
        var d = JSON.parse(e.data);
        if (d.type === "ready") { v.ready = true; v.note.textContent = "Voice on: speak now. Press the microphone to stop."; }
        else if (d.type === "line" && d.role !== "tool") bubble(d.role === "user" ? "user" : "assistant", d.text);
        else if (d.type === "clear") play.port.postMessage("clear");
        else if (d.type === "end") voiceOff(d.reason ? "Voice ended: " + d.reason : "Voice ended.");
      };
      ws.onclose = function () { if (vc === v) voiceOff(v.ready ? "Voice ended." : "Voice is unavailable right now."); };
      setTimeout(function () {
        if (vc !== v || v.ready) return;
        // A page's CSP must allow the socket: an http source does not match ws.
        console.warn("agentd widget: no voice session from " + base + "; a Content-Security-Policy needs " + base.replace(/^http/, "ws") + " in connect-src.");
        voiceOff("Voice is unavailable right now.");
      }, 10000);
    }).catch(function (e) { if (vc === v) voiceOff("Voice is unavailable: " + (e && e.message || e)); });
  }
  mic.addEventListener("click", function () {
    if (vc) {
      if (vc.ws && vc.ws.readyState === 1) vc.ws.send('{"type":"hangup"}');
      voiceOff("Voice ended.");
      mic.focus();
    } else if (!st.busy && !st.off) voiceOn();
  });

  function toggle(open) {
    panel.hidden = !open;
    host.classList.toggle("open", open);
    path.setAttribute("d", open ? CROSS : BUBBLE);
    launch.setAttribute("aria-expanded", String(open));
    launch.setAttribute("aria-label", open ? "Close chat" : "Open chat");
    if (open) (st.off ? close : input).focus();
    else launch.focus();
  }
  launch.addEventListener("click", function () { toggle(panel.hidden); });
  close.addEventListener("click", function () { toggle(false); });
  fresh.addEventListener("click", function () {
    if (st.busy) return;
    st.token = st.conv = "";
    save();
    greet();
    input.focus();
  });
  // Escape closes; Tab stays inside the open panel (focus trap).
  panel.addEventListener("keydown", function (e) {
    if (e.key === "Escape") { e.preventDefault(); toggle(false); return; }
    if (e.key !== "Tab") return;
    var f = Array.prototype.filter.call(panel.querySelectorAll("button,textarea,a[href]"), function (x) { return !x.disabled && !x.hidden; });
    if (!f.length) return;
    var a = root.activeElement, i = f.indexOf(a);
    if (e.shiftKey && i <= 0) { e.preventDefault(); f[f.length - 1].focus(); }
    else if (!e.shiftKey && i === f.length - 1) { e.preventDefault(); f[0].focus(); }
  });

  function mount() {
    if (preview) {
      var box = document.querySelector(preview);
      if (!box) return;
      box.appendChild(host);
      var show = function (s) {
        apply(s);
        greet();
        note("Preview: messages are not sent.");
      };
      try { show(JSON.parse(script.getAttribute("data-settings") || "{}")); } catch (_) { show({}); }
      box.addEventListener("agentd:preview", function (e) { show(e.detail || {}); });
      st.off = true;
      send.disabled = true;
      panel.hidden = false;
      path.setAttribute("d", CROSS);
      launch.setAttribute("aria-expanded", "true");
      return;
    }
    document.body.appendChild(host);
    init();
  }
  if (document.body) mount();
  else document.addEventListener("DOMContentLoaded", mount);
})();
