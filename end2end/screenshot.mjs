// Regenerates docs/screenshot*.png from a running cited:
//   BASE_URL=http://127.0.0.1:3000 node end2end/screenshot.mjs
import { chromium } from 'playwright';

const baseURL = process.env.BASE_URL ?? 'http://127.0.0.1:3000';
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
});
for (const [name, options] of [
  ['screenshot.png', { viewport: { width: 1280, height: 760 }, colorScheme: 'light' }],
  ['screenshot-phone-dark.png', { viewport: { width: 360, height: 740 }, colorScheme: 'dark', hasTouch: true, isMobile: true, deviceScaleFactor: 2 }],
]) {
  const page = await browser.newPage({ ...options, locale: 'zh-CN' });
  await page.goto(baseURL);
  await page.locator('.app[data-hydrated="true"]').waitFor();
  await page.screenshot({ path: new URL(`../docs/${name}`, import.meta.url).pathname });
  await page.close();
}
await browser.close();
