// Scale-out figures (`make bench-scale`): answers per second and the first token's p99,
// for one release instance and for two on the same machine sharing PostgreSQL and Redis,
// with the scripted model of fake-services.mjs (`echo:` answers). The same questions, the
// same concurrency, each user its own browser; the two instances get the users in turn.
// Everything runs on 127.0.0.1 and gives up after 8 minutes.
import { execFileSync } from 'node:child_process';
import { start, stopAll, giveUpAfter, waitFor, percentile } from './harness.mjs';

const bin = process.env.CITED_BIN;
if (!bin) {
  console.error('set CITED_BIN (make bench-scale does)');
  process.exit(2);
}
const site = process.env.CITED_SITE_ROOT ?? 'target/site';
const database = process.env.CITED_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const redis = process.env.CITED_BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/8';
const USERS = Number(process.env.SCALE_USERS ?? 2000);
const WIDTH = Number(process.env.SCALE_WIDTH ?? 64);
const ports = { fake: 3968, a: 3966, b: 3967 };
const giveUp = giveUpAfter('bench-scale', 8);

function cited(port) {
  return start(bin, ['serve'], {
    CITED_ADDR: `127.0.0.1:${port}`,
    CITED_SITE_ROOT: site,
    CITED_LLM_BASE_URL: `http://127.0.0.1:${ports.fake}/v1`,
    CITED_LLM_MODEL: 'fake-model',
    CITED_SOURCES: 'knowledge',
    CITED_TITLES: 'question',
    // Figures comparable with earlier runs: no follow-up questions (a second model call).
    CITED_RELATED: 'off',
    CITED_ALIGN_DEADLINE_SECS: '0',
    CITED_DATABASE_URL: database,
    CITED_REDIS_URL: redis,
    CITED_MAX_ANSWERS: '64',
    CITED_MAX_MODEL_CALLS: '64',
    CITED_RATE_ASKS_PER_MIN: '100000',
    CITED_RATE_REQUESTS_PER_MIN: '10000000',
    CITED_LOG: 'warn',
  });
}

/** One user on `base`: asks, reads the answer to its end. */
async function user(base, marker) {
  const began = performance.now();
  const response = await fetch(base + '/api/ask', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ question: `echo: ${marker}` }).toString(),
  });
  if (response.status !== 200) return { error: `ask ${response.status}` };
  const decoder = new TextDecoder();
  let buffer = '';
  let firstTokenMs;
  let done = false;
  for await (const chunk of response.body) {
    buffer += decoder.decode(chunk, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (!line.trim()) continue;
      // One key names the event: {"rendered":{...}}.
      const event = JSON.parse(line);
      if (event.rendered) firstTokenMs ??= performance.now() - began;
      if (event.done) done = true;
    }
  }
  return done ? { firstTokenMs } : { error: 'no done event' };
}

async function run(label, bases) {
  let next = 0;
  const results = [];
  const began = performance.now();
  const worker = async () => {
    while (next < USERS) {
      const i = next++;
      results[i] = await user(bases[i % bases.length], `scale-${label}-${i}-${Date.now()}`);
    }
  };
  await Promise.all(Array.from({ length: WIDTH }, worker));
  const seconds = (performance.now() - began) / 1000;
  const errors = results.filter((r) => r.error);
  const kinds = {};
  for (const r of errors) kinds[r.error] = (kinds[r.error] ?? 0) + 1;
  if (errors.length) console.log(`  errors: ${JSON.stringify(kinds)}`);
  const firsts = results.filter((r) => r.firstTokenMs !== undefined).map((r) => r.firstTokenMs);
  console.log(
    `${label}: ${USERS} answers (${WIDTH} at once) in ${seconds.toFixed(1)} s: ` +
      `${(USERS / seconds).toFixed(1)} answers/s, first token p50 ${percentile(firsts, 50).toFixed(0)} ms, ` +
      `p99 ${percentile(firsts, 99).toFixed(0)} ms, errors ${errors.length}`,
  );
  return errors.length;
}

async function main() {
  try {
    execFileSync('redis-cli', ['-u', redis, 'FLUSHDB'], { stdio: 'ignore' });
  } catch {}
  start('node', ['fake-services.mjs'], { FAKE_PORT: String(ports.fake) });
  await waitFor(`http://127.0.0.1:${ports.fake}/health`);
  const a = `http://127.0.0.1:${ports.a}`;
  const b = `http://127.0.0.1:${ports.b}`;
  const first = cited(ports.a);
  await waitFor(`${a}/healthz`);
  let errors = await run('one instance ', [a]);
  cited(ports.b);
  await waitFor(`${b}/healthz`);
  errors += await run('two instances', [a, b]);
  first.kill('SIGTERM');
  stopAll();
  clearTimeout(giveUp);
  console.log(`bench-scale: ${errors === 0 ? 'no errors' : `${errors} errors`}`);
  process.exit(errors === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  stopAll();
  process.exit(1);
});
