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
