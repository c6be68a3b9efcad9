import * as os from 'node:os';
import { defineConfig, devices } from '@playwright/test';

// Debian's chromium: Playwright never downloads a browser here.
const launchOptions = {
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
};

const port = process.env.E2E_PORT ?? '3999';
// A fresh SQLite database per server and run, never the user's own.
const runId = `${process.pid}-${Date.now()}`;
const database = (name: string) => `sqlite:${os.tmpdir()}/cited-e2e-${runId}-${name}.db`;
export const offlinePort = process.env.E2E_OFFLINE_PORT ?? '3996';
export const offlineURL = `http://127.0.0.1:${offlinePort}`;
const baseURL = `http://127.0.0.1:${port}`;

export default defineConfig({
  testDir: './tests',
  timeout: 30_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: 'list',
  globalTeardown: './teardown.ts',
  use: { baseURL, headless: true, trace: 'off', locale: 'zh-CN' },
  // The server under test (the freshly built debug binary, path from make e2e), a real
  // SearXNG, and a scripted model (the one thing that cannot run here).
  webServer: [
    {
      command: 'node fake-services.mjs',
      url: 'http://127.0.0.1:3998/health',
      reuseExistingServer: false,
      env: { FAKE_PORT: '3998' },
    },
    {
      command: 'node searxng-e2e.mjs',
      url: 'http://127.0.0.1:3997/healthz',
      reuseExistingServer: false,
      timeout: 60_000,
      stderr: 'ignore',
      env: { SEARXNG_PORT: '3997', FAKE_URL: 'http://127.0.0.1:3998' },
    },
    {
      command: process.env.CITED_BIN ?? '../target/debug/cited',
      url: `${baseURL}/healthz`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'ignore',
      stderr: 'pipe',
      env: {
        CITED_ADDR: `127.0.0.1:${port}`,
        CITED_SITE_ROOT: process.env.CITED_SITE_ROOT ?? '../target/site',
        CITED_SEARXNG_URL: 'http://127.0.0.1:3997',
        CITED_LLM_BASE_URL: 'http://127.0.0.1:3998/v1',
        CITED_LLM_MODEL: 'fake-model',
        CITED_DATABASE_URL: database('main'),
        // The scripted model names only a conversation whose question asks for a name
        // (起个名); citations are checked offline (the model's verdicts are tested in Rust).
        CITED_TITLES: 'model',
        CITED_CHECK: 'lexical',
        // The fake services stand in for the web: thumbnails and favicons come from them.
        CITED_FETCH_ALLOW: '127.0.0.1:3998',
        CITED_LOG: 'cited=info,tower_http=warn',
      },
    },
    {
      // Out of the box: no SearXNG (nothing listens on 3995) and no model. Answers come
      // from the project's own docs through the knowledge base and the extractive answerer.
      command: process.env.CITED_BIN ?? '../target/debug/cited',
      url: `${offlineURL}/healthz`,
      reuseExistingServer: false,
      timeout: 60_000,
      stdout: 'ignore',
      stderr: 'pipe',
      env: {
        CITED_ADDR: `127.0.0.1:${offlinePort}`,
        CITED_SITE_ROOT: process.env.CITED_SITE_ROOT ?? '../target/site',
        CITED_SEARXNG_URL: 'http://127.0.0.1:3995',
        CITED_LLM_BASE_URL: '',
        OPENAI_BASE_URL: '',
        OPENAI_API_KEY: '',
        CITED_KNOWLEDGE_DIR: '../README.md,../ARCHITECTURE.md,../searxng/README.md,../docs',
        CITED_DATABASE_URL: database('offline'),
        CITED_LOG: 'cited=info,tower_http=warn',
      },
    },
  ],
  projects: [
    {
      name: 'desktop',
      use: { ...devices['Desktop Chrome'], launchOptions },
      testIgnore: /.*\.(nojs|phone)\.spec\.ts/,
    },
    {
      // A 360 px wide touch phone.
      name: 'phone',
      use: {
        ...devices['Pixel 7'],
        viewport: { width: 360, height: 740 },
        launchOptions,
      },
      testIgnore: /.*\.(nojs|desktop)\.spec\.ts/,
    },
    {
      name: 'nojs',
      use: { ...devices['Desktop Chrome'], javaScriptEnabled: false, launchOptions },
      testMatch: /.*\.nojs\.spec\.ts/,
    },
  ],
});
