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
 * On a phone the settings beyond the mode and the search switch live in a sheet behind the
 * top bar's "设置" button: opens it. Wide screens show them in the sidebar: nothing to do.
 */
export async function openSettings(page: Page, name = '设置') {
  const button = page.getByRole('button', { name, exact: true });
  if (await button.isVisible()) {
    await button.click();
    await expect(button).toHaveAttribute('aria-expanded', 'true');
  }
}

/** Folds the settings sheet away again (Escape), if `openSettings` opened one. */
export async function closeSettings(page: Page, name = '设置') {
  const button = page.getByRole('button', { name, exact: true });
  if ((await button.isVisible()) && (await button.getAttribute('aria-expanded')) === 'true') {
    await page.keyboard.press('Escape');
    await expect(button).toHaveAttribute('aria-expanded', 'false');
  }
}
