/**
 * GraphiQL as a person uses it, in headless Chromium: the token goes in the
 * Headers editor, and a query and a live subscription both run with it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { App } from '../../src/app.js';
import { roomChannel } from '../../src/resolvers/rooms/live/feed.js';
import { startApp } from '../testkit/app.js';
import { launchChromium } from '../testkit/browser.js';
import { eventually } from '../testkit/poll.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { signUp } from '../testkit/data/users.js';

let app: App;
let browser: Browser;
beforeAll(async () => {
  [app, browser] = await Promise.all([startApp(), launchChromium()]);
});
afterAll(async () => {
  await browser?.close();
});

/** Replaces the content of a GraphiQL (Monaco) editor as a person would: click, select all, type. */
async function fillEditor(page: Page, editor: 'operation' | 'headers', text: string) {
  // GraphiQL names each Monaco model by a file: …-operation.graphql, …-variables.json, …-headers.json.
  await page.locator(`.monaco-editor[data-uri$="${editor === 'operation' ? '.graphql' : '-headers.json'}"]`).click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  // insertText types the whole text at once, so the editor's auto-closing brackets add nothing.
  await page.keyboard.insertText(text);
}

/** Runs the operation in the editor, once GraphiQL has taken it in (its tab is named after it). */
async function run(page: Page, operationName: string) {
  await page.locator('.graphiql-tab-button', { hasText: new RegExp(`^${operationName}$`) }).waitFor();
  await page.keyboard.press('Control+Enter');
}

/** The result pane's text; Monaco renders spaces as no-break spaces. */
async function resultText(page: Page): Promise<string> {
  return (await page.locator('.graphiql-response').innerText()).replace(/\s+/g, ' ');
}

describe('GraphiQL in a browser', () => {
  it('runs a query and a roomEvents subscription with the token from its Headers editor', async () => {
    const [viewer, author] = await Promise.all([signUp(app), signUp(app)]);
    const room = await roomWith(app, author, [viewer]);
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    await page.goto(`${app.url}/graphql`);

    // The default document shows the flow to a newcomer.
    await expect.poll(() => page.locator('.graphiql-query-editor').innerText()).toMatch(/Authorization/);

    await page.getByRole('button', { name: /^headers$/i }).click();
    await fillEditor(page, 'headers', JSON.stringify({ Authorization: `Bearer ${viewer.token}` }));

    await fillEditor(page, 'operation', 'query Me { me { login } }');
    await run(page, 'Me');
    await expect.poll(() => resultText(page), { timeout: 15_000 }).toContain(viewer.login);

    await fillEditor(
      page,
      'operation',
      `subscription Feed { roomEvents(roomName: "${room}") { __typename ... on MessagePosted { message { content } } } }`,
    );
    await run(page, 'Feed');
    await eventually(() => app.services.pubsub.listeners(roomChannel(room)) === 1, {
      what: 'the subscription to be live',
      timeoutMs: 15_000,
    });

    await post(app, author, room, 'seen in GraphiQL');
    await expect.poll(() => resultText(page), { timeout: 15_000 }).toContain('seen in GraphiQL');
    expect(await resultText(page)).not.toMatch(/UNAUTHENTICATED/);
    expect(pageErrors).toEqual([]);
    await page.close();
  });
});
