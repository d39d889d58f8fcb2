// Debian's Chromium, headless, driven by playwright-core (no browser download), on the page
// that `make web` built into target/web/.

import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveStatic } from '../../scripts/static-server.mjs';
import { TARGET } from './processes.mjs';

const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
];

/** Why the browser tests cannot run here, or undefined when they can. */
export function browserUnavailable() {
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (scripts/ensure-chromium.sh installs it)`;
  if (!existsSync(join(TARGET, 'web', 'app.js'))) return 'target/web is not built (make web)';
  return undefined;
}

/** A browser with the page served; `open(query)` loads it and waits until it is ready. */
export async function startBrowser() {
  const site = await serveStatic(join(TARGET, 'web'));
  const profile = await mkdtemp(join(tmpdir(), 'chromium-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
  });
  const problems = [];
  return {
    problems,
    async open(query = '') {
      const page = await context.newPage();
      page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
      page.on('console', (m) => m.type() === 'error' && problems.push(`console error: ${m.text()}`));
      await page.goto(`${site.url}index.html${query}`);
      await page.evaluate(() => window.agentPage.ready);
      return page;
    },
    async close() {
      await context.close();
      await site.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
