import { test, expect } from '@playwright/test';
import { openHydrated, askQuestion } from './helpers';

async function chooseResearch(page, isMobile: boolean) {
  const research = page.getByRole('radio', { name: '深度研究' });
  if (isMobile) await research.tap(); else await research.click();
  await expect(page.getByRole('switch', { name: '联网搜索' })).toBeDisabled();
}

test('Research mode shows the live plan, two loops with a pruned direction, and a cited answer', async ({ page, isMobile }) => {
  const dialogs: string[] = [];
  page.on('dialog', async (dialog) => { dialogs.push(dialog.message()); await dialog.dismiss(); });
  await openHydrated(page);
  await chooseResearch(page, isMobile);
  await askQuestion(page, 'research: 哪个 Rust 运行时最常用？');
  const answer = page.locator('.answer').last();
  const plan = answer.locator('.research');
  // Live: the branches show as running while the model reflects.
  await expect(plan.locator('.sub-question[data-status="running"]').first()).toBeVisible();
  await expect(answer).toContainText('结论：Tokio（置信度：高）');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();

  await expect(plan.locator('.loop-counter')).toHaveText('第 2 轮（最多 4 轮）');
  // The plan folds away once the answer is done; it opens again on demand.
  await expect(plan).not.toHaveAttribute('open', /.*/);
  const summary = plan.locator('summary');
  if (isMobile) await summary.tap(); else await summary.click();
  await expect(plan).toHaveAttribute('open', /.*/);
  const first = plan.getByRole('region', { name: '第 1 轮（最多 4 轮）' });
  await expect(first.locator('.sub-question')).toHaveCount(2);
  await expect(first.locator('.sub-question').nth(0)).toContainText('完成');
  await expect(first.locator('.sub-question').nth(1)).toContainText('已剪枝');
  await expect(first.locator('.verdict')).toContainText('推理链不充分');
  await expect(first.locator('.verdict')).toContainText('剪枝方向');
  const second = plan.getByRole('region', { name: '第 2 轮（最多 4 轮）' });
  await expect(second.locator('.sub-question')).toHaveCount(1);
  await expect(second.locator('.verdict')).toContainText('推理链充分');
  await expect(plan).toContainText('推理链充分，研究结束');
  // Evidence carries its reliability and citation links; model text stays text.
  const evidence = first.locator('.evidence').first();
  await expect(evidence).toContainText('可靠性: 高');
  await expect(evidence.getByRole('link', { name: /^引用 1/ })).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
  await expect(first.locator('.evidence').nth(1)).toContainText('<img src=x onerror=alert(7)>');

  // The explanation cites the session numbers: loop 2's branch starts at 9.
  const body = answer.locator('.answer-body');
  await expect(body.getByRole('link', { name: /^引用 1/ })).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
  await expect(body.getByRole('link', { name: /^引用 9/ })).toHaveAttribute('href', 'https://docs.example.org/tokio/tutorial/');
  const list = answer.getByRole('region', { name: '引用文章列表' });
  await expect(list).toContainText('第 1 次搜索 (子问题: Rust 最常用的异步运行时是什么？)');
  await expect(list).toContainText('第 3 次搜索 (子问题: Tokio 的调度器有什么改进？)');
  await expect(list.getByRole('listitem')).toHaveCount(2);
  expect(dialogs).toEqual([]);
});

test('a Research answer can be stopped while its branches run', async ({ page, isMobile }) => {
  await openHydrated(page);
  await chooseResearch(page, isMobile);
  await askQuestion(page, 'research: 慢 Rust 运行时');
  const answer = page.locator('.answer').last();
  await expect(answer.locator('.sub-question[data-status="running"]').first()).toBeVisible();
  const stop = page.getByRole('button', { name: '停止' });
  if (isMobile) await stop.tap(); else await stop.click();
  await expect(answer.locator('.stopped')).toBeVisible();
  await expect(answer.locator('.research')).toContainText('已停止');
  await expect(page.getByRole('button', { name: '发送' })).toBeVisible();
});
