// What the benchmark scripts share: child processes stopped together, a time limit, waiting
// for a URL to answer, percentiles, a browser with its cookie.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const children = [];

/**
 * Starts a child process that `stopAll` stops. Its stderr is dropped, or with
 * BENCH_LOG=<file> appended there (to see why a figure is what it is).
 */
export function start(command, args, env) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const log = process.env.BENCH_LOG;
  child.stderr.on('data', (data) => {
    if (log) appendFileSync(log, `[${command} ${child.pid}] ${data}`);
  });
  children.push(child);
  return child;
}

export function stopAll() {
  for (const child of children) child.kill('SIGTERM');
}

/** Gives up (stopping every child) after `minutes`; returns the timer to clear. */
export function giveUpAfter(label, minutes) {
  return setTimeout(() => {
    console.error(`${label}: gave up after ${minutes} minutes`);
    stopAll();
    process.exit(1);
  }, minutes * 60_000);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (up to a minute) until `url` answers 2xx. */
export async function waitFor(url) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await sleep(200);
  }
  throw new Error(`${url} did not come up`);
}

export const percentile = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

/** A browser: its own cookie, kept from the first Set-Cookie. */
export class Browser {
  constructor(base) {
    this.base = base;
    this.cookie = '';
  }
  async request(path, init = {}) {
    const headers = { ...(init.headers ?? {}) };
    if (this.cookie) headers.cookie = this.cookie;
    const response = await fetch(this.base + path, { ...init, headers, redirect: 'manual' });
    const set = response.headers.get('set-cookie');
    if (set) this.cookie = set.split(';')[0];
    return response;
  }
  post(path, form) {
    return this.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
  }
}

/** The events of an NDJSON answer stream (`/api/ask`), parsed, one object per line. */
export async function* ndjson(body) {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (line.trim()) yield JSON.parse(line);
    }
  }
}
