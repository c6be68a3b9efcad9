import { test, expect } from '@playwright/test';

test('assets arrive precompressed and cached for a year; the page is revalidated', async ({ page, request }) => {
  const response = await page.goto('/');
  expect(response!.headers()['cache-control']).toBe('no-cache');
  const wasm = await page.locator('link[rel="preload"][type="application/wasm"]').getAttribute('href');
  expect(wasm).toMatch(/^\/pkg\/cited\.[0-9a-f]{16}\.wasm$/);
  const css = await page.locator('link[rel="stylesheet"]#cited').getAttribute('href');
  expect(css).toBe(wasm!.replace(/\.wasm$/, '.css'));
  for (const [encoding, expected] of [['br', 'br'], ['gzip', 'gzip']]) {
    const asset = await request.get(wasm!, { headers: { 'accept-encoding': encoding } });
    expect(asset.status()).toBe(200);
    expect(asset.headers()['content-encoding']).toBe(expected);
    expect(asset.headers()['cache-control']).toBe('public, max-age=31536000, immutable');
  }
});
