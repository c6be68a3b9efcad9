import { test, expect } from '@playwright/test';
import { openHydrated, askQuestion } from './helpers';

// The model is scripted (fake-services.mjs); SearXNG is real, fed by fixture engines.

test('asks, streams a cited answer and lists only the cited sources', async ({ page }) => {
  await openHydrated(page);
  const asked = page.waitForResponse((response) => response.url().endsWith('/api/ask'));
  await askQuestion(page, 'Tokio 是什么运行时？');
  // The stream arrives gzipped (flushed line by line) and the page reads it as it comes.
  expect((await asked).headers()['content-encoding']).toBe('gzip');
  await expect(page.getByRole('button', { name: '停止' })).toBeVisible();
  const answer = page.locator('.answer').last();
  await expect(answer).toContainText('Tokio 是 Rust 最常用的异步运行时');
  await expect(answer).toContainText('另见 [9]。'); // no source 9: it stays text
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  const first = answer.getByRole('link', { name: /^引用 1/ });
  await expect(first).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
  await expect(answer.getByRole('link', { name: /^引用 2/ })).toBeVisible();
  await expect(answer.getByRole('link', { name: /^引用 9/ })).toHaveCount(0);
  const references = answer.getByRole('region', { name: '参考文献' });
  await expect(references.getByRole('listitem')).toHaveCount(2);
  await expect(references).toContainText('Tokio tutorial');
  await expect(references).not.toContainText('Which async runtime');
  // The full retrieved set stays reachable, collapsed.
  await expect(answer.locator('details.all-results summary')).toContainText('全部检索结果 (4)'); // 5 found, 2 merged
});

test('Shift+Enter adds a line and an empty question is refused', async ({ page }) => {
  await openHydrated(page);
  const box = page.getByRole('textbox', { name: '提问' });
  await box.press('Enter');
  await expect(page.getByRole('status').filter({ hasText: '请输入问题' })).toBeVisible();
  await box.fill('line one');
  await box.press('Shift+Enter');
  await box.type('line two');
  await expect(box).toHaveValue('line one\nline two');
});

test('a long question is refused with a message and kept', async ({ page }) => {
  await openHydrated(page);
  const long = '长'.repeat(8001);
  const box = page.getByRole('textbox', { name: '提问' });
  await box.fill(long);
  await page.getByRole('button', { name: '发送' }).click();
  await expect(page.getByRole('status').filter({ hasText: '8000' })).toBeVisible();
  await expect(box).toHaveValue(long);
});

test('stop cancels the answer on the server', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'slow answer please');
  await expect(page.locator('.answer').last()).toContainText('word2');
  await page.getByRole('button', { name: '停止' }).click();
  await expect(page.locator('.answer').last().getByText('已停止')).toBeVisible();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  const words = await page.locator('.answer').last().innerText();
  expect(words).not.toContain('word199');
  // The session is free for the next question.
  await askQuestion(page, 'Tokio 是什么运行时？');
  await expect(page.locator('.answer').last()).toContainText('异步运行时');
});

test('nothing from the model or the sources executes', async ({ page }) => {
  const dialogs: string[] = [];
  page.on('dialog', async (dialog) => {
    dialogs.push(dialog.message());
    await dialog.dismiss();
  });
  await openHydrated(page);
  await askQuestion(page, 'xss test');
  const answer = page.locator('.answer').last();
  await expect(answer).toContainText('Evil <script>alert(1)</script> markup');
  await expect(answer).toContainText('<script>alert(5)</script>');
  await expect(answer).toContainText('<img src=x onerror=alert(3)>');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  // javascript: never becomes a link; https does.
  await expect(answer.getByRole('link', { name: 'click me' })).toHaveCount(0);
  await expect(answer.getByText('click me')).toBeVisible();
  await expect(answer.getByRole('link', { name: 'safe link' })).toHaveAttribute('href', 'https://example.org/safe');
  // HTML in a source title is text, in the link, the card and the list.
  const cite = answer.getByRole('link', { name: /^引用 1/ });
  // The title is text; after the check the name may also carry the support level.
  await expect(cite).toHaveAccessibleName(/^引用 1：<img src=x onerror=alert\(1\)>Evil <b>title<\/b>(（(部分支持|未找到支持)）)?$/);
  await cite.focus();
  await expect(page.getByRole('tooltip')).toContainText('<script>alert(2)</script>');
  await expect(answer.getByRole('region', { name: '参考文献' })).toContainText('<img src=x onerror=alert(1)>Evil');
  // No markup from outside; the only pictures are cited's own favicons, from its origin.
  expect(await page.locator('.answer img:not(.favicon), .answer script, .answer b').count()).toBe(0);
  const pictures = await page.locator('.answer img').evaluateAll((imgs) => imgs.map((img) => img.getAttribute('src') ?? ''));
  expect(pictures.every((src) => src.startsWith('/media/icon?site='))).toBe(true);
  expect(dialogs).toEqual([]);
});

test('/reset clears the conversation and confirms; unknown commands list the commands', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  await expect(page.locator('.exchange')).toHaveCount(1);
  await askQuestion(page, '/help');
  await expect(page.getByRole('status')).toContainText('/reset');
  await askQuestion(page, '/reset');
  await expect(page.getByRole('status')).toContainText('已重置');
  await expect(page.locator('.exchange')).toHaveCount(0);
  await page.reload();
  await expect(page.locator('.exchange')).toHaveCount(0);
});

test('an answer that cites none of its sources is flagged, with the sources open', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'uncited: which Rust runtime?');
  const answer = page.locator('.answer').last();
  await expect(answer).toContainText('and it is fast.');
  await expect(answer.locator('.notice.warning')).toContainText('这个回答没有引用任何检索到的来源');
  // The retrieved sources are open, one look away.
  await expect(answer.locator('details.all-results')).toHaveAttribute('open', '');
  await expect(answer.locator('details.all-results').getByRole('link', { name: 'Tokio tutorial' })).toBeVisible();
  await expect(answer.locator('.answer-meta')).toContainText('引用覆盖：0/1 句');
});

// Seed 003: the search switch by command as well as in the UI; the switch follows.
test('/search off and /search on turn the search switch', async ({ page }) => {
  await openHydrated(page);
  const toggle = page.getByRole('switch', { name: '联网搜索' });
  await expect(toggle).toBeChecked();
  await askQuestion(page, '/search off');
  await expect(page.getByRole('status').filter({ hasText: '联网搜索已关闭' })).toBeVisible();
  await expect(toggle).not.toBeChecked();
  // Kept by the session: a reload shows it off.
  await openHydrated(page);
  await expect(page.getByRole('switch', { name: '联网搜索' })).not.toBeChecked();
  await askQuestion(page, '/search on');
  await expect(page.getByRole('status').filter({ hasText: '联网搜索已开启' })).toBeVisible();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toBeChecked();
});

// Seed 003: each retrieved source is listed with its title, site and a short snippet.
test('the retrieved sources show their snippets', async ({ page }) => {
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const answer = page.locator('.answer').last();
  await expect(answer.locator('.answer-meta')).toContainText('来源支持');
  const all = answer.locator('.all-results');
  if ((await all.getAttribute('open')) === null) await all.locator('summary').click();
  await expect(all.locator('.source-snippet').filter({ hasText: 'Most people pick Tokio for servers.' })).toBeVisible();
});
