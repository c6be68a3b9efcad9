import { expect, type Page } from '@playwright/test';

/** Opens the app and waits until the wasm has hydrated it. */
export async function openHydrated(page: Page) {
  await page.goto('/');
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
}

/** Types a question and sends it with Enter. */
export async function askQuestion(page: Page, question: string) {
  const box = page.getByRole('textbox', { name: '提问' });
  await box.fill(question);
  await box.press('Enter');
}

/**
 * What people set once (sources, language, SearXNG's status) is in the settings dialog (a
 * sheet on phones) that the "设置" button by the question box opens: opens it.
 */
export async function openSettings(page: Page, name = '设置') {
  const button = page.getByRole('button', { name, exact: true });
  await button.click();
  await expect(button).toHaveAttribute('aria-expanded', 'true');
  await expect(page.getByRole('dialog', { name })).toBeVisible();
}

/**
 * Opens the "筛选" popover by the question box (time range and site), unless it is open.
 */
export async function openFilters(page: Page, name = '筛选') {
  const button = page.getByRole('button', { name });
  if ((await button.getAttribute('aria-expanded')) !== 'true') await button.click();
  await expect(button).toHaveAttribute('aria-expanded', 'true');
}
