// The Talk control of an agent's page: a voice session with the agent
// over a WebSocket (GET data-talk), the microphone and the agent's voice
// through /widget-audio.js, a live transcript with each answer's latency,
// mute and hang up.
(() => {
  "use strict";
  const root = document.querySelector("[data-talk]");
  if (!root) return;
  const $ = (s) => root.querySelector(s);
  const start = $("[data-talk-start]"), mute = $("[data-talk-mute]"), hang = $("[data-talk-hangup]");
  const status = $("[data-talk-status]"), log = $("[data-talk-log]");
  let ws = null, ctx = null, stream = null, play = null, muted = false, lastAgent = null;

  const setStatus = (t) => { status.textContent = t; };
  const line = (role, text) => {
    const li = document.createElement("li");
    li.className = "talk-" + role;
    const who = document.createElement("strong");
    who.textContent = role === "agent" ? "Agent" : role === "user" ? "You" : "Tool";
    li.append(who, " ", text);
    log.append(li);
    li.scrollIntoView({ block: "nearest" });
    return li;
  };

  const stop = (why) => {
    if (ws) { try { ws.close(); } catch (_) { /* closed */ } ws = null; }
    if (stream) stream.getTracks().forEach((t) => t.stop());
    if (ctx) ctx.close();
    stream = ctx = play = null;
    start.disabled = false; start.textContent = "Start talking"; mute.disabled = hang.disabled = true;
    mute.setAttribute("aria-pressed", "false"); mute.textContent = "Mute"; muted = false;
    setStatus(why);
    start.focus();
  };

  const onMessage = (e) => {
    if (typeof e.data !== "string") { if (play) play.port.postMessage(e.data, [e.data]); return; }
    let m;
    try { m = JSON.parse(e.data); } catch (_) { return; }
    switch (m.type) {
      case "ready":
        root.dataset.callId = m.callId;
        setStatus("Connected: speak when you are ready");
        break;
      case "line": {
        const li = line(m.role, m.text);
        if (m.interrupted) { const i = document.createElement("em"); i.textContent = " (interrupted)"; li.append(i); }
        if (m.role === "agent") lastAgent = li;
        break;
      }
      case "latency":
        if (lastAgent && m.turn) {
          const t = m.turn, s = document.createElement("span");
          s.className = "talk-latency";
          s.textContent = "voice-to-voice " + t.voiceToVoiceMs + " ms";
          s.title = "endpointing " + t.endpointingMs + " ms, speech-to-text " + t.transcribeMs + " ms, model first token " +
            t.modelFirstTokenMs + " ms, speech first byte " + t.speechFirstByteMs + " ms";
          lastAgent.append(" ", s);
        }
        break;
      case "clear":
        if (play) play.port.postMessage("clear");
        break;
      case "end":
        stop(m.reason ? "Call ended: " + m.reason : "Call ended");
        break;
    }
  };

  start.addEventListener("click", async () => {
    start.disabled = true; start.textContent = "Talking…";
    log.replaceChildren();
    setStatus("Asking for the microphone…");
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true } });
      ctx = new AudioContext();
      await ctx.audioWorklet.addModule("/widget-audio.js");
    } catch (err) {
      stop("No microphone: " + (err && err.message ? err.message : err));
      return;
    }
    const mic = new AudioWorkletNode(ctx, "agentd-mic");
    play = new AudioWorkletNode(ctx, "agentd-play", { outputChannelCount: [1] });
    const level = ctx.createAnalyser();
    level.fftSize = 2048;
    play.connect(level);
    level.connect(ctx.destination);
    root.agentdAnalyser = level; // the agent's voice as played (tests, a level meter)
    ctx.createMediaStreamSource(stream).connect(mic);
    setStatus("Connecting…");
    ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + root.dataset.talk);
    ws.binaryType = "arraybuffer";
    mic.port.onmessage = (e) => { if (ws && ws.readyState === 1 && !muted) ws.send(e.data); };
    ws.onmessage = onMessage;
    ws.onopen = () => { mute.disabled = hang.disabled = false; hang.focus(); };
    ws.onclose = () => { if (ws) stop("Disconnected"); };
  });

  mute.addEventListener("click", () => {
    muted = !muted;
    mute.setAttribute("aria-pressed", String(muted));
    mute.textContent = muted ? "Unmute" : "Mute";
    if (ws && ws.readyState === 1) ws.send(JSON.stringify({ type: "mute", muted }));
    setStatus(muted ? "Muted" : "Connected");
  });

  hang.addEventListener("click", () => {
    if (ws && ws.readyState === 1) ws.send(JSON.stringify({ type: "hangup" }));
    stop("You hung up");
  });
})();
