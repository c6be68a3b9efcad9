import { test, expect, type Page } from '@playwright/test';
import { askQuestion, openHydrated } from './helpers';

/**
 * The last answer's rendered Markdown as a canonical string: elements with their attributes
 * sorted (the server writes `class` first, the browser in the order it sets them), class
 * names sorted, and text;
 * the comment nodes hydration uses are dropped and the text around them joined.
 */
async function answerDom(page: Page): Promise<string> {
  return page.locator('.answer-body').last().evaluate((body) => {
    const copy = body.cloneNode(true) as HTMLElement;
    const walker = document.createTreeWalker(copy, NodeFilter.SHOW_COMMENT);
    const comments: Node[] = [];
    while (walker.nextNode()) comments.push(walker.currentNode);
    comments.forEach((node) => node.parentNode?.removeChild(node));
    copy.normalize();
    const canonical = (node: Node): string => {
      if (node.nodeType === Node.TEXT_NODE) return JSON.stringify(node.textContent);
      const element = node as Element;
      const tag = element.tagName.toLowerCase();
      // Class lists compare as sets of names (the server may leave an empty slot's space).
      const value = (a: Attr) => (a.name === 'class' ? a.value.split(/\s+/).filter(Boolean).sort().join(' ') : a.value);
      const attributes = [...element.attributes].map((a) => `${a.name}=${JSON.stringify(value(a))}`).sort().join(' ');
      return `<${tag} ${attributes}>${[...element.childNodes].map(canonical).join('')}</${tag}>`;
    };
    return canonical(copy);
  });
}

test('a long streamed answer ends with exactly the DOM of its one-shot render', async ({ page }) => {
  test.setTimeout(90_000);
  await openHydrated(page);
  // About 12.6 KB of Markdown in about 1,800 chunks (fake-services.mjs, longAnswer).
  await askQuestion(page, 'Tokio 长回答');
  const answer = page.locator('.answer').last();
  await expect(answer).toHaveAttribute('aria-busy', 'false', { timeout: 60_000 });
  // The answer ends when its citations are checked: the verdicts come after the last chunk,
  // and the page shows no sign of them until a card opens, so they are given time.
  await page.waitForTimeout(3_000);
  const streamed = await answerDom(page);
  expect(streamed.length).toBeGreaterThan(12_000);
  // Headings, lists, a table, code, quotes and citation links all made it.
  for (const tag of ['<h3 ', '<ul ', '<table ', '<pre ', '<blockquote ', '<sup ']) {
    expect(streamed).toContain(tag);
  }
  // The same conversation rendered at once: on the server, then hydrated.
  // It is saved once checked, a moment after the verdicts: reload until the page has it.
  await expect(async () => {
    await page.reload();
    await expect(page.locator('.app')).toHaveAttribute('data-hydrated', 'true');
    await expect(page.locator('.answer-body').last()).toBeAttached({ timeout: 2_000 });
    expect(await answerDom(page)).toBe(streamed);
  }).toPass({ timeout: 30_000 });
});
