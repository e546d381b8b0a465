// Loads robotexec's own page of the live view in headless Chromium with
// puppeteer-core, and prints what it saw as one JSON object for
// robotexec's Go tests to check.
//
//   node page.mjs CHROMIUM URL PLAN
//
// PLAN is JSON: {"nodes": [NAME...], "topic": TOPIC, "outDir": DIR,
// "timeoutMs": N} (the bound of each wait). The script waits until the page shows every node of
// nodes in its graph, then chooses topic in the plot's topic list and the
// first of the numeric fields the page offers for it, waits for points
// on the plot, takes a screenshot (DIR/page-1.png), another 1 s later
// (DIR/page-2.png), and reports the canvas's pixels (as a PNG data URL's
// hash) and its last plotted value at each, the nodes shown and the
// callbacks' rows. Any failure is reported in "error" with exit code 1.
import { createHash } from "node:crypto";
import path from "node:path";
import puppeteer from "puppeteer-core";

const [chromium, url, planJSON] = process.argv.slice(2);
const plan = JSON.parse(planJSON);
const out = { nodes: [], fields: [], field: null, shots: [], callbacks: [], console: [], error: null };
let browser;
let finished = false;
let step = "starting Chromium"; // what the script is waiting for

async function finish(code, error) {
  if (finished) return;
  finished = true;
  if (error) out.error = `${step}: ${error?.message || error}`;
  console.log(JSON.stringify(out));
  await browser?.close().catch(() => {});
  process.exit(code);
}
setTimeout(() => finish(1, `timed out after ${plan.timeoutMs} ms`), plan.timeoutMs + 5000);

// shot screenshots the page to file and reads the plot's state.
async function shot(page, file) {
  await page.screenshot({ path: file, fullPage: true });
  const plot = await page.$eval("#plot", (c) => ({ url: c.toDataURL("image/png"), points: Number(c.dataset.points), last: c.dataset.last }));
  return { file, canvas: createHash("sha256").update(plot.url).digest("hex"), points: plot.points, last: plot.last };
}

async function main() {
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage();
  page.setDefaultTimeout(plan.timeoutMs);
  page.on("console", (m) => out.console.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => out.console.push(`pageerror: ${e.message}`));
  await page.setViewport({ width: 1280, height: 900 });
  step = "loading the page";
  await page.goto(url, { waitUntil: "load" });

  step = `waiting for the nodes ${plan.nodes.join(", ")} in the page's graph`;
  const shown = plan.nodes.map((n) => `#instances tr.node[data-node="${n}"]`).join(", ");
  await page.waitForFunction((sel, n) => document.querySelectorAll(sel).length >= n, { polling: 100 }, shown, plan.nodes.length);
  out.nodes = await page.$$eval("#instances tr.node", (rows) => rows.map((r) => r.dataset.node));

  step = `waiting for ${plan.topic} in the plot's topics`;
  await page.waitForSelector(`#plot-topic option[value="${plan.topic}"]`);
  await page.select("#plot-topic", plan.topic);
  step = `waiting for the numeric fields of ${plan.topic}`;
  await page.waitForSelector("#plot-field option");
  out.fields = await page.$$eval("#plot-field option", (os) => os.map((o) => o.value));
  out.field = out.fields[0];
  await page.select("#plot-field", out.field);
  step = `waiting for 10 points of ${out.field} on the plot`;
  await page.waitForFunction(() => Number(document.getElementById("plot").dataset.points) >= 10, { polling: 100 });
  step = "waiting for the callbacks' figures";
  await page.waitForSelector("#callbacks tbody tr");
  out.callbacks = await page.$$eval("#callbacks tbody tr", (rows) => rows.map((r) => [...r.cells].map((c) => c.textContent)));

  step = "taking the screenshots";
  out.shots.push(await shot(page, path.join(plan.outDir, "page-1.png")));
  await new Promise((r) => setTimeout(r, 1000));
  out.shots.push(await shot(page, path.join(plan.outDir, "page-2.png")));
  await finish(0);
}

main().catch((e) => finish(1, e));
