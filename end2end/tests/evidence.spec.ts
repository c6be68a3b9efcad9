import { test, expect } from '@playwright/test';
import { askQuestion, openHydrated } from './helpers';

// After an answer, each citation is checked against its source. The fixture pages are on
// the internet, which this machine cannot reach, so the server checks against the search
// snippets; the card quotes the passage, names its level and links to it on the page.
test('a citation card shows the passage that supports its sentence, with its level', async ({ page, isMobile }) => {
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const answer = page.locator('.answer').last();
  // The footer counts the checked citations once the check is done.
  await expect(answer.locator('.answer-meta')).toContainText(/来源支持：\d+\/\d+ 处引用/);
  const cite = answer.getByRole('link', { name: /^引用 1/ });
  if (isMobile) await cite.tap(); else await cite.hover();
  const card = page.getByRole('tooltip');
  await expect(card).toBeVisible();
  const level = card.locator('.support-level');
  await expect(level).toHaveText(/^(支持|部分支持|未找到支持|未能核对)$/);
  await expect(card).toContainText('来源中的相关段落');
  await expect(card.locator('.cite-passage')).toContainText('Tokio');
  await expect(card.locator('.cite-passage mark').first()).toBeVisible();
  const at = card.getByRole('link', { name: /在原文中打开此段/ });
  await expect(at).toHaveAttribute('href', /^https:\/\/docs\.example\.org\/tokio\/tutorial\/#:~:text=/);
  // The reference list shows each source's best check too.
  const references = answer.getByRole('region', { name: '参考文献' });
  await expect(references.locator('.source-check .support-level').first()).toHaveText(/^(支持|部分支持|未找到支持|未能核对)$/);
  await expect(references.locator('.source-check .cite-passage').first()).toContainText('Tokio');
  // A citation its source does not fully support says so in its accessible name.
  const shown = (await level.textContent()) ?? '';
  if (shown === '支持') {
    await expect(cite).toHaveAccessibleName(/^引用 1：Tokio tutorial$/);
  } else {
    await expect(cite).toHaveAccessibleName(`引用 1：Tokio tutorial（${shown}）`);
  }
});

test('the keyboard opens the card with its passage too', async ({ page, isMobile }) => {
  test.skip(isMobile, 'keyboard');
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const answer = page.locator('.answer').last();
  await expect(answer.locator('.answer-meta')).toContainText('来源支持');
  await answer.getByRole('link', { name: /^引用 2/ }).focus();
  const card = page.getByRole('tooltip');
  await expect(card.locator('.support-level')).toBeVisible();
  await expect(card.locator('.cite-passage')).not.toBeEmpty();
  await page.keyboard.press('Escape');
  await expect(card).toBeHidden();
});

// The second sentence (Chinese) cites an English page that says nothing the dictionary can
// match to it: the checker cannot tell, and says so rather than accuse.
test('a citation the checker cannot judge says 未能核对, by hover, tap and keyboard', async ({ page, isMobile }) => {
  await openHydrated(page);
  await askQuestion(page, 'Tokio 是什么运行时？');
  const answer = page.locator('.answer').last();
  await expect(answer.locator('.answer-meta')).toContainText(/，1 处未能核对/);
  const cite = answer.getByRole('link', { name: /^引用 2/ });
  await expect(cite).toHaveAccessibleName(/（未能核对）$/);
  if (isMobile) await cite.tap(); else await cite.hover();
  const card = page.getByRole('tooltip');
  await expect(card.locator('.support-level')).toHaveText('未能核对');
  await expect(answer.locator('.cite.unchecked')).toHaveCount(1);
  await expect(answer.locator('.cite.unsupported')).toHaveCount(0);
  if (!isMobile) {
    await page.mouse.move(0, 0);
    await expect(card).toBeHidden();
    await cite.focus();
    await expect(page.getByRole('tooltip').locator('.support-level')).toHaveText('未能核对');
  }
});
