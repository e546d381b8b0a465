// Watches and drives robotexec's live view with the reference client of
// the Foxglove WebSocket protocol, FoxgloveClient of @foxglove/ws-protocol,
// over the ws package, and prints what it saw as one JSON object for
// robotexec's Go tests to check.
//
//   node client.mjs URL PLAN
//
// PLAN is JSON: {"subscribe": TOPIC, "windowMs": N, "publish": TOPIC,
// "expect": TOPIC, "graph": [{"node": NAME, "topic": T}...],
// "params": {"get": [NAME...], "set": NAME}, "timeoutMs": N}.
// The client waits for TOPIC subscribe to be advertised, subscribes to it
// and counts the messages it receives and parses as JSON in windowMs from
// the first; then it advertises a channel on publish, publishes a probe on
// it until the probe comes back on expect (a node of the robot passed it
// on). With graph, it subscribes to the connection graph from the start,
// keeps it from the updates, and also waits until each node
// (NAME@INSTANCE) publishes on its topic T in it. With params, it gets
// the parameters get, then tries to set the parameter set to 0 and
// gets the answer and the status that refuses it. Then it ends.
import WebSocket from "ws";
import protocol from "@foxglove/ws-protocol";

const { FoxgloveClient } = protocol;
const [url, planJSON] = process.argv.slice(2);
const plan = JSON.parse(planJSON);
const out = { serverInfo: null, channels: [], statuses: [], window: null, probe: null, seen: null, graph: null, params: null };
const decoder = new TextDecoder();
const channels = new Map(); // topic → advertised channel (JSON first)
const advertised = []; // resolvers waiting for topics
const handlers = new Map(); // subscription id → message handler
let finished = false;

function finish(code, error) {
  if (finished) return;
  finished = true;
  if (error) out.error = error;
  console.log(JSON.stringify(out));
  process.exit(code);
}
setTimeout(() => finish(1, `timed out after ${plan.timeoutMs} ms`), plan.timeoutMs);

const client = new FoxgloveClient({ ws: new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
client.on("error", (e) => out.statuses.push({ client: String(e) }));
client.on("close", () => finish(1, "the server closed the connection"));
client.on("serverInfo", (info) => (out.serverInfo = info));
client.on("status", (s) => {
  if (out.params && s.message.startsWith("setParameters")) out.params.refusal = s.message;
  else out.statuses.push(s);
});
client.on("advertise", (chans) => {
  for (const c of chans) {
    out.channels.push({ id: c.id, topic: c.topic, encoding: c.encoding, schemaName: c.schemaName, schema: c.schema });
    if (!channels.has(c.topic) || c.encoding === "json") channels.set(c.topic, c);
  }
  for (const w of advertised.splice(0)) w();
});
client.on("message", ({ subscriptionId, timestamp, data }) => handlers.get(subscriptionId)?.(timestamp, data));

// The connection graph, kept from the updates: topic → IDs.
const graph = { published: {}, subscribed: {}, updates: 0 };
const graphWaiters = [];
client.on("connectionGraphUpdate", (u) => {
  graph.updates++;
  for (const t of u.publishedTopics) graph.published[t.name] = t.publisherIds;
  for (const t of u.subscribedTopics) graph.subscribed[t.name] = t.subscriberIds;
  for (const name of u.removedTopics) {
    delete graph.published[name];
    delete graph.subscribed[name];
  }
  for (const w of graphWaiters.splice(0)) w();
});

// graphHas resolves once each node publishes on its topic in the
// connection graph.
async function graphHas(wanted) {
  const publishes = ({ node, topic }) => (graph.published[topic] ?? []).some((id) => id.startsWith(`${node}@`));
  const has = () => wanted.every(publishes);
  while (!has()) await new Promise((resolve) => graphWaiters.push(resolve));
  out.graph = graph;
}

// Answers to getParameters and setParameters, by id.
const paramAnswers = new Map();
const paramWaiters = [];
client.on("parameterValues", ({ parameters, id }) => {
  paramAnswers.set(id, parameters);
  for (const w of paramWaiters.splice(0)) w();
});

async function paramAnswer(id) {
  while (!paramAnswers.has(id)) await new Promise((resolve) => paramWaiters.push(resolve));
  return paramAnswers.get(id);
}

// params gets the parameters names, then tries to set name to 0 and
// waits for the answer and the refusal.
async function params(names, name) {
  out.params = { got: null, afterSet: null, refusal: null };
  client.getParameters(names, "get");
  out.params.got = await paramAnswer("get");
  client.setParameters([{ name, value: 0 }], "set");
  out.params.afterSet = await paramAnswer("set");
  while (out.params.refusal === null) await new Promise((resolve) => setTimeout(resolve, 10));
}

// channel resolves with the channel of topic once advertised.
async function channel(topic) {
  while (!channels.has(topic)) await new Promise((resolve) => advertised.push(resolve));
  return channels.get(topic);
}

// watch subscribes to topic and counts, from the first message on, the
// messages of windowMs and those that parse as JSON objects.
async function watch(topic, windowMs) {
  const ch = await channel(topic);
  const w = { received: 0, parsed: 0, firstNs: null, lastNs: null, ordered: true };
  const id = client.subscribe(ch.id);
  await new Promise((resolve) => {
    handlers.set(id, (receiveTime, data) => {
      if (w.firstNs === null) {
        w.firstNs = receiveTime;
        setTimeout(resolve, windowMs);
      }
      if (w.lastNs !== null && receiveTime < w.lastNs) w.ordered = false;
      w.lastNs = receiveTime;
      w.received++;
      try {
        const v = JSON.parse(decoder.decode(data));
        if (typeof v === "object" && v !== null) w.parsed++;
      } catch {
        // counted as received only
      }
    });
  });
  handlers.delete(id);
  client.unsubscribe(id);
  return { ...w, firstNs: String(w.firstNs), lastNs: String(w.lastNs), wallNs: String(BigInt(Date.now()) * 1000000n) };
}

// roundTrip publishes a probe on topic until it comes back on expect.
async function roundTrip(topic, expect) {
  const probe = JSON.stringify({ probe: `view-${process.pid}-${Date.now()}` });
  out.probe = probe;
  const pub = client.advertise({ topic, encoding: "json", schemaName: "" });
  const bytes = new TextEncoder().encode(probe);
  const timer = setInterval(() => client.sendMessage(pub, bytes), 100);
  client.sendMessage(pub, bytes);
  const ch = await channel(expect);
  const id = client.subscribe(ch.id);
  out.seen = await new Promise((resolve) => {
    handlers.set(id, (_, data) => {
      const s = decoder.decode(data);
      if (s === probe) resolve(s);
    });
  });
  clearInterval(timer);
  client.unadvertise(pub);
}

client.on("open", async () => {
  try {
    if (plan.graph) client.subscribeConnectionGraph();
    out.window = await watch(plan.subscribe, plan.windowMs);
    await roundTrip(plan.publish, plan.expect);
    if (plan.graph) await graphHas(plan.graph);
    if (plan.params) await params(plan.params.get, plan.params.set);
    finish(0);
  } catch (e) {
    finish(1, String(e?.stack ?? e));
  }
});
