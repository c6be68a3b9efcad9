// The chaos pass of `make bench-load`: faults while an answer is being written, each on
// services of its own on free loopback ports, never the machine's PostgreSQL or Redis:
//  - PostgreSQL stopped mid-answer and started again five seconds later (initdb, pg_ctl);
//  - Redis killed mid-answer and started again;
//  - the SQLite file's disk full: the server's file-size limit (RLIMIT_FSIZE, with SIGXFSZ
//    ignored, so every write past it fails as on a full disk) lowered mid-answer to one
//    kilobyte and raised again;
//  - SearXNG killed during the answer's search, then started again;
//  - the model killed mid-stream, then started again.
// For each it prints how the answer ended: completed, degraded (it ended with a notice that
// says what went wrong) or lost (it never ended, or it ended as kept and is not there once
// the service is back); whether what was stored before the fault is all still there; and
// whether the next question works once the service is back. It stops by itself (4 minutes).
import { execFileSync } from 'node:child_process';
import { chownSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { start, stopAll, giveUpAfter, sleep, waitFor, Browser, ndjson } from './harness.mjs';

const bin = process.env.CITED_BIN;
if (!bin) {
  console.error('set CITED_BIN (make bench-load does)');
  process.exit(2);
}
const site = process.env.CITED_SITE_ROOT ?? 'target/site';
const ports = { fake: 3968, searxng: 3967, postgres: 3966, redis: 3965, networked: 3964, embedded: 3963 };
const giveUp = giveUpAfter('bench-chaos', 4);
const pgBin = process.env.PG_BIN ?? findPostgres();

function findPostgres() {
  const out = execFileSync('sh', ['-c', 'ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1']).toString().trim();
  if (!out) throw new Error('no PostgreSQL server binaries (Debian postgresql) found; set PG_BIN');
  return out;
}

/** Runs a PostgreSQL tool as the `postgres` user when we are root (initdb refuses root). */
function pg(tool, args) {
  const command = join(pgBin, tool);
  const root = process.getuid?.() === 0;
  return execFileSync(root ? 'runuser' : command, root ? ['-u', 'postgres', '--', command, ...args] : args, {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
}

const pgData = mkdtempSync(join(tmpdir(), 'cited-chaos-pg-'));
if (process.getuid?.() === 0) {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
  chownSync(pgData, uid, gid);
}
const postgres = {
  init: () => pg('initdb', ['-D', pgData, '-A', 'trust', '-U', 'postgres', '--no-sync']),
  start: () => pg('pg_ctl', ['-D', pgData, '-l', join(pgData, 'log'), '-w', '-o',
    `-p ${ports.postgres} -k ${pgData} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']),
  stop: () => pg('pg_ctl', ['-D', pgData, '-m', 'fast', '-w', 'stop']),
};

let redis;
const startRedis = () => {
  redis = start('redis-server', ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
};
let searxng;
const startSearxng = () => {
  searxng = start('node', ['searxng-e2e.mjs'], { SEARXNG_PORT: String(ports.searxng), FAKE_URL: `http://127.0.0.1:${ports.fake}` });
};
let model;
const startModel = () => {
  model = start('node', ['fake-services.mjs'], { FAKE_PORT: String(ports.fake) });
};

const common = {
  CITED_SITE_ROOT: site,
  CITED_SEARXNG_URL: `http://127.0.0.1:${ports.searxng}`,
  CITED_LLM_BASE_URL: `http://127.0.0.1:${ports.fake}/v1`,
  CITED_LLM_MODEL: 'fake-model',
  CITED_TITLES: 'question',
  CITED_RELATED: 'off',
  CITED_ALIGN_DEADLINE_SECS: '0',
  CITED_IMAGES: 'off',
  CITED_LOG: 'warn',
};

/** Asks and reads the whole stream: how it ended, its text, its notices. */
async function ask(browser, question) {
  const result = { done: false, failed: null, answer: '', notices: [] };
  let response;
  try {
    response = await browser.post('/api/ask', { question });
  } catch (error) {
    result.failed = `no response: ${error.message}`;
    return result;
  }
  if (response.status !== 200) {
    result.failed = `status ${response.status}: ${await response.text()}`;
    return result;
  }
  try {
    for await (const event of ndjson(response.body)) {
      if (event.rewrite) result.answer = event.rewrite.answer;
      if (event.notice) result.notices.push((event.notice.notice ?? event.notice).text);
      if (event.failed) result.failed = event.failed.message ?? 'failed';
      if (event.done) result.done = true;
    }
  } catch (error) {
    result.failed ??= `stream broke: ${error.message}`;
  }
  return result;
}

/** The browser's current conversation as stored: its questions and answers. */
async function stored(browser) {
  const history = await browser.post('/api/history', { query: '' });
  if (history.status !== 200) return null;
  const { conversations } = await history.json();
  if (!conversations.length) return [];
  const opened = await browser.post('/api/open_conversation', { id: conversations[0].id });
  if (opened.status !== 200) return null;
  const view = await opened.json();
  return (view?.exchanges ?? []).map((e) => ({ question: e.question, answer: e.answer }));
}

async function healthy(url) {
  await waitFor(url);
}

/**
 * One fault: an answer kept before it, then an answer with the fault injected one second
 * in and the service back five seconds later; then the checks.
 */
async function scenario(label, base, fault) {
  const browser = new Browser(base);
  const marker = `kept-${Math.random().toString(36).slice(2, 8)}`;
  const before = await ask(browser, `echo: ${marker}`);
  if (!before.done) throw new Error(`${label}: the answer before the fault did not end: ${before.failed}`);
  // The fake engines find sources for Tokio: a notice below is the fault's, not a search's.
  const answering = ask(browser, `chaos Tokio runtime, ${label}${fault.question ?? ''}`);
  await sleep(fault.after ?? 1000);
  await fault.inject();
  await sleep(5000);
  await fault.recover();
  const during = await answering;
  const kept = await stored(browser);
  const notSaved = during.notices.some((text) => text.includes('不会被保存') || text.includes('will not be kept'));
  let outcome;
  if (!during.done && !during.failed) outcome = 'lost';
  else if (during.done && !during.failed && during.notices.length === 0) outcome = 'completed';
  else outcome = 'degraded';
  const keptDuring = kept?.some((e) => e.question.startsWith('chaos') && e.answer.length > 0);
  // An answer that ended without saying it is not kept must be there.
  if (outcome !== 'lost' && !notSaved && !keptDuring) outcome = 'lost';
  const intact = Boolean(kept?.some((e) => e.answer.includes(marker)));
  // Works: it ends, and it is kept.
  const next = await ask(browser, `echo: after-${marker}`);
  const keptNext = (await stored(browser))?.some((e) => e.answer.includes(`after-${marker}`));
  const works = next.done && !next.failed && next.answer.includes(`after-${marker}`) && keptNext;
  console.log(`  ${label}: the answer ${outcome}${during.notices.length ? ` (${during.notices.join(' / ')})` : ''}${during.failed ? ` [${during.failed}]` : ''}; stored before: ${intact ? 'all there' : 'LOST'}; the next question: ${works ? 'works' : `FAILS (${next.failed ?? next.notices.join(' / ')})`}`);
  return { outcome, intact, works };
}

async function main() {
  postgres.init();
  postgres.start();
  startRedis();
  startModel();
  await healthy(`http://127.0.0.1:${ports.fake}/health`);
  startSearxng();
  await healthy(`http://127.0.0.1:${ports.searxng}/healthz`);

  const networked = start(bin, ['serve'], {
    ...common,
    CITED_ADDR: `127.0.0.1:${ports.networked}`,
    CITED_DATABASE_URL: `postgres://postgres@127.0.0.1:${ports.postgres}/postgres`,
    CITED_REDIS_URL: `redis://127.0.0.1:${ports.redis}/0`,
  });
  const sqliteDir = mkdtempSync(join(tmpdir(), 'cited-chaos-sqlite-'));
  // SIGXFSZ ignored (inherited through exec): a write past the file-size limit fails with
  // EFBIG, as on a full disk, instead of killing the server.
  const embedded = start('bash', ['-c', `trap '' XFSZ; exec "$0" serve`, bin], {
    ...common,
    CITED_ADDR: `127.0.0.1:${ports.embedded}`,
    CITED_DATABASE_URL: `sqlite:${join(sqliteDir, 'cited.db')}`,
  });
  const networkedBase = `http://127.0.0.1:${ports.networked}`;
  const embeddedBase = `http://127.0.0.1:${ports.embedded}`;
  await healthy(`${networkedBase}/healthz`);
  await healthy(`${embeddedBase}/healthz`);
  void networked;

  console.log('\nfaults while answering (services of its own on loopback):');
  const results = [];
  results.push(await scenario('PostgreSQL restarted', networkedBase, {
    inject: () => postgres.stop(),
    recover: () => postgres.start(),
  }));
  results.push(await scenario('Redis restarted', networkedBase, {
    inject: () => redis.kill('SIGKILL'),
    recover: async () => {
      startRedis();
      await sleep(500);
    },
  }));
  results.push(await scenario('SQLite disk full', embeddedBase, {
    inject: () => execFileSync('prlimit', ['--pid', String(embedded.pid), '--fsize=1024:unlimited']),
    recover: () => execFileSync('prlimit', ['--pid', String(embedded.pid), '--fsize=unlimited:unlimited']),
  }));
  results.push(await scenario('SearXNG killed', networkedBase, {
    // The fake engines hold this search for 2.5 s: SearXNG dies while it waits.
    question: ' stalled',
    after: 800,
    inject: () => searxng.kill('SIGKILL'),
    recover: async () => {
      startSearxng();
      await healthy(`http://127.0.0.1:${ports.searxng}/healthz`);
    },
  }));
  results.push(await scenario('the model killed', networkedBase, {
    after: 1500,
    inject: () => model.kill('SIGKILL'),
    recover: async () => {
      startModel();
      await healthy(`http://127.0.0.1:${ports.fake}/health`);
    },
  }));
  const count = (outcome) => results.filter((r) => r.outcome === outcome).length;
  console.log(`  answers: ${count('completed')} completed, ${count('degraded')} degraded, ${count('lost')} lost; stored data lost in ${results.filter((r) => !r.intact).length}; the next question failed after ${results.filter((r) => !r.works).length}`);
  const clean = count('lost') === 0 && results.every((r) => r.intact && r.works);
  clearTimeout(giveUp);
  stopAll();
  try {
    postgres.stop();
  } catch {}
  console.log(clean ? '\nbench-chaos: all checks held' : '\nbench-chaos: SOME CHECKS FAILED');
  process.exit(clean ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  stopAll();
  try {
    postgres.stop();
  } catch {}
  process.exit(1);
});
