// agentd's voice session audio, off the main thread (AudioWorklet): the
// microphone down to 8 kHz 16-bit frames of 20 ms, and the agent's 8 kHz
// frames up to the context's rate. Served as /widget-audio.js to any
// origin (a worklet module is fetched with CORS), for the dashboard's
// Talk control and the widget's microphone.
const FRAME = 160;

class AgentdMic extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / 8000;
    this.pos = 0; this.acc = 0; this.n = 0;
    this.out = new Int16Array(FRAME); this.k = 0;
  }
  process(inputs) {
    const ch = inputs[0] && inputs[0][0];
    if (!ch) return true;
    for (let i = 0; i < ch.length; i++) {
      // A box average over each output sample's span: a cheap low-pass
      // before decimation.
      this.acc += ch[i]; this.n++; this.pos++;
      if (this.pos >= this.ratio) {
        this.pos -= this.ratio;
        const v = Math.round((this.acc / this.n) * 32767);
        this.acc = 0; this.n = 0;
        this.out[this.k++] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
        if (this.k === FRAME) {
          this.port.postMessage(this.out.buffer, [this.out.buffer]);
          this.out = new Int16Array(FRAME); this.k = 0;
        }
      }
    }
    return true;
  }
}

class AgentdPlay extends AudioWorkletProcessor {
  constructor() {
    super();
    this.q = []; this.cur = null; this.idx = 0; this.frac = 0;
    this.step = 8000 / sampleRate;
    this.waiting = true; // after silence, 60 ms are buffered before playing (jitter)
    this.port.onmessage = (e) => {
      if (e.data === "clear") { this.q = []; this.cur = null; this.waiting = true; return; }
      this.q.push(new Int16Array(e.data));
    };
  }
  process(_, outputs) {
    const out = outputs[0][0];
    if (this.waiting && this.q.length >= 3) this.waiting = false;
    for (let i = 0; i < out.length; i++) {
      if (!this.cur && !this.waiting) { this.cur = this.q.shift() || null; this.idx = 0; }
      if (!this.cur) { out[i] = 0; this.waiting = true; continue; }
      const a = this.cur[this.idx], b = this.idx + 1 < this.cur.length ? this.cur[this.idx + 1] : a;
      out[i] = (a + (b - a) * this.frac) / 32768;
      this.frac += this.step;
      while (this.frac >= 1) { this.frac -= 1; this.idx++; }
      if (this.idx >= this.cur.length) this.cur = null;
    }
    for (let c = 1; c < outputs[0].length; c++) outputs[0][c].set(out);
    return true;
  }
}

registerProcessor("agentd-mic", AgentdMic);
registerProcessor("agentd-play", AgentdPlay);
