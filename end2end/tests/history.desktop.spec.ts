import { test, expect, type Page } from '@playwright/test';
import { openHydrated, askQuestion } from './helpers';

// Conversations last: the history list, new chat, reopen, rename, delete with undo,
// search, share links and export. Each test's browser context is a new browser, so its
// history starts empty.

async function askAndWait(page: Page, question: string) {
  await askQuestion(page, question);
  await expect(page.locator('.answer').last()).toContainText('另见 [9]。');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
}

test('history lists conversations; new chat, reopen, rename, search, delete and undo', async ({ page }) => {
  await openHydrated(page);
  const history = page.getByRole('navigation', { name: '历史对话' });
  await expect(history).toContainText('还没有对话');
  await askAndWait(page, 'Tokio 是什么运行时？');
  await page.reload();
  await expect(history.getByRole('heading', { name: '今天' })).toBeVisible();
  await expect(history.getByRole('link', { name: 'Tokio 是什么运行时？' })).toBeVisible();

  // New chat: an empty conversation; the first one stays in the history.
  await history.getByRole('button', { name: '新对话' }).click();
  await expect(page).toHaveURL(/\/$/);
  await expect(page.locator('.answer')).toHaveCount(0);
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await askAndWait(page, 'Rust 运行时 服务器');
  await page.reload();
  await expect(history.getByRole('link')).toHaveCount(2);

  // Reopen the first one: its own URL, its answer, marked current.
  await history.getByRole('link', { name: 'Tokio 是什么运行时？' }).click();
  await expect(page).toHaveURL(/\/c\/[0-9a-f]{32}$/);
  await expect(page.locator('.question').first()).toContainText('Tokio 是什么运行时？');
  await expect(page.locator('.question')).toHaveCount(1);
  await expect(history.locator('[aria-current="page"]')).toHaveText('Tokio 是什么运行时？');
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');

  // Rename it.
  const item = history.getByRole('listitem').filter({ hasText: 'Tokio 是什么运行时？' });
  await item.getByRole('button', { name: '重命名' }).click();
  await history.getByRole('textbox', { name: '标题' }).fill('关于 Tokio');
  await history.getByRole('button', { name: '保存' }).click();
  await expect(history.getByRole('link', { name: '关于 Tokio' })).toBeVisible();

  // Search titles and answers.
  const search = history.getByRole('searchbox', { name: '搜索对话' });
  await search.fill('服务器');
  await search.press('Enter');
  await expect(page).toHaveURL(/\?q=/);
  await expect(history.getByRole('link')).toHaveCount(1);
  await expect(history.getByRole('link')).toHaveText('Rust 运行时 服务器');
  await page.goto('/');

  // Delete, then undo.
  const other = history.getByRole('listitem').filter({ hasText: 'Rust 运行时 服务器' });
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await other.getByRole('button', { name: '删除' }).click();
  await expect(history.getByRole('link', { name: 'Rust 运行时 服务器' })).toHaveCount(0);
  await expect(history).toContainText('已删除对话：Rust 运行时 服务器');
  await history.getByRole('button', { name: '撤销' }).click();
  await expect(history.getByRole('link', { name: 'Rust 运行时 服务器' })).toBeVisible();
});

test('the history is live: a new conversation shows at once, takes its title, moves up when continued', async ({ page }) => {
  await openHydrated(page);
  const history = page.getByRole('navigation', { name: '历史对话' });
  await expect(history).toContainText('还没有对话');
  // No reload anywhere below.
  await askAndWait(page, 'Rust 运行时 服务器');
  await expect(history.getByRole('heading', { name: '今天' })).toBeVisible();
  await expect(history.getByRole('link', { name: 'Rust 运行时 服务器' })).toBeVisible();
  await expect(history.locator('[aria-current="page"]')).toHaveText('Rust 运行时 服务器');
  await expect(history).not.toContainText('还没有对话');

  // A second conversation goes on top, and the model's title replaces the question there.
  await history.getByRole('button', { name: '新对话' }).click();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await askQuestion(page, 'Tokio 是什么运行时？请起个名');
  await expect(history.getByRole('link').first()).toHaveText('Tokio 入门指南');
  await expect(history.locator('[aria-current="page"]')).toHaveText('Tokio 入门指南');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();

  // Continuing the first one moves it back to the top.
  await history.getByRole('link', { name: 'Rust 运行时 服务器' }).click();
  await expect(page).toHaveURL(/\/c\/[0-9a-f]{32}$/);
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await expect(history.getByRole('link').first()).toHaveText('Tokio 入门指南');
  await askAndWait(page, 'Tokio 是什么运行时？');
  await expect(history.getByRole('link')).toHaveText(['Rust 运行时 服务器', 'Tokio 入门指南']);
  await expect(history.locator('[aria-current="page"]')).toHaveText('Rust 运行时 服务器');
});

test('an answer still being written shows under its own conversation only', async ({ page, context }) => {
  await openHydrated(page);
  const history = page.getByRole('navigation', { name: '历史对话' });
  await askAndWait(page, 'Tokio 是什么运行时？');
  await history.getByRole('button', { name: '新对话' }).click();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await askQuestion(page, 'slow answer please');
  await expect(page.getByRole('button', { name: '停止' })).toBeVisible();
  const href = await history.getByRole('link', { name: 'slow answer please' }).getAttribute('href');
  expect(href).toMatch(/^\/c\/[0-9a-f]{32}$/);
  // Another conversation opened while it is written (which stops it): that page follows the
  // browser's answer to its end and sees it belongs elsewhere.
  await history.getByRole('link', { name: 'Tokio 是什么运行时？' }).click();
  await expect(page).toHaveURL(/\/c\/[0-9a-f]{32}$/);
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  // A second tab on the answer's own conversation shows it, ended…
  const other = await context.newPage();
  await other.goto(href!);
  await expect(other.locator('.question').last()).toContainText('slow answer please');
  await expect(other.locator('.answer').last()).toContainText('已停止');
  // …and the first page, which had all its events too, shows none of them.
  await expect(page.locator('.question')).toHaveCount(1);
  await expect(page.locator('.question')).toContainText('Tokio 是什么运行时？');
  await expect(page.getByRole('button', { name: '停止' })).toBeHidden();
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
});

test('a share link opens read-only in a fresh browser, and export downloads Markdown', async ({ page, browser, baseURL }) => {
  await openHydrated(page);
  await askAndWait(page, 'Tokio 是什么运行时？');
  await page.reload();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await page.getByRole('button', { name: '分享' }).click();
  const link = page.getByRole('textbox', { name: '分享链接' });
  await expect(link).toHaveValue(/\/s\/[0-9a-f]{32}$/);
  const url = await link.inputValue();

  const stranger = await browser.newContext();
  const shared = await stranger.newPage();
  await shared.goto(url);
  await expect(shared.locator('.answer')).toContainText('Tokio 是 Rust 最常用的异步运行时');
  await expect(shared.getByRole('link', { name: /^引用 1/ })).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
  await expect(shared.getByRole('region', { name: '参考文献' })).toBeVisible();
  await expect(shared.getByRole('textbox', { name: '提问' })).toHaveCount(0);
  // The share page's copy keeps each citation as a link to its source (seed 003).
  await stranger.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: baseURL });
  await expect(shared.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await shared.locator('.answer').first().getByRole('button', { name: '复制' }).click();
  await expect(shared.getByRole('button', { name: '已复制' })).toBeVisible();
  const copied = await shared.evaluate(() => navigator.clipboard.readText());
  expect(copied).toContain('[[1]](https://docs.example.org/tokio/tutorial/)');
  await stranger.close();

  const download = page.waitForEvent('download');
  await page.getByRole('link', { name: '导出' }).click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/^cited-[0-9a-f]{32}\.md$/);
  const stream = await file.createReadStream();
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const markdown = Buffer.concat(chunks).toString('utf8');
  expect(markdown).toContain('# Tokio 是什么运行时？');
  expect(markdown).toContain('参考文献');
  expect(markdown).toContain('[[1]](https://docs.example.org/tokio/tutorial/)');

  // Its citations for a reference manager: BibTeX, RIS, CSL-JSON.
  const actions = page.locator('.conversation-actions');
  await actions.getByText('导出引用').click();
  const bib = page.waitForEvent('download');
  await actions.getByRole('link', { name: 'BibTeX' }).click();
  const bibFile = await bib;
  expect(bibFile.suggestedFilename()).toMatch(/^cited-[0-9a-f]{32}\.bib$/);
  const bibChunks: Buffer[] = [];
  for await (const chunk of await bibFile.createReadStream()) bibChunks.push(chunk as Buffer);
  const bibtex = Buffer.concat(bibChunks).toString('utf8');
  expect(bibtex).toContain('@online{cited-1-1,');
  expect(bibtex).toContain('url = {https://docs.example.org/tokio/tutorial/}');
  await expect(actions.getByRole('link', { name: 'CSL-JSON' })).toHaveAttribute('href', /\/citations\.json$/);
  // And each answer's own, under its reference list.
  const references = page.getByRole('region', { name: '参考文献' }).first();
  await references.getByText('导出引用').click();
  const one = page.waitForEvent('download');
  await references.getByRole('link', { name: 'RIS' }).click();
  const risFile = await one;
  expect(risFile.suggestedFilename()).toMatch(/^cited-[0-9a-f]{32}-1\.ris$/);
  const risChunks: Buffer[] = [];
  for await (const chunk of await risFile.createReadStream()) risChunks.push(chunk as Buffer);
  expect(Buffer.concat(risChunks).toString('utf8')).toContain('UR  - https://docs.example.org/tokio/tutorial/');

  // Printing (to PDF) keeps the answer and its sources, not the controls around them.
  await page.emulateMedia({ media: 'print' });
  await expect(page.getByRole('textbox', { name: '提问' })).toBeHidden();
  await expect(page.getByRole('navigation', { name: '历史对话' })).toBeHidden();
  await expect(page.locator('.answer').first()).toBeVisible();
  await page.emulateMedia({ media: 'screen' });

  // Revoked: the link no longer opens.
  await page.getByRole('button', { name: '停止分享' }).click();
  await expect(page.getByRole('button', { name: '分享' })).toBeVisible();
  const later = await browser.newContext();
  const gone = await later.newPage();
  await gone.goto(url);
  await expect(gone.locator('.not-found')).toBeVisible();
  await later.close();
});
