import { test, expect, type Page } from '@playwright/test';
import { askQuestion, openHydrated } from './helpers';

// Runs in the `phone` project only: touch, 360 px wide unless a test sets another size.

/** Nothing overflows sideways, and the elements are inside the viewport. */
async function fitsAndShows(page: Page, width: number) {
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  for (const locator of [
    page.getByRole('radiogroup', { name: '模式' }),
    page.getByRole('switch', { name: '联网搜索' }),
    page.getByRole('textbox', { name: '提问' }),
    page.getByRole('button', { name: '发送' }),
  ]) {
    await expect(locator).toBeInViewport();
  }
}

test('fits a 360 px touch screen: mode chips and the switch stay, the rest is one tap away', async ({ page }) => {
  await openHydrated(page);
  expect(await page.evaluate(() => navigator.maxTouchPoints)).toBeGreaterThan(0);
  expect(await page.evaluate(() => window.innerWidth)).toBe(360);
  await fitsAndShows(page, 360);
  // Touch targets are at least 40 px tall.
  for (const name of ['发送', '设置']) {
    const box = await page.getByRole('button', { name, exact: true }).boundingBox();
    expect(box?.height ?? 0).toBeGreaterThanOrEqual(40);
  }
  // The sources and the language wait in the sheet.
  const sources = page.getByRole('radiogroup', { name: '来源' });
  await expect(sources).toBeHidden();
  const settings = page.getByRole('button', { name: '设置', exact: true });
  await settings.tap();
  await expect(settings).toHaveAttribute('aria-expanded', 'true');
  await expect(sources).toBeInViewport();
  await expect(page.getByLabel('界面语言')).toBeVisible();
  await expect(page.getByText('SearXNG 正常')).toBeVisible();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  // A choice in the sheet works and is confirmed; the close button folds it away.
  await sources.getByRole('radio', { name: '网页' }).tap();
  await expect(sources.getByRole('radio', { name: '网页' })).toBeChecked();
  await page.getByRole('button', { name: '关闭' }).tap();
  await expect(sources).toBeHidden();
  await expect(settings).toHaveAttribute('aria-expanded', 'false');
  // The mode chips work without opening anything.
  await page.getByRole('radio', { name: '深度研究' }).tap();
  await expect(page.getByRole('radio', { name: '深度研究' })).toBeChecked();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toBeDisabled();
  await page.getByRole('radio', { name: '对话' }).tap();
});

test('the history is a drawer that Escape and the backdrop close', async ({ page }) => {
  await openHydrated(page);
  const history = page.getByRole('navigation', { name: '历史对话' });
  await expect(history).toBeHidden();
  const button = page.getByRole('button', { name: '历史对话' });
  await button.tap();
  await expect(history).toBeInViewport();
  await expect(history.getByRole('button', { name: '新对话' })).toBeVisible();
  await expect(history.getByRole('searchbox', { name: '搜索对话' })).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(history).toBeHidden();
  await button.tap();
  await expect(history).toBeVisible();
  // The backdrop, right of the drawer.
  await page.mouse.click(350, 400);
  await expect(history).toBeHidden();
});

for (const [width, height] of [[360, 640], [412, 915], [768, 1024]]) {
  for (const scheme of ['light', 'dark'] as const) {
    test(`${width}×${height} ${scheme}: the conversation starts near the top, the composer at the bottom`, async ({ page }) => {
      await page.setViewportSize({ width, height });
      await page.emulateMedia({ colorScheme: scheme });
      await openHydrated(page);
      await fitsAndShows(page, width);
      const conversation = await page.getByRole('region', { name: '对话记录' }).boundingBox();
      if (width <= 640) {
        // Phones: only the top bar and one row of chips above the conversation.
        expect(conversation?.y ?? 999).toBeLessThanOrEqual(120);
      }
      const composer = await page.locator('.composer').boundingBox();
      expect((composer?.y ?? 0) + (composer?.height ?? 0)).toBeLessThanOrEqual(height + 1);
      // The text is readable against its background in both schemes.
      const [fg, bg] = await page.evaluate(() => [getComputedStyle(document.body).color, getComputedStyle(document.body).backgroundColor]);
      const sum = (rgb: string) => rgb.match(/\d+/g)!.slice(0, 3).map(Number).reduce((a, b) => a + b, 0);
      expect(Math.abs(sum(fg) - sum(bg))).toBeGreaterThan(400);
    });
  }
}

test('a citation card fits the screen at 412 px', async ({ page, context }) => {
  await context.route('https://docs.example.org/**', (route) => route.fulfill({ body: 'the source page' }));
  await page.setViewportSize({ width: 412, height: 915 });
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const cite = page.locator('.answer').last().getByRole('link', { name: /^引用 1/ });
  await cite.tap();
  const card = page.getByRole('tooltip');
  await expect(card).toBeInViewport({ ratio: 1 });
});

test('the viewport lets the keyboard resize the page and covers the safe areas', async ({ page }) => {
  await openHydrated(page);
  const viewport = await page.locator('meta[name="viewport"]').getAttribute('content');
  expect(viewport).toContain('interactive-widget=resizes-content');
  expect(viewport).toContain('viewport-fit=cover');
});
