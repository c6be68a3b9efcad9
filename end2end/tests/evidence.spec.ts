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

// The model left a claim uncited that a source states: cited adds its own citation, shown
// as an addition and counted apart; a citation of a source that states only part of its
// sentence names the one that states it all; a claim no source states gets a quiet mark. The words stay the
// model's.
test('cited adds the citations the model left out, shows them as additions and marks what nothing supports', async ({ page, isMobile }) => {
  await openHydrated(page);
  await askQuestion(page, 'attribute: how do lighthouses work?');
  const answer = page.locator('.answer').last();
  await expect(answer.locator('.answer-meta')).toContainText('引用覆盖：2/3 句，其中 1 处由 cited 补充');
  // The model's words as it wrote them, cited's marks between its sentences.
  await expect(answer.locator('.answer-body')).toContainText('A lighthouse guides ships at night.1 The first lighthouses burned wood 1. Bananas');
  // The addition: its own look, its own name, its own line in the card.
  const added = answer.getByRole('link', { name: '引用 1：Lighthouses of the coast（由 cited 补充）' });
  await expect(added).toBeVisible();
  await expect(answer.locator('.cite.added')).toHaveCount(1);
  if (isMobile) await added.tap(); else await added.hover();
  const card = page.getByRole('tooltip');
  await expect(card.locator('.cite-added')).toHaveText('由 cited 补充');
  await expect(card.locator('.support-level')).toHaveText('支持');
  await expect(card.locator('.cite-passage')).toContainText('A lighthouse guides ships at night');
  if (!isMobile) {
    await page.mouse.move(0, 0);
    await expect(card).toBeHidden();
    await added.focus();
    await expect(page.getByRole('tooltip').locator('.cite-added')).toHaveText('由 cited 补充');
    await page.keyboard.press('Escape');
  } else {
    await answer.locator('.answer-meta').tap();
  }
  await expect(page.getByRole('tooltip')).toHaveCount(0);
  // The model's own citation of a source that states only part of the sentence points to
  // the one that states it all.
  const own = answer.getByRole('link', { name: '引用 1：Lighthouses of the coast（部分支持）' });
  if (isMobile) await own.tap(); else await own.hover();
  const better = page.getByRole('tooltip').getByRole('link', { name: '来源 [2] 支持此句' });
  await expect(better).toHaveAttribute('href', 'https://lights.example.org/history');
  // What no source states: marked, quietly, with its meaning as its name.
  await expect(answer.getByRole('img', { name: '没有来源支持此句' })).toHaveCount(1);
  // The reference list holds the sources either citation uses.
  const references = answer.getByRole('region', { name: '参考文献' });
  await expect(references.locator('li')).toHaveCount(1);
  // After a reload the stored answer shows the same.
  await openHydrated(page);
  const stored = page.locator('.answer').last();
  await expect(stored.getByRole('link', { name: '引用 1：Lighthouses of the coast（由 cited 补充）' })).toBeVisible();
  await expect(stored.getByRole('img', { name: '没有来源支持此句' })).toHaveCount(1);
  await expect(stored.locator('.answer-meta')).toContainText('其中 1 处由 cited 补充');
});
