/**
 * The reference web client (examples/web-chat/) in headless Chromium, as two
 * people use it: two browser contexts, each signed in as its own user,
 * against an instance that runs the client's trusted documents only. A
 * second instance (sharing Cassandra and Redis) is where the test itself
 * writes, as other people's clients would.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { App } from '../../src/app.js';
import { ManualClock, startApp, stopApp } from '../testkit/app.js';
import { seedHistory } from '../testkit/data/seed-history.js';
import { projectPath } from '../../src/project-root.js';
import { launchChromium } from '../testkit/browser.js';
import { freePort } from '../testkit/free-port.js';
import { post, roomWith } from '../testkit/data/rooms.js';
import { signUp, type TestUser } from '../testkit/data/users.js';
import { gqlOk } from '../testkit/http.js';
import { JoinRoomDocument, RoomReadStateDocument } from '../generated/graphql.js';
import { buildWebChat, MANIFEST, serveWebChat, type WebChatServer } from '../../examples/web-chat/serve.js';

let api: App;
let writer: App;
let web: WebChatServer;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const webPort = await freePort();
  const origin = `http://127.0.0.1:${webPort}`;
  [api, writer, browser] = await Promise.all([
    startApp({ redis: true, env: { TRUSTED_DOCUMENTS: 'only', TRUSTED_DOCUMENTS_FILE: MANIFEST, CORS_ORIGINS: origin } }),
    startApp({ redis: true }),
    launchChromium(),
    buildWebChat(),
  ]);
  web = await serveWebChat(`${api.url}/graphql`, webPort);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await web?.close();
});

/** A page of the client in a browser context of its own (its own session and network). */
async function openClient(): Promise<{ context: BrowserContext; page: Page; errors: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1100, height: 760 } });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(web.url);
  return { context, page, errors };
}

async function signIn(page: Page, user: TestUser) {
  await page.getByPlaceholder('login').fill(user.login);
  await page.getByPlaceholder('password').fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => page.getByTestId('connection').count()).toBe(1);
}

/** The message contents the room view shows, top to bottom. */
const shown = (page: Page) => page.getByTestId('content').allInnerTexts();

async function typeAndSend(page: Page, text: string) {
  await page.getByLabel('Message', { exact: true }).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

describe('the reference web client', () => {
  it('signs up, and two people chat live, each seeing the other\'s messages, replies, reactions and typing', async () => {
    const alice = await signUp(writer);
    const { page: bobPage } = await openClient();
    // Bob signs up through the page.
    const bobLogin = `bob${Date.now().toString(36)}`;
    await bobPage.getByRole('button', { name: 'New here? Sign up' }).click();
    for (const [field, value] of [['login', bobLogin], ['password', 'correct horse battery'], ['first name', 'Bob'], ['last name', 'Builder'], ['email', `${bobLogin}@example.com`]]) {
      await bobPage.getByPlaceholder(field!, { exact: true }).fill(value!);
    }
    await bobPage.getByRole('button', { name: 'Sign up' }).click();
    await expect.poll(() => bobPage.getByTestId('me').innerText()).toBe(bobLogin);

    // Bob joins a room of Alice's with the session the page keeps.
    const room = await roomWith(writer, alice);
    const bobToken = await bobPage.evaluate(() => (JSON.parse(sessionStorage.getItem('parley.session')!) as { token: string }).token);
    await gqlOk(writer, JoinRoomDocument, { roomName: room }, bobToken);

    const { page: alicePage, errors } = await openClient();
    await signIn(alicePage, alice);
    await bobPage.reload();
    for (const page of [alicePage, bobPage]) await page.getByTestId(`room-${room}`).click();

    await typeAndSend(alicePage, 'Hello Bob');
    await expect.poll(() => shown(bobPage)).toContain('Hello Bob');
    // Bob types: Alice sees him typing, then his answer.
    await bobPage.getByLabel('Message', { exact: true }).fill('Hi Al');
    await expect.poll(() => alicePage.getByTestId('typing').innerText()).toMatch(/Bob Builder is typing/);
    await bobPage.getByRole('button', { name: 'Send' }).click();
    await expect.poll(async () => (await shown(alicePage)).filter((t) => t.startsWith('H'))).toEqual(['Hello Bob', 'Hi Al']);

    // Alice reacts to Bob's message and replies to it; Bob sees both live.
    const bobsMessage = alicePage.getByTestId('message').filter({ hasText: 'Hi Al' });
    await bobsMessage.getByRole('button', { name: 'React with thumbs up' }).click();
    await expect.poll(() => bobPage.getByTestId('message').filter({ hasText: 'Hi Al' }).getByTestId('reaction').innerText()).toBe('👍 1');
    await bobsMessage.getByRole('button', { name: /^Reply/ }).click();
    await typeAndSend(alicePage, 'Glad you are here');
    await expect.poll(() => bobPage.getByTestId('message').filter({ hasText: 'Glad you are here' }).innerText()).toMatch(/↪ .*Hi Al/);
    expect(errors).toEqual([]);
  });

  it('shows every message once and in order after its browser was offline while 20 were posted', async () => {
    const [alice, bob] = await Promise.all([signUp(writer), signUp(writer)]);
    const room = await roomWith(writer, alice, [bob]);
    await post(writer, alice, room, 'before the drop');
    const { context, page, errors } = await openClient();
    await signIn(page, bob);
    await page.getByTestId(`room-${room}`).click();
    await expect.poll(() => shown(page)).toContain('before the drop');

    await context.setOffline(true);
    await expect.poll(() => page.getByTestId('connection').innerText()).toBe('offline');
    const missed = Array.from({ length: 20 }, (_, i) => `while away ${i + 1}`);
    for (const text of missed) await post(writer, alice, room, text);
    await context.setOffline(false);

    // Back online, the feed resumes from the last event it had: each message once, in the order posted.
    await expect.poll(() => shown(page), { timeout: 20_000 }).toEqual(expect.arrayContaining(missed));
    const after = (await shown(page)).filter((t) => t.startsWith('while away') || t === 'before the drop');
    expect(after).toEqual(['before the drop', ...missed]);
    await expect.poll(() => page.getByTestId('connection').innerText()).toBe('live');
    // And live again: the next message arrives without a reload.
    await post(writer, alice, room, 'live again');
    await expect.poll(() => shown(page)).toContain('live again');
    expect(errors).toEqual([]);
  });

  it("counts a background room's unread messages and mentions exactly, and clears them when it is opened", async () => {
    const [alice, bob] = await Promise.all([signUp(writer), signUp(writer)]);
    const [front, back] = [await roomWith(writer, alice, [bob]), await roomWith(writer, alice, [bob])];
    const { page, errors } = await openClient();
    await signIn(page, bob);
    await page.getByTestId(`room-${front}`).click();
    // Whatever the joins left unread in the background room is read first, so the count below starts at zero.
    await page.getByTestId(`room-${back}`).click();
    await expect.poll(() => page.getByTestId(`unread-${back}`).count()).toBe(0);
    await page.getByTestId(`room-${front}`).click();

    await post(writer, alice, back, 'one');
    await post(writer, alice, back, `two, @${bob.login}`);
    await post(writer, alice, back, 'three');
    await expect.poll(() => page.getByTestId(`unread-${back}`).innerText()).toBe('3');
    await expect.poll(() => page.getByTestId(`mentions-${back}`).innerText()).toBe('@1');
    // The open room gets messages too, and stays without a badge: what is shown is read.
    await post(writer, alice, front, 'in the open room');
    await expect.poll(() => shown(page)).toContain('in the open room');
    const unreadOf = async (roomName: string) => (await gqlOk(writer, RoomReadStateDocument, { roomName }, bob.token)).room?.readState.unreadCount;
    await expect.poll(() => unreadOf(front)).toBe(0);
    await expect.poll(() => page.getByTestId(`unread-${front}`).count()).toBe(0);
    await expect.poll(() => page.getByTestId(`unread-${back}`).innerText()).toBe('3');

    await page.getByTestId(`room-${back}`).click();
    await expect.poll(() => shown(page)).toEqual(expect.arrayContaining(['one', `two, @${bob.login}`, 'three']));
    await expect.poll(() => unreadOf(back)).toBe(0);
    // Leaving a room keeps it read: no badge comes back for the room left.
    await expect.poll(() => page.getByTestId(`unread-${front}`).count()).toBe(0);
    await expect.poll(() => page.getByTestId(`unread-${back}`).count()).toBe(0);
    await expect.poll(() => page.getByTestId(`mentions-${back}`).count()).toBe(0);

    // The room view as people see it (examples/web-chat/screenshot.png is one of these).
    await page.screenshot({ path: join(process.env.WEB_CHAT_SCREENSHOT_DIR ?? tmpdir(), 'web-chat-screenshot.png') });
    expect(errors).toEqual([]);
  });

  it('uploads an image through the page, and the other person sees it shown', async () => {
    const [alice, bob] = await Promise.all([signUp(writer), signUp(writer)]);
    const room = await roomWith(writer, alice, [bob]);
    const [a, b] = [await openClient(), await openClient()];
    await signIn(a.page, alice);
    await signIn(b.page, bob);
    for (const { page } of [a, b]) await page.getByTestId(`room-${room}`).click();
    await a.page.getByLabel('Attach a file').setInputFiles(projectPath('examples', 'web-chat', 'screenshot.png'));
    await expect.poll(() => a.page.getByTestId('pending-files').innerText()).toMatch(/screenshot\.png/);
    await typeAndSend(a.page, 'our room, as it looks');
    // On the other screen: the message, and its image loaded from its signed link (decoded at its real size).
    const image = b.page.getByTestId('message').filter({ hasText: 'our room, as it looks' }).getByTestId('attachment-image');
    await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1100);
    expect(await image.evaluate((img: HTMLImageElement) => img.naturalHeight)).toBe(760);
    expect([...a.errors, ...b.errors]).toEqual([]);
  });

  it('pages history back as the viewer scrolls up', async () => {
    // History from an hour ago, written by an instance whose clock says so: older than any live feed's catch-up
    // replays (the last half minute), so only paging back shows it.
    const past = await startApp({ redis: true, clock: new ManualClock(new Date(Date.now() - 3_600_000)) });
    const [alice, bob] = await Promise.all([signUp(past), signUp(past)]);
    const room = await roomWith(past, alice, [bob]);
    const texts = Array.from({ length: 70 }, (_, i) => `history ${i + 1}`);
    const incarnation = (await past.services.stores.rooms.byName(room))!;
    const start = past.services.clock.now().getTime() + 60_000;
    await seedHistory(past, incarnation, { login: alice.login, firstname: alice.firstname, lastname: alice.lastname }, texts.map((_, i) => new Date(start + i * 1000)), {
      contentOf: (_at, i) => texts[i]!,
    });
    await stopApp(past);
    const { page } = await openClient();
    // The history requests the page makes, by the trusted document's id.
    const manifest = JSON.parse(readFileSync(MANIFEST, 'utf8')) as Record<string, string>;
    const historyHash = Object.keys(manifest).find((id) => manifest[id]!.includes('query WebRoomHistory'))!.replace(/^sha256:/, '');
    let historyRequests = 0;
    page.on('request', (req) => {
      if (req.url().includes(historyHash) || req.postData()?.includes(historyHash)) historyRequests += 1;
    });
    await signIn(page, bob);
    await page.getByTestId(`room-${room}`).click();
    // Scrolling to the top loads the page before, until the room's beginning: all 70, in order, a page at a time.
    await expect
      .poll(
        async () => {
          await page.getByTestId('messages').evaluate((el) => el.scrollTo(0, 0));
          return (await shown(page)).filter((t) => t.startsWith('history'));
        },
        { timeout: 20_000 },
      )
      .toEqual(texts);
    expect(historyRequests).toBeGreaterThanOrEqual(3);
  });
});
