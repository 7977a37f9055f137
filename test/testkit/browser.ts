/**
 * Debian's Chromium driven by playwright-core: no browser download. The flags
 * keep it from reaching out to Google's services, which this network refuses.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    return Promise.reject(new Error(`no Chromium at ${CHROMIUM_PATH}: install it (apt-get install -y chromium), or name it in CHROMIUM_PATH`));
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
