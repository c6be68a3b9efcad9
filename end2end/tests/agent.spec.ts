import { test, expect } from '@playwright/test';
import { openHydrated, askQuestion } from './helpers';

test('Agent mode searches by itself, shows its trace and the grouped list', async ({ page, isMobile }) => {
  await openHydrated(page);
  const agent = page.getByRole('radio', { name: '智能体' });
  if (isMobile) await agent.tap(); else await agent.click();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toBeDisabled();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toHaveAccessibleDescription('Agent 模式下由 AI 自动决策搜索');
  await askQuestion(page, 'agent: what is Tokio?');
  const answer = page.locator('.answer').last();
  await expect(answer).toContainText('Tokio 是 Rust 的异步运行时');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
  await expect(answer.locator('.trace')).toContainText('搜索 "Tokio runtime" → 4 条结果 [1]–[4]');
  await expect(answer.locator('.trace')).toContainText('先搜索一下。');
  await expect(answer.locator('.answer-body')).not.toContainText('先搜索一下。');
  const list = answer.getByRole('region', { name: '引用文章列表' });
  await expect(list).toContainText('第 1 次搜索 (查询: Tokio runtime)');
  await expect(list.getByRole('listitem')).toHaveCount(1);
  // Seed 002's 📚 heads the list, drawn inline (no emoji font needed), the name unchanged.
  await expect(list.locator('summary svg.books')).toBeVisible();
  await expect(list.locator('summary')).not.toContainText('📚');
  await expect(answer.getByRole('link', { name: /^引用 1/ })).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
});

test('an Agent answer written without searching says so and can be searched again', async ({ page, isMobile }) => {
  await openHydrated(page);
  const agent = page.getByRole('radio', { name: '智能体' });
  if (isMobile) await agent.tap(); else await agent.click();
  // Without "agent" in the question the scripted model answers from memory.
  await askQuestion(page, 'Tokio 运行时是什么？');
  const first = page.locator('.answer').last();
  await expect(first).toContainText('这个回答没有经过搜索');
  const again = first.getByRole('button', { name: '搜索后重答' });
  if (isMobile) await again.tap(); else await again.click();
  await expect(page.locator('.exchange')).toHaveCount(2);
  const second = page.locator('.answer').last();
  await expect(second.getByRole('link', { name: /^引用 1/ })).toBeVisible();
  await expect(second).not.toContainText('这个回答没有经过搜索');
  await expect(second.locator('.answer-meta')).toContainText('引用覆盖：');
  // The box was left alone.
  await expect(page.getByRole('textbox', { name: '提问' })).toHaveValue('');
});
