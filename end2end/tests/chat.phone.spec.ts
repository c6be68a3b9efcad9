import { test, expect } from '@playwright/test';

// Runs in the `phone` project only: 360 px wide, touch.
test('the first tap opens the card, the link inside it navigates', async ({ page, context }) => {
  // The source is on the internet, which this machine cannot reach: answer for it.
  await context.route('https://docs.example.org/**', (route) => route.fulfill({ body: 'the source page' }));
  await page.goto('/');
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  const box = page.getByRole('textbox', { name: '提问' });
  await box.fill('Tokio 是什么运行时？');
  await page.getByRole('button', { name: '发送' }).tap();
  const cite = page.locator('.answer').last().getByRole('link', { name: /^引用 1/ });
  await expect(cite).toBeVisible();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  await cite.tap();
  const card = page.getByRole('tooltip');
  await expect(card).toBeVisible();
  await expect(card).toContainText('Tokio tutorial');
  expect(context.pages()).toHaveLength(1); // the first tap did not navigate
  await expect(card).toBeInViewport();
  const popup = context.waitForEvent('page');
  await card.getByRole('link', { name: /打开来源/ }).tap();
  const opened = await popup;
  expect(opened.url()).toContain('docs.example.org/tokio/tutorial');
  await opened.close();
  // Tapping elsewhere closes the card.
  await page.locator('.topbar').tap();
  await expect(card).toBeHidden();
});
