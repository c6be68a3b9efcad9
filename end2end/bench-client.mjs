// The client's figures, in Debian's chromium against a release build (`make bench-client`):
//  - what a first visit transfers, compressed, per kind of asset;
//  - the time from navigation to a hydrated page (median of 5 visits);
//  - streaming the long scripted answer (fake-services.mjs, longAnswer: about 12.6 KB in
//    about 1,800 chunks): the stream's bytes on the wire (gzipped) and decoded, main-thread
//    script time against the stream's wall time, and how long after the last byte of the
//    stream the answer's final text was on screen; on this machine's CPU and with CDP's
//    CPU throttling at ×4;
//  - DOM nodes on the page after the answer.
//
// It starts its own scripted model, SearXNG and cited (CITED_BIN, CITED_SITE_ROOT) on
// loopback ports, stops them when done, and gives up after 10 minutes.
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';

const bin = process.env.CITED_BIN;
const site = process.env.CITED_SITE_ROOT;
if (!bin || !site) {
  console.error('set CITED_BIN and CITED_SITE_ROOT (make bench-client does)');
  process.exit(2);
}
const ports = { fake: 3988, searxng: 3987, cited: 3986 };
const base = `http://127.0.0.1:${ports.cited}`;
const children = [];

function start(command, args, env) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'ignore', 'inherit'] });
  children.push(child);
  return child;
}

function stopAll() {
  for (const child of children) child.kill('SIGTERM');
}

const giveUp = setTimeout(() => {
  console.error('bench-client: gave up after 10 minutes');
  stopAll();
  process.exit(1);
}, 10 * 60_000);

async function waitFor(url) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`${url} did not come up`);
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** One first visit: bytes on the wire per kind of asset, and the time to hydration. */
async function visit(browser) {
  const context = await browser.newContext({ locale: 'zh-CN' });
  const page = await context.newPage();
  await page.addInitScript(() => {
    new MutationObserver(() => {
      const app = document.querySelector('.app');
      if (app?.getAttribute('data-hydrated') === 'true' && !window.__hydratedAt) {
        window.__hydratedAt = performance.now();
      }
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-hydrated'] });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const requests = new Map();
  cdp.on('Network.responseReceived', ({ requestId, response }) => {
    requests.set(requestId, { url: response.url, encoding: response.headers['content-encoding'] ?? response.headers['Content-Encoding'] ?? '', bytes: 0 });
  });
  cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
    const request = requests.get(requestId);
    if (request) request.bytes = encodedDataLength;
  });
  await page.goto(base);
  await page.waitForFunction(() => window.__hydratedAt !== undefined, null, { timeout: 60_000 });
  const hydratedMs = await page.evaluate(() => window.__hydratedAt);
  const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
  await page.waitForTimeout(300);
  const kinds = {};
  for (const { url, bytes, encoding } of requests.values()) {
    const path = new URL(url).pathname;
    const kind = path === '/' ? 'html' : path.endsWith('.wasm') ? 'wasm' : path.endsWith('.js') ? 'js' : path.endsWith('.css') ? 'css' : 'other';
    kinds[kind] ??= { bytes: 0, encodings: new Set() };
    kinds[kind].bytes += bytes;
    kinds[kind].encodings.add(encoding || 'identity');
  }
  await context.close();
  return { hydratedMs, kinds, nodes };
}

/** Streams the long answer; `rate` is CDP's CPU throttling (1: none). */
async function stream(browser, rate) {
  const context = await browser.newContext({ locale: 'zh-CN' });
  const page = await context.newPage();
  await page.addInitScript(() => {
    // The wall-clock time of the last change inside the newest answer's rendered text.
    new MutationObserver((records) => {
      const bodies = document.querySelectorAll('.answer-body');
      const body = bodies[bodies.length - 1];
      if (body && records.some((record) => body.contains(record.target))) {
        window.__lastAnswerChange = performance.timeOrigin + performance.now();
      }
    }).observe(document, { subtree: true, childList: true, characterData: true });
  });
  await page.goto(base);
  await page.locator('.app[data-hydrated="true"]').waitFor();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Performance.enable');
  await cdp.send('Network.enable');
  await cdp.send('Emulation.setCPUThrottlingRate', { rate });
  let ask = null;
  let offset = 0; // wall-clock seconds minus CDP's monotonic seconds
  let firstData = null;
  let finished = null;
  let bytes = 0;
  cdp.on('Network.requestWillBeSent', ({ requestId, request, timestamp, wallTime }) => {
    if (request.url.includes('/api/ask')) {
      ask = requestId;
      offset = wallTime - timestamp;
    }
  });
  cdp.on('Network.dataReceived', ({ requestId, timestamp, dataLength }) => {
    if (requestId === ask) {
      firstData ??= timestamp;
      bytes += dataLength;
    }
  });
  let wire = 0;
  cdp.on('Network.loadingFinished', ({ requestId, timestamp, encodedDataLength }) => {
    if (requestId === ask) {
      finished = timestamp;
      wire = encodedDataLength;
    }
  });
  const metric = async (name) => (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === name)?.value ?? 0;
  const scriptBefore = await metric('ScriptDuration');
  const taskBefore = await metric('TaskDuration');
  const box = page.getByRole('textbox', { name: '提问' });
  await box.fill('Tokio 长回答');
  await box.press('Enter');
  await page.locator('.answer[aria-busy="false"]').last().waitFor({ timeout: 180_000 });
  while (finished === null) await new Promise((resolve) => setTimeout(resolve, 50));
  await page.waitForTimeout(1000);
  const script = (await metric('ScriptDuration')) - scriptBefore;
  const task = (await metric('TaskDuration')) - taskBefore;
  const wall = finished - firstData;
  const lastChange = await page.evaluate(() => window.__lastAnswerChange);
  const lagMs = lastChange - (finished + offset) * 1000;
  const text = await page.locator('.answer-body').last().innerText();
  const nodes = await page.evaluate(() => document.getElementsByTagName('*').length);
  await context.close();
  return { rate, script, task, wall, lagMs, bytes, wire, textChars: text.length, nodes };
}

try {
  const database = `sqlite:${join(tmpdir(), `cited-bench-client-${process.pid}.db`)}`;
  start('node', ['fake-services.mjs'], { FAKE_PORT: String(ports.fake) });
  start('node', ['searxng-e2e.mjs'], { SEARXNG_PORT: String(ports.searxng), FAKE_URL: `http://127.0.0.1:${ports.fake}` });
  start(bin, [], {
    CITED_ADDR: `127.0.0.1:${ports.cited}`,
    CITED_SITE_ROOT: site,
    CITED_SEARXNG_URL: `http://127.0.0.1:${ports.searxng}`,
    CITED_LLM_BASE_URL: `http://127.0.0.1:${ports.fake}/v1`,
    CITED_LLM_MODEL: 'fake-model',
    CITED_DATABASE_URL: database,
    CITED_TITLES: 'question',
    // The figures are the answer's stream: the citation check that follows it (more events
    // after Done) is left out, so "the last byte" is the answer's last.
    CITED_ALIGN_DEADLINE_SECS: '0',
    CITED_LOG: 'cited=warn',
  });
  await waitFor(`http://127.0.0.1:${ports.fake}/health`);
  await waitFor(`http://127.0.0.1:${ports.searxng}/healthz`);
  await waitFor(`${base}/healthz`);
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
  });
  const visits = [];
  for (let i = 0; i < 5; i++) visits.push(await visit(browser));
  console.log('First visit, bytes on the wire (headers included), cache disabled:');
  for (const [kind, { bytes, encodings }] of Object.entries(visits[0].kinds)) {
    console.log(`  ${kind.padEnd(6)} ${String(bytes).padStart(9)}  ${[...encodings].join(',')}`);
  }
  const total = Object.values(visits[0].kinds).reduce((sum, { bytes }) => sum + bytes, 0);
  const assets = ['wasm', 'js'].reduce((sum, kind) => sum + (visits[0].kinds[kind]?.bytes ?? 0), 0);
  console.log(`  total  ${String(total).padStart(9)}   (wasm + js: ${assets})`);
  console.log(`Time to hydrated: median ${median(visits.map((v) => v.hydratedMs)).toFixed(0)} ms of ${visits.map((v) => v.hydratedMs.toFixed(0)).join(', ')}`);
  console.log(`DOM nodes, empty page: ${visits[0].nodes}`);
  for (const rate of [1, 4]) {
    const run = await stream(browser, rate);
    console.log(`Streaming, CPU ${rate === 1 ? 'unthrottled' : `throttled ×${rate}`}: ${run.wire} bytes on the wire (${run.bytes} decoded) over ${run.wall.toFixed(2)} s; `
      + `script ${run.script.toFixed(2)} s (${((run.script / run.wall) * 100).toFixed(1)} % of the stream), all main-thread tasks ${run.task.toFixed(2)} s; `
      + `final text on screen ${run.lagMs.toFixed(0)} ms after the last byte; ${run.textChars} characters shown; DOM nodes ${run.nodes}`);
  }
  await browser.close();
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  clearTimeout(giveUp);
  stopAll();
}
