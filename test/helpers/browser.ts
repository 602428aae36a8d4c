// A real browser for page tests: Debian's Chromium, headless, driven over the DevTools protocol
// (puppeteer-core). scripts/test.sh installs it.
import type { ExecutionContext } from 'ava';
import { existsSync } from 'node:fs';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { ROOT } from '../../ts/paths.ts';

/** Debian's Chromium: the binary itself (/usr/bin/chromium is a wrapper script). */
const CHROMIUM = process.env.STOREMAP_CHROMIUM || ['/usr/lib/chromium/chromium', '/usr/bin/chromium'].find((p) => existsSync(p));
/** Screenshots of page tests (not in git). */
export const ARTIFACTS = path.join(ROOT, 'test-artifacts');

export async function browser(t: ExecutionContext): Promise<Browser> {
  if (!CHROMIUM) throw new Error('Chromium is not installed: apt-get install chromium (scripts/test.sh does)');
  // Root in a container has no user namespaces for Chromium's sandbox.
  const b = await puppeteer.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  t.teardown(() => b.close());
  return b;
}

/** Replaces an input's text as a person would: select it all, delete, type. */
export async function fill(page: Page, selector: string, value: string): Promise<void> {
  await page.click(selector, { count: 3 });
  await page.keyboard.press('Backspace');
  await page.type(selector, value);
}
