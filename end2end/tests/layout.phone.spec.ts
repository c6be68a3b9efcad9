import { test, expect } from '@playwright/test';

// Runs in the `phone` project only: 360 px wide, touch.
test('fits a 360 px touch screen', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  expect(await page.evaluate(() => navigator.maxTouchPoints)).toBeGreaterThan(0);
  expect(await page.evaluate(() => window.innerWidth)).toBe(360);
  // Nothing overflows sideways.
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
  // Settings, question box and send button are all on screen at once.
  for (const locator of [
    page.getByRole('radiogroup', { name: '模式' }),
    page.getByRole('switch', { name: '联网搜索' }),
    page.getByRole('textbox', { name: '提问' }),
    page.getByRole('button', { name: '发送' }),
  ]) {
    await expect(locator).toBeInViewport();
  }
  // Touch targets are at least 40 px tall.
  const box = await page.getByRole('button', { name: '发送' }).boundingBox();
  expect(box?.height ?? 0).toBeGreaterThanOrEqual(40);
  await page.getByRole('radio', { name: '深度研究' }).tap();
  await expect(page.getByRole('radio', { name: '深度研究' })).toBeChecked();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toBeDisabled();
});

