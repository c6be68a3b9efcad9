import { test, expect } from '@playwright/test';
import { openHydrated, askQuestion, openFilters } from './helpers';

// Runs in the `desktop` project only: a mouse and a keyboard.

test('hovering a citation shows its card', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const cite = page.locator('.answer').last().getByRole('link', { name: /^引用 1/ });
  await expect(cite).toBeVisible();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  await cite.hover();
  const card = page.getByRole('tooltip');
  await expect(card).toBeVisible();
  await expect(card).toContainText('Tokio tutorial');
  await expect(card).toContainText('docs.example.org');
  await expect(card).toContainText('asynchronous runtime');
  await page.mouse.move(5, 5);
  await expect(card).toBeHidden();
});

test('a citation is reachable by keyboard and Esc closes its card', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const cite = page.locator('.answer').last().getByRole('link', { name: /^引用 1/ });
  await expect(cite).toBeVisible();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  await cite.focus();
  const card = page.getByRole('tooltip');
  await expect(card).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(card).toBeHidden();
});

test('copy puts the answer and its reference list on the clipboard as Markdown', async ({ page, context, baseURL }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const answer = page.locator('.answer').last();
  await answer.getByRole('button', { name: '复制' }).click();
  await expect(answer.getByRole('button', { name: '已复制' })).toBeVisible();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  // Each marker a link to its source (seed 003), so the pasted text keeps its citations.
  expect(copied).toContain('Tokio 是 Rust 最常用的异步运行时 [[1]](https://docs.example.org/tokio/tutorial/)。');
  expect(copied).toContain('**参考文献:**');
  expect(copied).toContain('1. [Tokio tutorial](https://docs.example.org/tokio/tutorial/) - `docs.example.org`');
});

test('a refreshed page catches up with the answer being written and follows it', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'slow answer please');
  await expect(page.locator('.answer').last()).toContainText('word3');
  // The answer keeps running on the server while the page is gone.
  await page.reload();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  const answer = page.locator('.answer').last();
  // Replayed from its first word, then followed live.
  await expect(answer).toContainText('word0 word1 word2 word3');
  await expect(answer).toContainText('word14');
  await expect(page.locator('.question').filter({ hasText: 'slow answer please' })).toHaveCount(1);
  await page.getByRole('button', { name: '停止' }).click();
  await expect(answer.getByText('已停止')).toBeVisible();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
});

test('follow-up questions under an answer are asked in the same conversation', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const related = page.locator('.exchange').last().getByRole('list', { name: '相关问题' });
  const buttons = related.getByRole('button');
  await expect(buttons).toHaveCount(3);
  // Numbering and citation markers are the model's, not part of a question.
  await expect(buttons.nth(0)).toHaveText('Tokio 如何调度任务？');
  await expect(buttons.nth(1)).toHaveText('Tokio 和 async-std 有什么区别？');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  await buttons.nth(0).click();
  await expect(page.locator('.exchange')).toHaveCount(2);
  await expect(page.locator('.question').last()).toHaveText(/Tokio 如何调度任务？/);
  await expect(page.locator('.answer').last()).toContainText('异步运行时');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  // Both are in the one conversation the history lists.
  await page.reload();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.locator('.exchange')).toHaveCount(2);
  await expect(page.locator('.exchange').first().getByRole('list', { name: '相关问题' }).getByRole('button')).toHaveCount(3);
});

test('the focus and the time range narrow the searches and are shown with the sources', async ({ page }) => {
  await openHydrated(page);
  const focus = page.getByRole('combobox', { name: '搜索范围' });
  await focus.selectOption({ label: '学术' });
  await expect(page.getByText('搜索范围：学术')).toBeVisible();
  await openFilters(page);
  await page.getByLabel('时间范围').selectOption('week');
  await expect(page.getByText('时间范围：一周内')).toBeVisible();
  // Kept with the browser's settings.
  await page.reload();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await expect(focus).toHaveValue('academic');
  await openFilters(page);
  await expect(page.getByLabel('时间范围')).toHaveValue('week');
  // The fixture's engines cannot limit by time (SearXNG would leave them all out), so the
  // question goes without one.
  await page.getByLabel('时间范围').selectOption('any');
  await expect(page.getByText('时间范围：不限时间')).toBeVisible();
  // Academic searches SearXNG's science engines: here the fixture's "local papers" alone;
  // a site: in the question is a filter too.
  await askQuestion(page, 'Tokio 是什么运行时？ site:docs.example.org');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  const answer = page.locator('.answer').last();
  await expect(answer.locator('.narrowing')).toHaveText('筛选: 学术 · site:docs.example.org');
  await expect(answer.getByRole('link', { name: /^引用 1/ })).toBeVisible();
  await focus.selectOption({ label: '网页' });
  await expect(page.getByText('搜索范围：网页')).toBeVisible();
});
