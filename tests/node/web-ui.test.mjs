// The web page at `/` (server.web_ui) in a real browser: Debian's Chromium, headless, driven by
// playwright-core, against the live server run.sh starts (API keys on). Every request the page
// makes to anything but this server is blocked and counted: the page needs no network beyond it.
// Screenshots of both pages go to $COURIER_SCREENSHOTS (a folder) when it is set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { chromium } from 'playwright-core';
import { startServer } from './conversation.mjs';

const base = process.env.COURIER_URL.replace(/\/v1$/, '');
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
async function openPage(at = base) {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const outside = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin !== new URL(at).origin) {
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
  await page.goto(at + '/');
  await page.fill('#api-key', key);
  await page.dispatchEvent('#api-key', 'change');
  await page.waitForFunction(() => document.querySelector('#model').options.length > 0);
  return { page, context, outside, errors };
}

async function metric(name, at = base) {
  const text = await (await fetch(at + '/metrics')).text();
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

// The dashboard's prefix-cache cards: the share of looked-up prompt tokens served in all, by
// the device, the host tier and the disk tier, from /metrics' counters (which nest: disk hits
// are host hits too, host hits hits too). The counters must stand still meanwhile.
async function checkTierRates(page, at) {
  const was = await page.evaluate(() => document.body.dataset.metricsRefreshed);
  await page.waitForFunction((w) => document.body.dataset.metricsRefreshed !== w, was);
  const m = async (name) => metric(name, at);
  const queries = await m('courier:prefix_cache_queries_total');
  const hits = await m('courier:prefix_cache_hits_total');
  const host = await m('courier:prefix_cache_host_hits_total');
  const disk = await m('courier:prefix_cache_disk_hits_total');
  assert.ok(queries > 0, 'prompts were looked up');
  const want = { 'prefix-hit': hits, 'hit-device': hits - host, 'hit-host': host - disk,
                 'hit-disk': disk };
  const shown = {};
  for (const [id, tokens] of Object.entries(want)) {
    shown[id] = Number(await page.$eval('#metric-' + id, (e) => e.dataset.value));
    assert.ok(Math.abs(shown[id] - 100 * tokens / queries) < 1e-9, id);
  }
  // What each tier keeps, in blocks.
  for (const [id, name] of [['cached-device', 'courier:prefix_cache_blocks'],
                            ['cached-host', 'courier:kv_host_tier_cached_blocks'],
                            ['cached-disk', 'courier:kv_disk_tier_cached_blocks']]) {
    shown[id] = Number(await page.$eval('#metric-' + id, (e) => e.dataset.value));
    assert.equal(shown[id], await m(name), id);
  }
  return { queries, hits, host, disk, shown };
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

test('web ui: with the browser storage full, the oldest conversation makes room', async () => {
  const { page, context, errors } = await openPage();
  // An old conversation of 512 KB, then junk until the storage refuses more.
  const free = await page.evaluate(() => {
    localStorage.clear();
    const old = { id: 'old', title: 'old', messages: [{ role: 'user', content: 'x'.repeat(1 << 19) }] };
    localStorage.setItem('courier.conversations', JSON.stringify([old]));
    let n = 0;
    for (const size of [1 << 20, 1 << 16, 1 << 10]) {
      for (;;) {
        try {
          localStorage.setItem('junk-' + n, 'j'.repeat(size));
          ++n;
        } catch (e) {
          break;
        }
      }
    }
    return n;
  });
  assert.ok(free > 0, 'the storage filled up');
  await page.reload();
  await page.waitForFunction(() => document.querySelector('#model').options.length > 0);
  await page.click('#new-chat');
  await page.fill('#max-tokens', '8');
  await page.fill('#input', 'y'.repeat(4096));  // more than the kilobyte left
  await page.click('#send');
  await page.locator('.msg.assistant .stats').waitFor({ timeout: 60000 });
  assert.match(await page.locator('#status').textContent(), /oldest conversations were removed/);
  const kept = await page.evaluate(() => JSON.parse(localStorage.getItem('courier.conversations')));
  assert.equal(kept.length, 1);
  assert.notEqual(kept[0].id, 'old');
  assert.equal(kept[0].messages[0].content, 'y'.repeat(4096));
  assert.equal(kept[0].messages.length, 2);
  await page.evaluate(() => localStorage.clear());
  assert.deepEqual(errors, []);
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
  await checkTierRates(page, base);
  // The configuration is /server_info's, every field of it, and the engine's KV cache is the one
  // run.sh asked for.
  await page.waitForFunction(() => document.querySelector('#engine').dataset.loaded === 'true');
  const info = await (await fetch(base + '/server_info',
                                  { headers: { authorization: 'Bearer ' + key } })).json();
  const shown = Object.fromEntries(await page.$$eval('#engine dd',
    (dds) => dds.map((d) => [d.dataset.key, d.textContent])));
  const fields = Object.entries(info).flatMap(([g, o]) => Object.keys(o).map((k) => g + '.' + k));
  assert.deepEqual(Object.keys(shown).sort(), fields.sort());
  assert.equal(shown['kv_cache.num_blocks'], '4,096');
  assert.equal(shown['kv_cache.block_size'], String(info.kv_cache.block_size));
  assert.equal(shown['scheduler.max_waiting'], '4,096');
  assert.equal(shown['model.name'], 'tiny-qwen3');
  assert.equal(shown['model.reasoning_parser'], 'qwen3');
  assert.equal(shown['kv_cache.prefix_caching'], info.kv_cache.prefix_caching ? 'on' : 'off');
  assert.equal(shown['device.name'], info.device.name);
  assert.match(await page.locator('#served').textContent(), /tiny-qwen3, max_model_len \d+/);
  if (process.env.COURIER_SCREENSHOTS) {
    await page.screenshot({ path: path.join(process.env.COURIER_SCREENSHOTS, 'web-ui-dashboard.png'),
                           fullPage: true });
  }
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
  await context.close();
});

test('web ui: reasoning is shown apart from the answer', async () => {
  const { page, context, outside, errors } = await openPage();
  // The tiny model writes no <think> of itself: a regex (the server's grammar) makes it write
  // one, and the server's qwen3 reasoning parser splits it out of the answer.
  await page.route('**/v1/chat/completions', (route) => {
    const body = JSON.parse(route.request().postData());
    body.guided_regex = '<think>[a-z]{4,12}</think>[a-z]{4,12}';
    return route.continue({ postData: JSON.stringify(body) });
  });
  await page.fill('#max-tokens', '64');
  await page.fill('#input', 'Think first');
  await page.click('#send');
  await page.locator('.msg.assistant .stats').waitFor({ timeout: 60000 });
  const reasoning = await page.locator('.msg.assistant .reasoning').textContent();
  const content = await page.locator('.msg.assistant .content').textContent();
  assert.match(reasoning, /^[a-z]{4,12}$/);
  assert.match(content, /^[a-z]{4,12}$/);
  assert.ok(!content.includes('think'), 'no think tag in the answer: ' + content);
  // Shown apart: its own box, styled unlike the answer.
  const style = await page.$eval('.msg.assistant .reasoning', (e) => getComputedStyle(e).fontStyle);
  assert.equal(style, 'italic');
  assert.deepEqual(outside, []);
  assert.deepEqual(errors, []);
  await context.close();
});

// A second server with few KV blocks, a 1 MB host tier and a disk tier, so that a document's
// blocks are pushed out of the device and the host and come back from each tier.
const startTieredServer = (disk) => startServer([
  '--set', 'scheduler.num_kv_blocks=24', '--set', 'cache.host_tier_mb=1',
  '--set', 'cache.disk_tier_gb=0.01', '--set', 'cache.disk_tier_path=' + disk,
]);

test('web ui: the dashboard gives hit rates by tier: device, host and disk', async () => {
  const disk = mkdtempSync(path.join(os.tmpdir(), 'courier-web-disk-'));
  const { server, url } = await startTieredServer(disk);
  try {
    const ask = async (prompt) => {
      const r = await fetch(url + '/v1/completions', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key },
        body: JSON.stringify({ model: 'tiny-qwen3', prompt, max_tokens: 2, ignore_eos: true }),
      });
      assert.equal(r.status, 200, await r.text());
    };
    const doc = Array.from({ length: 160 }, (_, t) => 100 + t);
    await ask(doc);
    for (let k = 0; k < 6; ++k) await ask(Array(300).fill(20 + k));  // push it out of both
    await ask([...doc, 7]);
    await ask([...doc, 8]);  // now back on the device
    // The disk tier's writes and reads settle after the responses.
    await waitFor('the disk tier\'s hit', async () =>
      (await metric('courier:prefix_cache_disk_hits_total', url)) > 0);
    const { page, context, outside, errors } = await openPage(url);
    await page.click('#tab-dash');
    await page.waitForFunction(() => document.body.dataset.metricsRefreshed);
    const c = await checkTierRates(page, url);
    assert.ok(c.disk > 0, 'disk tier hits');
    assert.ok(c.hits - c.host > 0, 'device hits');
    for (const id of ['cached-device', 'cached-host', 'cached-disk']) {
      assert.ok(c.shown[id] > 0, id + ': every tier keeps blocks');
    }
    const sum = ['hit-device', 'hit-host', 'hit-disk'].map(async (id) =>
      Number(await page.$eval('#metric-' + id, (e) => e.dataset.value)));
    const total = (await Promise.all(sum)).reduce((a, b) => a + b, 0);
    const all = Number(await page.$eval('#metric-prefix-hit', (e) => e.dataset.value));
    assert.ok(Math.abs(total - all) < 1e-9, 'the tiers add up to the hit rate');
    assert.deepEqual(outside, []);
    assert.deepEqual(errors, []);
    await context.close();
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.once('exit', r));
    rmSync(disk, { recursive: true, force: true });
  }
});
