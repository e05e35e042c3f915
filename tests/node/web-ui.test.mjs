// The web page at `/` (server.web_ui) in a real browser: Debian's Chromium, headless, driven by
// playwright-core, against the live server run.sh starts (API keys on). Every request the page
// makes to anything but this server is blocked and counted: the page needs no network beyond it.
// Screenshots of both pages go to $COURIER_SCREENSHOTS (a folder) when it is set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { chromium } from 'playwright-core';

const base = process.env.COURIER_URL.replace(/\/v1$/, '');
const origin = new URL(base).origin;
const key = 'test-key';
const chromiumPath = process.env.COURIER_CHROMIUM || '/usr/bin/chromium';
let browser;

before(async () => {
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless=new', '--no-sandbox', '--disable-background-networking',
           '--disable-component-update', '--disable-default-apps', '--disable-sync',
           '--disable-domain-reliability', '--no-first-run', '--metrics-recording-only'],
  });
});

after(async () => {
  if (browser) await browser.close();
});

// A fresh page on `/` with the API key entered and the models listed.
async function openPage() {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const outside = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== origin) {
      outside.push(url.href);
      return route.abort();
    }
    return route.continue();
  });
  // A returning user: the key is in this tab's storage already (a first visit without it gets
  // a 401 for the models until the key is entered, which the browser logs as an error).
  await context.addInitScript((k) => sessionStorage.setItem('courier.apiKey', k), key);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(base + '/');
  await page.fill('#api-key', key);
  await page.dispatchEvent('#api-key', 'change');
  await page.waitForFunction(() => document.querySelector('#model').options.length > 0);
  return { page, context, outside, errors };
}

async function metric(name) {
  const text = await (await fetch(base + '/metrics')).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(name + '{') || line.startsWith(name + ' ')) {
      sum += parseFloat(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

async function waitFor(what, fn, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('web ui: a message gets a streamed reply with its TTFT and speed', async () => {
  const { page, context, outside, errors } = await openPage();
  assert.equal(await page.$eval('#model', (s) => s.value), 'tiny-qwen3');
  await page.fill('#max-tokens', '24');
  await page.fill('#input', 'Say hello');
  await page.click('#send');
  const stats = page.locator('.msg.assistant .stats');
  await stats.waitFor({ timeout: 60000 });
  const reply = await page.locator('.msg.assistant .content').textContent();
  assert.ok(reply.length > 0, 'the reply has text');
  const text = await stats.textContent();
  assert.match(text, /TTFT \d+ ms/);
  assert.match(text, /\d+ prompt \+ \d+ tokens/);
  assert.match(text, /tok\/s/);
  // The conversation is kept in this browser's storage, and comes back on a reload.
  await page.reload();
  await page.locator('.msg.user').first().waitFor();
  assert.equal(await page.locator('.msg.user .content').first().textContent(), 'Say hello');
  if (process.env.COURIER_SCREENSHOTS) {
    await page.screenshot({ path: path.join(process.env.COURIER_SCREENSHOTS, 'web-ui-chat.png') });
  }
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('web ui: stop aborts a reply, and the server runs nothing after it', async () => {
  const { page, context, outside } = await openPage();
  await page.fill('#max-tokens', '4000');
  await page.fill('#input', 'Write a long story');
  await page.click('#send');
  await page.waitForFunction(
    () => (document.querySelector('.msg.assistant .content') || {}).textContent?.length > 0,
    null, { timeout: 60000 });
  assert.equal(await metric('courier:num_requests_running'), 1);
  await page.click('#stop');
  await page.locator('.msg.assistant .stats').waitFor();
  assert.match(await page.locator('.msg.assistant .stats').textContent(), /stopped/);
  await waitFor('no request running', async () =>
    (await metric('courier:num_requests_running')) === 0);
  assert.deepEqual(outside, []);
  await context.close();
});

test('web ui: the settings go into the request', async () => {
  const { page, context } = await openPage();
  let sent = null;
  page.on('request', (r) => {
    if (r.url().endsWith('/v1/chat/completions')) sent = JSON.parse(r.postData());
  });
  await page.fill('#system', 'Answer in JSON.');
  await page.fill('#temperature', '0.3');
  await page.fill('#top-p', '0.5');
  await page.fill('#max-tokens', '16');
  await page.check('#json-mode');
  await page.fill('#input', 'Hi');
  await page.click('#send');
  await page.locator('.msg.assistant .stats').waitFor({ timeout: 60000 });
  assert.ok(sent, 'the page sent a chat completion');
  assert.equal(sent.temperature, 0.3);
  assert.equal(sent.top_p, 0.5);
  assert.equal(sent.max_tokens, 16);
  assert.equal(sent.stream, true);
  assert.deepEqual(sent.messages[0], { role: 'system', content: 'Answer in JSON.' });
  assert.equal(sent.response_format.type, 'json_schema');
  assert.deepEqual(sent.response_format.json_schema.schema.required, ['answer']);
  // The reply follows the schema (the server's grammar): it opens the object it asks for.
  assert.match(await page.locator('.msg.assistant .content').textContent(), /^\s*\{/);
  await context.close();
});

test('web ui: the dashboard shows what /metrics says', async () => {
  const { page, context, outside, errors } = await openPage();
  await page.click('#tab-dash');
  await page.waitForFunction(() => document.body.dataset.metricsRefreshed);
  // Nothing runs now, so the counters stand still: the next refresh must show /metrics' values.
  const want = {
    running: await metric('courier:num_requests_running'),
    waiting: await metric('courier:num_requests_waiting'),
    generated: await metric('courier:generation_tokens_total'),
    preemptions: await metric('courier:num_preemptions_total'),
  };
  const was = await page.evaluate(() => document.body.dataset.metricsRefreshed);
  await page.waitForFunction((w) => document.body.dataset.metricsRefreshed !== w, was);
  for (const [id, value] of Object.entries(want)) {
    const shown = await page.$eval('#metric-' + id, (e) => e.dataset.value);
    assert.equal(Number(shown), value, id);
  }
  assert.ok(want.generated > 0, 'the tests before generated tokens');
  const hits = await metric('courier:prefix_cache_hits_total');
  const queries = await metric('courier:prefix_cache_queries_total');
  const shownHit = Number(await page.$eval('#metric-prefix-hit', (e) => e.dataset.value));
  assert.ok(Math.abs(shownHit - 100 * hits / queries) < 1e-9, 'prefix cache hit rate');
  if (process.env.COURIER_SCREENSHOTS) {
    await page.screenshot({ path: path.join(process.env.COURIER_SCREENSHOTS, 'web-ui-dashboard.png') });
  }
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
  await context.close();
});
