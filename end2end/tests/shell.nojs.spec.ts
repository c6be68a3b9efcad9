import { test, expect } from '@playwright/test';

// JavaScript disabled: the server-rendered page alone.
test('the server-rendered page shows the whole shell', async ({ page }) => {
  await page.goto('/');
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'false');
  await expect(page.getByRole('textbox', { name: '提问' })).toBeVisible();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  await expect(page.getByRole('radiogroup', { name: '模式' })).toBeVisible();
  await expect(page.getByRole('radio', { name: '对话' })).toBeChecked();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toBeChecked();
  await expect(page.getByText('启用后将使用SearXNG搜索实时信息')).toBeVisible();
  await expect(page.getByRole('region', { name: '对话记录' })).toBeVisible();
});

test('the HTML arrives in place, needing no script to assemble it', async ({ request }) => {
  const html = await (await request.get('/')).text();
  // Out-of-order streaming would park the page in a <template> for a script to move.
  expect(html).not.toContain('<template');
  const body = html.slice(html.indexOf('<body>'), html.indexOf('</body>'));
  for (const needle of ['aria-label="提问"', 'role="switch"', 'role="radiogroup"', '此页面需要 JavaScript 才能提问']) {
    expect(body).toContain(needle);
  }
});

test('a conversation renders without JavaScript', async ({ page }) => {
  // page.request shares the page's cookies, so this asks in the same session.
  const response = await page.request.post('/api/ask', { form: { question: 'Tokio 是什么运行时？' } });
  expect(response.ok()).toBeTruthy();
  expect(await response.text()).toContain('{"done":{');
  await page.goto('/');
  const answer = page.locator('.answer').last();
  await expect(answer).toContainText('Tokio 是 Rust 最常用的异步运行时');
  await expect(answer.getByRole('link', { name: /^引用 1/ })).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
  await expect(answer.getByRole('region', { name: '参考文献' })).toContainText('Tokio tutorial');
});

test('history, conversation pages and share links work without JavaScript', async ({ page, browser }) => {
  const asked = await page.request.post('/api/ask', { form: { question: 'Tokio 是什么运行时？' } });
  expect(await asked.text()).toContain('{"done":{');
  await page.goto('/');
  const history = page.getByRole('navigation', { name: '历史对话' });
  const link = history.getByRole('link', { name: 'Tokio 是什么运行时？' });
  await expect(link).toBeVisible();
  // Open it (a plain link), search (a plain form), start a new chat (a plain form post).
  await link.click();
  await expect(page).toHaveURL(/\/c\/[0-9a-f]{32}$/);
  const id = page.url().split('/').pop() ?? '';
  await expect(page.locator('.answer')).toContainText('Tokio 是 Rust 最常用的异步运行时');
  const search = history.getByRole('searchbox', { name: '搜索对话' });
  await search.fill('no such words anywhere');
  await search.press('Enter');
  await expect(history).toContainText('没有找到匹配的对话');
  await page.goto('/');
  await history.getByRole('button', { name: '新对话' }).click();
  await expect(page.locator('.answer')).toHaveCount(0);
  // A share link opens in another browser with its citations, no script needed.
  const shared = await page.request.post('/api/share_conversation', { form: { id, on: 'true' } });
  const token = await shared.json();
  const stranger = await browser.newContext({ javaScriptEnabled: false });
  const other = await stranger.newPage();
  await other.goto(new URL(`/s/${token}`, page.url()).toString());
  await expect(other.locator('.answer')).toContainText('Tokio 是 Rust 最常用的异步运行时');
  await expect(other.getByRole('link', { name: /^引用 1/ })).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
  await stranger.close();
});

test('on a phone without JavaScript the settings stay in view, not behind a button', async ({ page }) => {
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto('/');
  await expect(page.getByRole('radiogroup', { name: '来源' })).toBeVisible();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toBeVisible();
  await expect(page.getByRole('button', { name: '设置', exact: true })).toBeHidden();
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
});
