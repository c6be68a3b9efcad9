import { expect, test } from '@playwright/test';
import { askQuestion, openFilters, openHydrated } from './helpers';

// What users choose beyond the mode: the image strip and favicons fetched through cited,
// the model picker (kept per conversation) and the site field.

test('the image strip and the favicons come from cited, never from third parties', async ({ page, baseURL }) => {
  const origins = new Set<string>();
  page.on('request', (request) => origins.add(new URL(request.url()).origin));
  await openHydrated(page);
  await askQuestion(page, 'Tell me about the lighthouse');
  const strip = page.getByRole('list', { name: '图片' });
  await expect(strip.getByRole('link')).toHaveCount(4);
  // The SVG is left out; each picture links to its page and is named by its number and title.
  await expect(strip.getByRole('link', { name: '图片 1：Lighthouse photo 1' })).toHaveAttribute('href', 'https://photos.example.org/lighthouse/1');
  const thumbnails = strip.locator('img');
  for (let i = 0; i < 4; i++) {
    await expect(thumbnails.nth(i)).toHaveAttribute('src', /^\/media\/image\?u=/);
    await expect.poll(() => thumbnails.nth(i).evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
  }
  await expect(page.getByRole('button', { name: '停止' })).toBeHidden();

  // The sources' favicons: the one whose site serves one shows it; the other keeps its letter.
  const all = page.locator('details', { hasText: '全部检索结果' });
  await all.locator('summary').click();
  const icons = all.locator('.source-domain img.favicon');
  await expect(icons).toHaveCount(2);
  const loaded = await icons.evaluateAll((imgs) => (imgs as HTMLImageElement[]).map((img) => [img.getAttribute('src'), img.complete && img.naturalWidth > 0]));
  expect(loaded).toContainEqual(['/media/icon?site=http%3A%2F%2F127.0.0.1%3A3998', true]);
  expect(loaded).toContainEqual(['/media/icon?site=https%3A%2F%2Flights.example.org', false]);
  // Nothing but cited was contacted by the browser.
  expect([...origins]).toEqual([baseURL]);
});

test('the model picker lists the endpoint models and each conversation keeps its own', async ({ page }) => {
  await openHydrated(page);
  const picker = page.getByRole('combobox', { name: '模型' });
  await expect(picker.locator('option')).toHaveText(['fake-model', 'fake-model-large']);
  await expect(picker).toHaveValue('main|fake-model');
  await picker.selectOption({ label: 'fake-model-large' });
  await expect(page.getByText('之后的回答由 fake-model-large 写')).toBeVisible();
  await askQuestion(page, 'which model is this?');
  await expect(page.locator('.answer-body').last()).toContainText('Written by fake-model-large');
  await expect(page.getByRole('button', { name: '停止' })).toBeHidden();
  const first = page.url();

  // A new conversation with the other model.
  await page.getByRole('button', { name: '新对话' }).click();
  await expect(page.locator('.exchange')).toHaveCount(0);
  await picker.selectOption({ label: 'fake-model' });
  await askQuestion(page, 'which model now?');
  await expect(page.locator('.answer-body').last()).toContainText('Written by fake-model [1]');
  await expect(page.getByRole('button', { name: '停止' })).toBeHidden();

  // Back in the first conversation, its model is picked again.
  await page.getByRole('link', { name: 'which model is this?' }).click();
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.getByRole('combobox', { name: '模型' })).toHaveValue('main|fake-model-large');
  expect(first).toBeTruthy();
});

test('the site field keeps web searches on one site and says so', async ({ page }) => {
  await openHydrated(page);
  await openFilters(page);
  const site = page.getByRole('textbox', { name: '站点' });
  await site.fill('not a site');
  await site.press('Enter');
  await site.blur();
  await expect(page.getByText(/不是一个网站域名/)).toBeVisible();
  await site.fill('Docs.Example.org');
  await site.blur();
  await expect(page.getByText('只搜索 docs.example.org')).toBeVisible();
  // The filters button shows the site in force.
  await expect(page.getByRole('button', { name: '筛选' })).toHaveText('筛选 · docs.example.org');
  await askQuestion(page, 'tokio runtime');
  await expect(page.locator('.narrowing')).toContainText('site:docs.example.org');
  await expect(page.getByRole('button', { name: '停止' })).toBeHidden();
  await site.fill('');
  await site.blur();
  await expect(page.getByText('不限站点')).toBeVisible();
});

test('files added to the conversation are searched, cited and open at their passage', async ({ page }) => {
  await openHydrated(page);
  const chooser = page.waitForEvent('filechooser');
  await page.getByRole('button', { name: '添加文件' }).click();
  await (await chooser).setFiles({
    name: 'keeper.md',
    mimeType: 'text/markdown',
    buffer: Buffer.from('# Keeper notes\n\nThe lighthouse keeper logs every passing ship in the tower book.\n'),
  });
  await expect(page.getByRole('status')).toContainText('已添加 keeper.md');
  const files = page.getByRole('list', { name: '对话中的文件' });
  await expect(files).toContainText('keeper.md');

  // Dropped on the composer too; a kind cited cannot read is refused with the reason.
  await page.locator('form.composer').evaluate((form) => {
    const data = new DataTransfer();
    data.items.add(new File(['MZ'], 'setup.exe'));
    form.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  await expect(page.getByRole('status')).toContainText('只支持 PDF、Markdown、文本、HTML 和 DOCX 文件');
  await page.locator('form.composer').evaluate((form) => {
    const data = new DataTransfer();
    data.items.add(new File(['Ships pass the tower at dawn.'], 'dawn.txt', { type: 'text/plain' }));
    form.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }));
  });
  await expect(files).toContainText('dawn.txt');
  // And taken out again, by its own button.
  await files.getByRole('button', { name: '移除 dawn.txt' }).click();
  await expect(page.getByRole('status')).toContainText('已移除 dawn.txt');
  await expect(files).not.toContainText('dawn.txt');
  await expect(files).toContainText('keeper.md');

  await askQuestion(page, 'What does the lighthouse keeper log?');
  await expect(page.getByRole('button', { name: '停止' })).toBeHidden();
  const cite = page.locator('.answer-body').last().getByRole('link', { name: /^引用 3：keeper\.md/ });
  await expect(cite).toBeVisible();
  const href = await cite.getAttribute('href');
  expect(href).toMatch(/^\/knowledge\/~files\/[0-9a-f]+\/[0-9a-f]+\?p=0#passage$/);
  // The conversation's own page lists its files.
  await page.getByRole('navigation', { name: '历史对话' }).getByRole('link').first().click();
  await expect(page).toHaveURL(/\/c\/[0-9a-f]{32}$/);
  await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
  await expect(page.getByRole('list', { name: '对话中的文件' })).toContainText('keeper.md');
  await page.goto(href!);
  await expect(page.locator('mark#passage')).toContainText('The lighthouse keeper logs every passing ship');
});
