import { test, expect, type Page } from '@playwright/test';
import { openSettings } from './helpers';

// The out-of-the-box instance: no SearXNG, no model (see playwright.config.ts).
const offlineURL = `http://127.0.0.1:${process.env.E2E_OFFLINE_PORT ?? '3996'}`;

async function ask(page: Page, box: string, send: string, question: string, isMobile: boolean) {
  await page.goto('/');
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await page.getByRole('textbox', { name: box }).fill(question);
  const button = page.getByRole('button', { name: send });
  if (isMobile) await button.tap(); else await button.click();
  await expect(button).toBeVisible({ timeout: 20_000 });
}

async function openCard(page: Page, cite, isMobile: boolean) {
  if (isMobile) await cite.tap(); else await cite.hover();
  const card = page.getByRole('tooltip');
  await expect(card).toBeVisible();
  return card;
}

test.describe('offline, Chinese UI', () => {
  test.use({ baseURL: offlineURL, locale: 'zh-CN' });

  test('answers from the project docs with knowledge citations', async ({ page, isMobile }) => {
    await ask(page, '提问', '发送', '如何在 SearXNG 中启用 JSON 格式？', isMobile);
    const answer = page.locator('.answer').last();
    await expect(answer).toContainText('离线抽取模式（未配置语言模型）');
    // The switch to the knowledge base says why, with the fix.
    await expect(answer).toContainText('SearXNG 不可用，本次改用本地知识库回答。原因：搜索服务不可用：SearXNG 没有在');
    await expect(answer).toContainText('CITED_SEARXNG_URL');
    const body = answer.locator('.answer-body');
    await expect(body).toContainText('formats');
    const cite = body.getByRole('link', { name: /^引用 \d+/ }).first();
    const href = await cite.getAttribute('href');
    expect(href).toMatch(/^\/knowledge\/docs\/faq\.zh-CN\.md\?p=\d+#passage$/);
    const card = await openCard(page, cite, isMobile);
    await expect(card).toContainText('知识库');
    await expect(card).toContainText('docs/faq.zh-CN.md');
    const references = answer.getByRole('region', { name: '参考文献' });
    await expect(references).toContainText('常见问题');
    // A knowledge-base passage is its own text: never "the page could not be read".
    await expect(answer.locator('.answer-meta')).toContainText('来源支持');
    await expect(answer).not.toContainText('网页无法读取');
    // No model wrote it: no token count.
    await expect(answer.locator('.answer-meta')).not.toContainText('token');
    // The cited passage, highlighted on the document's page.
    await page.goto(href!);
    await expect(page.locator('mark#passage')).toContainText('formats');
    await expect(page.locator('h1')).toHaveText('常见问题');
  });
});

test.describe('offline, English UI', () => {
  test.use({ baseURL: offlineURL, locale: 'en-US' });

  test('the first run says what answers come from, and its examples work', async ({ page, isMobile }) => {
    await page.goto('/');
    await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
    const card = page.getByRole('region', { name: 'Running offline' });
    await expect(card).toContainText('local knowledge base');
    await expect(card).toContainText('CITED_SEARXNG_URL');
    await expect(card).toContainText('cited doctor');
    const examples = page.getByRole('list', { name: 'Try these questions' });
    await expect(examples.getByRole('button')).toHaveCount(3);
    const example = examples.getByRole('button', { name: 'How do I run the tests?' });
    if (isMobile) await example.tap(); else await example.click();
    const answer = page.locator('.answer').last();
    await expect(answer.locator('.answer-body')).toContainText('make test', { timeout: 20_000 });
    await expect(answer.getByRole('link', { name: /^Citation \d+/ }).first()).toBeVisible();
    // The card and the examples belong to the empty page only.
    await expect(card).toHaveCount(0);
    await expect(examples).toHaveCount(0);
  });

  test('the UI speaks English and answers from the README', async ({ page, isMobile }) => {
    await ask(page, 'Ask', 'Send', 'How do I run the tests?', isMobile);
    await expect(page.locator('html')).toHaveAttribute('lang', 'en');
    await expect(page.getByRole('radio', { name: 'Research' })).toBeVisible();
    const answer = page.locator('.answer').last();
    await expect(answer).toContainText('Offline extractive mode (no language model configured)');
    await expect(answer).toContainText('SearXNG is unavailable, so this answer searches the local knowledge base. Why:');
    const body = answer.locator('.answer-body');
    await expect(body).toContainText('make test');
    const cite = body.getByRole('link', { name: /^Citation \d+/ }).first();
    await expect(cite).toHaveAttribute('href', /^\/knowledge\//);
    const card = await openCard(page, cite, isMobile);
    await expect(card).toContainText('Knowledge base');
    await expect(answer.getByRole('region', { name: 'References' })).toBeVisible();
  });

  test('the language switch is remembered', async ({ page, isMobile }) => {
    await page.goto('/');
    await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
    await openSettings(page, 'Settings');
    await page.getByLabel('Language').selectOption('zh-CN');
    await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
    await expect(page.getByRole('textbox', { name: '提问' })).toBeVisible();
    await page.reload();
    await expect(page.getByRole('textbox', { name: '提问' })).toBeVisible();
    void isMobile;
  });
});
