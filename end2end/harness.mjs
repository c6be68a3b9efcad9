// What the benchmark scripts share: child processes stopped together, a time limit, waiting
// for a URL to answer, percentiles.
import { spawn } from 'node:child_process';

const children = [];

/** Starts a child process (stderr read and dropped) that `stopAll` stops. */
export function start(command, args, env) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', () => {});
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
