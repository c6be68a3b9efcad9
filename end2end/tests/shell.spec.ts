import { test, expect, type Page } from '@playwright/test';
import { openHydrated, openSettings } from './helpers';

// Collects what would show up in the browser console as a failure.
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(`console: ${message.text()}`);
  });
  return errors;
}


test('the page hydrates without errors', async ({ page }) => {
  const errors = watchErrors(page);
  await openHydrated(page);
  expect(errors).toEqual([]);
});

test('controls are found by role and accessible name', async ({ page }) => {
  await openHydrated(page);
  await expect(page.getByRole('textbox', { name: '提问' })).toBeVisible();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  const modes = page.getByRole('radiogroup', { name: '模式' });
  await expect(modes).toBeVisible();
  for (const name of ['对话', '智能体', '深度研究']) {
    await expect(modes.getByRole('radio', { name })).toBeVisible();
  }
  await expect(modes.getByRole('radio', { name: '对话' })).toBeChecked();
  const searchSwitch = page.getByRole('switch', { name: '联网搜索' });
  await expect(searchSwitch).toBeVisible();
  await expect(searchSwitch).toBeChecked();
  await expect(searchSwitch).toBeEnabled();
  await expect(searchSwitch).toHaveAccessibleDescription('启用后将使用SearXNG搜索实时信息');
  await expect(page.getByRole('region', { name: '对话记录' })).toBeVisible();
  // Per question, by the question box: focus, model, filters; the rest in a dialog.
  await expect(page.getByRole('combobox', { name: '搜索范围' })).toBeVisible();
  await expect(page.getByRole('combobox', { name: '模型' })).toBeVisible();
  await expect(page.getByRole('button', { name: '筛选' })).toBeVisible();
  const dialog = page.getByRole('dialog', { name: '设置' });
  await expect(dialog).toBeHidden();
  await openSettings(page);
  await expect(dialog.getByRole('radiogroup', { name: '来源' })).toBeVisible();
  await expect(dialog.getByLabel('界面语言')).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(dialog).toBeHidden();
});

test('the filters sit behind one button that shows when one is set', async ({ page }) => {
  await openHydrated(page);
  const filters = page.getByRole('button', { name: '筛选' });
  await expect(filters).toHaveText('筛选');
  await expect(page.getByLabel('时间范围')).toBeHidden();
  await filters.click();
  await expect(filters).toHaveAttribute('aria-expanded', 'true');
  await page.getByLabel('时间范围').selectOption('month');
  await expect(page.getByText('时间范围：一月内')).toBeVisible();
  await expect(filters).toHaveText('筛选 · 一月内');
  await page.keyboard.press('Escape');
  await expect(page.getByLabel('时间范围')).toBeHidden();
  // Still shown after a reload, then lifted.
  await page.reload();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await expect(filters).toHaveText('筛选 · 一月内');
  await filters.click();
  await page.getByLabel('时间范围').selectOption('any');
  await expect(filters).toHaveText('筛选');
});

test('with SearXNG and a model there, the empty page has no first-run card nor examples', async ({ page }) => {
  await openHydrated(page);
  await expect(page.locator('.empty')).toBeVisible();
  await expect(page.locator('.first-run')).toHaveCount(0);
  await expect(page.locator('.examples')).toHaveCount(0);
});

test('icons are drawn inline, never emoji glyphs a system may lack', async ({ page }) => {
  await openHydrated(page);
  const attach = page.getByRole('button', { name: '添加文件' });
  await expect(attach).toBeVisible();
  await expect(attach.locator('svg')).toHaveCount(1);
  await expect(attach).toHaveText('');
  const switchLabel = page.locator('label[for="search-switch"]');
  await expect(switchLabel.locator('svg')).toHaveCount(1);
  await expect(switchLabel).toHaveText('联网搜索');
  // The phone's history button (hidden on a desktop, present in both).
  await expect(page.locator('.history-button svg')).toHaveCount(1);
  const emoji = await page.evaluate(() => /[\u{1F300}-\u{1FAFF}\u2630]/u.test(document.querySelector('.app')?.textContent ?? ''));
  expect(emoji).toBe(false);
});

test('mode and switch survive a reload, and Agent mode disables the switch', async ({ page, isMobile }) => {
  await openHydrated(page);
  const searchSwitch = page.getByRole('switch', { name: '联网搜索' });
  // Turn search off in Chat mode; the change is confirmed on screen.
  if (isMobile) await searchSwitch.tap(); else await searchSwitch.click();
  await expect(searchSwitch).not.toBeChecked();
  await expect(page.getByText('已关闭联网搜索')).toBeVisible();

  const agent = page.getByRole('radio', { name: '智能体' });
  if (isMobile) await agent.tap(); else await agent.click();
  await expect(agent).toBeChecked();
  await expect(page.getByText('已切换到 智能体')).toBeVisible();
  await expect(searchSwitch).toBeDisabled();
  await expect(searchSwitch).toHaveAccessibleDescription('Agent 模式下由 AI 自动决策搜索');

  await page.reload();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.getByRole('radio', { name: '智能体' })).toBeChecked();
  await expect(searchSwitch).toBeDisabled();

  // Back to Chat: the switch is usable again and shows the saved Chat value (off).
  const chat = page.getByRole('radio', { name: '对话' });
  if (isMobile) await chat.tap(); else await chat.click();
  await expect(searchSwitch).toBeEnabled();
  await expect(searchSwitch).not.toBeChecked();
  await page.reload();
  await expect(page.getByRole('radio', { name: '对话' })).toBeChecked();
  await expect(page.getByRole('switch', { name: '联网搜索' })).not.toBeChecked();
});

test('dark mode follows the system', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await openHydrated(page);
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [r, g, b] = background.match(/\d+/g)!.map(Number);
  expect(r + g + b).toBeLessThan(150);
  await page.emulateMedia({ colorScheme: 'light' });
  const light = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  const [lr, lg, lb] = light.match(/\d+/g)!.map(Number);
  expect(lr + lg + lb).toBeGreaterThan(600);
});

test('the settings panel shows that SearXNG works', async ({ page }) => {
  await openHydrated(page);
  await openSettings(page);
  await expect(page.getByText('SearXNG 正常')).toBeVisible();
  await page.getByRole('button', { name: '重新检查' }).click();
  await expect(page.getByText('SearXNG 正常')).toBeVisible();
});
