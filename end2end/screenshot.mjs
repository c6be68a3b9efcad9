// Regenerates docs/screenshot*.png from a running cited (out of the box: no SearXNG, no
// model, so the first run shows its card and answers come from the knowledge base):
//   BASE_URL=http://127.0.0.1:3000 node end2end/screenshot.mjs
// (Chinese text needs a CJK font: Debian's fonts-noto-cjk.)
import { chromium } from 'playwright';

const baseURL = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
const desktop = { viewport: { width: 1280, height: 800 }, colorScheme: 'light' };
const phone = { viewport: { width: 360, height: 740 }, colorScheme: 'dark', hasTouch: true, isMobile: true, deviceScaleFactor: 2 };
for (const [name, options, ask, settings] of [
  ['screenshot-first-run.png', desktop, false, false],
  ['screenshot.png', desktop, true, false],
  ['screenshot-phone-dark.png', phone, true, false],
  ['screenshot-settings.png', desktop, true, true],
]) {
  const context = await browser.newContext({ ...options, locale: 'zh-CN' });
  const page = await context.newPage();
  await page.goto(baseURL);
  await page.locator('.app[data-hydrated="true"]').waitFor();
  if (ask) {
    // The first example question, answered from the project's own docs.
    await page.locator('.example').first().click();
    await page.locator('.answer-body').first().waitFor();
    await page.locator('.references').first().waitFor();
    await page.getByRole('button', { name: '发送' }).waitFor();
  }
  if (settings) {
    // What people set once: sources, language, the SearXNG status, in a dialog.
    await page.getByRole('button', { name: '设置' }).click();
    await page.getByRole('dialog').waitFor();
  }
  await page.screenshot({ path: new URL(`../docs/${name}`, import.meta.url).pathname });
  await context.close();
}
await browser.close();
