// robotexec's own page of the live view. It speaks the Foxglove WebSocket
// protocol (foxglove.websocket.v1) to the server that served it: it
// subscribes to every channel to count each topic's rate, to the
// connection graph for the instances and their nodes, and plots a numeric
// field of a JSON topic; each callback's figures come from /stats.json.
"use strict";

const SUBPROTOCOL = "foxglove.websocket.v1";
const PLOT_WINDOW_MS = 10000; // the plot's time span
const PLOT_MAX_POINTS = 20000;
const RATE_TICKS = 3; // a topic's rate is over this many seconds

const $ = (id) => document.getElementById(id);
const decoder = new TextDecoder();

const state = {
  channels: new Map(), // channel id → {id, topic, encoding}
  subs: new Map(), // subscription id → channel
  nextSub: 1,
  counts: new Map(), // topic → messages since the last rate tick
  ticks: [], // the last ticks' {dt, counts}
  rates: new Map(), // topic → messages per second
  published: new Map(), // topic → ["node@instance", ...]
  subscribed: new Map(),
  plot: { topic: "", field: "", points: [], fields: [] },
};

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function connect() {
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/`;
  $("ws-url").textContent = url;
  const ws = new WebSocket(url, SUBPROTOCOL);
  ws.binaryType = "arraybuffer";
  ws.onmessage = (ev) => (typeof ev.data === "string" ? onJSON(ws, JSON.parse(ev.data)) : onBinary(ev.data));
  ws.onclose = () => {
    $("server").textContent = "disconnected; reconnecting…";
    state.channels.clear();
    state.subs.clear();
    setTimeout(connect, 2000);
  };
}

function onJSON(ws, m) {
  switch (m.op) {
    case "serverInfo":
      $("server").textContent = m.name;
      if (m.capabilities.includes("connectionGraph")) ws.send(JSON.stringify({ op: "subscribeConnectionGraph" }));
      break;
    case "status":
      $("status").textContent = m.message;
      break;
    case "advertise": {
      const subscriptions = [];
      for (const c of m.channels) {
        state.channels.set(c.id, { id: c.id, topic: c.topic, encoding: c.encoding });
        const id = state.nextSub++;
        state.subs.set(id, state.channels.get(c.id));
        subscriptions.push({ id, channelId: c.id });
      }
      ws.send(JSON.stringify({ op: "subscribe", subscriptions }));
      renderTopics();
      break;
    }
    case "unadvertise":
      for (const id of m.channelIds) state.channels.delete(id);
      for (const [sid, c] of state.subs) if (!state.channels.has(c.id)) state.subs.delete(sid);
      renderTopics();
      break;
    case "connectionGraphUpdate":
      for (const t of m.publishedTopics) state.published.set(t.name, t.publisherIds);
      for (const t of m.subscribedTopics) state.subscribed.set(t.name, t.subscriberIds);
      for (const t of m.removedTopics) {
        state.published.delete(t);
        state.subscribed.delete(t);
      }
      renderGraph();
      renderTopics();
      break;
  }
}

// onBinary handles a Message Data frame: opcode 1, subscription id
// (uint32), receive time in nanoseconds (uint64), payload; little-endian.
function onBinary(buf) {
  const v = new DataView(buf);
  if (v.byteLength < 13 || v.getUint8(0) !== 1) return;
  const c = state.subs.get(v.getUint32(1, true));
  if (!c) return;
  state.counts.set(c.topic, (state.counts.get(c.topic) || 0) + 1);
  if (c.encoding !== "json" || c.topic !== state.plot.topic) return;
  const ms = Number(v.getBigUint64(5, true) / 1000000n);
  let msg;
  try {
    msg = JSON.parse(decoder.decode(new Uint8Array(buf, 13)));
  } catch {
    return;
  }
  plotMessage(msg, ms);
}

// numericFields returns the paths of the numbers in v, in its order:
// "ax", "pose.x", "ranges.0".
function numericFields(v, prefix = "", out = []) {
  if (typeof v === "number") out.push(prefix);
  else if (v && typeof v === "object") {
    for (const [k, x] of Object.entries(v)) numericFields(x, prefix ? `${prefix}.${k}` : k, out);
  }
  return out;
}

function fieldOf(v, path) {
  for (const k of path.split(".")) v = v == null ? undefined : v[k];
  return v;
}

function plotMessage(msg, ms) {
  const p = state.plot;
  const fields = numericFields(msg);
  if (fields.join("\n") !== p.fields.join("\n")) {
    p.fields = fields;
    setOptions($("plot-field"), fields, p.field);
    if (!fields.includes(p.field)) selectField(fields[0] || "");
  }
  const y = fieldOf(msg, p.field);
  if (typeof y !== "number") return;
  p.points.push([ms, y]);
  if (p.points.length > PLOT_MAX_POINTS) p.points.splice(0, p.points.length - PLOT_MAX_POINTS);
  $("plot-value").textContent = `${p.field} = ${y.toPrecision(6)}`;
}

function selectField(f) {
  state.plot.field = f;
  state.plot.points = [];
  $("plot-field").value = f;
}

// setOptions makes values the options of sel, keeping the one chosen.
function setOptions(sel, values, chosen, first) {
  sel.replaceChildren();
  if (first) sel.append(new Option(first, ""));
  for (const v of values) sel.append(new Option(v, v));
  sel.value = values.includes(chosen) ? chosen : "";
}

function drawPlot() {
  const cv = $("plot");
  const g = cv.getContext("2d");
  const { width: w, height: h } = cv;
  const pad = { l: 70, r: 12, t: 12, b: 26 };
  g.fillStyle = "#fff";
  g.fillRect(0, 0, w, h);
  const p = state.plot;
  const end = p.points.length ? p.points[p.points.length - 1][0] : 0;
  const pts = p.points.filter(([t]) => t >= end - PLOT_WINDOW_MS);
  p.points = pts;
  cv.dataset.points = String(pts.length);
  cv.dataset.last = pts.length ? String(pts[pts.length - 1][1]) : "";
  g.strokeStyle = "#d9dde3";
  g.strokeRect(pad.l, pad.t, w - pad.l - pad.r, h - pad.t - pad.b);
  g.fillStyle = "#69707a";
  g.font = "12px system-ui, sans-serif";
  if (!pts.length) {
    g.fillText(p.topic ? "waiting for messages…" : "choose a topic and a field", pad.l + 10, pad.t + 20);
    return;
  }
  let [lo, hi] = [Infinity, -Infinity];
  for (const [, v] of pts) [lo, hi] = [Math.min(lo, v), Math.max(hi, v)];
  if (hi - lo < 1e-12) [lo, hi] = [lo - 1, hi + 1];
  const x = (t) => pad.l + ((t - (end - PLOT_WINDOW_MS)) / PLOT_WINDOW_MS) * (w - pad.l - pad.r);
  const y = (v) => pad.t + (1 - (v - lo) / (hi - lo)) * (h - pad.t - pad.b);
  g.fillText(hi.toPrecision(4), 4, pad.t + 10);
  g.fillText(lo.toPrecision(4), 4, h - pad.b);
  g.fillText(`-${PLOT_WINDOW_MS / 1000} s`, pad.l, h - 8);
  g.fillText(new Date(end).toLocaleTimeString(), w - pad.r - 70, h - 8);
  g.strokeStyle = "#2f6fdf";
  g.lineWidth = 1.5;
  g.beginPath();
  pts.forEach(([t, v], i) => (i ? g.lineTo(x(t), y(v)) : g.moveTo(x(t), y(v))));
  g.stroke();
}

function renderTopics() {
  const topics = new Set([...state.channels.values()].map((c) => c.topic));
  for (const t of state.published.keys()) topics.add(t);
  for (const t of state.subscribed.keys()) topics.add(t);
  const body = $("topics").tBodies[0];
  body.replaceChildren();
  for (const t of [...topics].sort()) {
    const enc = [...state.channels.values()].filter((c) => c.topic === t).map((c) => c.encoding);
    const rate = state.rates.get(t);
    const tr = el("tr");
    tr.dataset.topic = t;
    tr.append(el("td", t), el("td", enc.join(", ")), el("td", rate === undefined ? "" : `${rate.toFixed(1)} Hz`, "num"),
      el("td", (state.published.get(t) || []).join(", ")), el("td", (state.subscribed.get(t) || []).join(", ")));
    body.append(tr);
  }
  const json = [...new Set([...state.channels.values()].filter((c) => c.encoding === "json").map((c) => c.topic))].sort();
  const sel = $("plot-topic");
  if ([...sel.options].slice(1).map((o) => o.value).join("\n") !== json.join("\n")) {
    setOptions(sel, json, state.plot.topic, "(choose a JSON topic)");
  }
}

// renderGraph shows each instance with its nodes and their topics, from
// the connection graph's IDs, NODE@INSTANCE.
function renderGraph() {
  const instances = new Map(); // instance → node → {pub, sub}
  const add = (byTopic, kind) => {
    for (const [topic, ids] of byTopic) {
      for (const id of ids) {
        const at = id.indexOf("@");
        const [node, inst] = at < 0 ? [id, ""] : [id.slice(0, at), id.slice(at + 1)];
        if (!instances.has(inst)) instances.set(inst, new Map());
        const nodes = instances.get(inst);
        if (!nodes.has(node)) nodes.set(node, { pub: [], sub: [] });
        nodes.get(node)[kind].push(topic);
      }
    }
  };
  add(state.published, "pub");
  add(state.subscribed, "sub");
  const box = $("instances");
  box.replaceChildren();
  if (!instances.size) box.append(el("p", "No instance in the connection graph yet.", "note"));
  for (const inst of [...instances.keys()].sort()) {
    const div = el("div", undefined, "instance");
    div.dataset.instance = inst;
    const table = el("table");
    table.append(el("tr"));
    table.rows[0].append(el("th", "node"), el("th", "publishes"), el("th", "subscribes"));
    const nodes = instances.get(inst);
    for (const name of [...nodes.keys()].sort()) {
      const n = nodes.get(name);
      const tr = el("tr", undefined, "node");
      tr.dataset.node = name;
      tr.append(el("td", name), el("td", n.pub.sort().join(", ")), el("td", n.sub.sort().join(", ")));
      table.append(tr);
    }
    div.append(el("h3", inst || "(no instance)"), table);
    box.append(div);
  }
}

function fmtSeconds(s) {
  if (s >= 1) return `${s.toFixed(2)} s`;
  if (s >= 1e-3) return `${(s * 1e3).toFixed(2)} ms`;
  return `${(s * 1e6).toFixed(1)} µs`;
}

async function pollStats() {
  const note = $("callbacks-note");
  try {
    const r = await fetch("stats.json", { cache: "no-store" });
    if (r.status === 404) {
      note.textContent = "This process runs no callbacks (robotexec view).";
      return;
    }
    if (!r.ok) throw new Error(`${r.status} ${r.statusText}`);
    const { callbacks } = await r.json();
    const body = $("callbacks").tBodies[0];
    body.replaceChildren();
    for (const c of callbacks) {
      const tr = el("tr");
      tr.dataset.node = c.node;
      tr.append(el("td", c.node), el("td", c.callback), el("td", String(c.runs), "num"),
        el("td", fmtSeconds(c.dispatch_latency_p50_s), "num"), el("td", fmtSeconds(c.dispatch_latency_p99_s), "num"),
        el("td", String(c.dropped), "num"));
      body.append(tr);
    }
    note.textContent = "Dispatch latency: from a callback's trigger to its start.";
  } catch (e) {
    note.textContent = `stats.json: ${e.message}`;
  }
}

// tickRates computes each topic's rate over the last RATE_TICKS ticks.
function tickRates() {
  const now = performance.now();
  const ticks = state.ticks;
  ticks.push({ dt: (now - tickRates.last) / 1000, counts: state.counts });
  if (ticks.length > RATE_TICKS) ticks.shift();
  tickRates.last = now;
  state.counts = new Map();
  const span = ticks.reduce((s, k) => s + k.dt, 0);
  state.rates.clear();
  for (const c of state.channels.values()) state.rates.set(c.topic, 0);
  for (const k of ticks) for (const [t, n] of k.counts) state.rates.set(t, (state.rates.get(t) || 0) + n / span);
  renderTopics();
}

function main() {
  $("plot-topic").onchange = (e) => {
    state.plot.topic = e.target.value;
    state.plot.fields = [];
    setOptions($("plot-field"), [], "");
    selectField("");
  };
  $("plot-field").onchange = (e) => selectField(e.target.value);
  connect();
  tickRates.last = performance.now();
  setInterval(tickRates, 1000);
  pollStats();
  setInterval(pollStats, 1000);
  const frame = () => {
    drawPlot();
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

main();
