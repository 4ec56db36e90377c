/**
 * Debian's Chromium (`apt-get install chromium`), headless, driven by playwright-core: the
 * browser a person would use, never one downloaded by a test tool. The flags keep it from
 * calling out of this machine (background networking, updates, sync) and run it as root.
 */
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = process.env.JANUS_CHROMIUM ?? '/usr/bin/chromium';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  page(): Promise<Page>;
  close(): Promise<void>;
}

/** A fresh profile each time: no cookie of an earlier run, no cache. */
export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`no Chromium at ${CHROMIUM}: apt-get install -y chromium (or set JANUS_CHROMIUM)`);
  }
  const profile = await mkdtemp(join(tmpdir(), 'janus-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    page: () => context.newPage(),
    close: () => context.close(),
  };
}

/** Screenshots for docs/ui/, only when JANUS_UI_SCREENSHOTS=1 asks (CI does not rewrite the docs). */
export async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env.JANUS_UI_SCREENSHOTS !== '1') return;
  const { REPO_ROOT } = await import('./cluster/manifests.ts');
  await page.screenshot({ path: join(REPO_ROOT, 'docs/ui', `${name}.png`), fullPage: true });
}
