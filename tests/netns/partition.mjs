// A replica cut off from its front end mid-run, on separate network hosts. Run by run.sh inside
// a user and network namespace of its own (unshare -rnm), where this process is root:
//
//   host (this namespace): the front end, HTTP on 127.0.0.1, routing round robin
//     |- veth 10.77.1.1 <-> 10.77.1.2  namespace r1: replica 1 (2 sequences at a time)
//     |- veth 10.77.2.1 <-> 10.77.2.2  namespace r2: replica 2 (2 sequences at a time)
//
// 12 streaming completions (greedy, ignore_eos) run, 6 on each replica; once 4 stream (each
// replica's 2 running), r1's link goes down: no FIN, no RST, the TCP connection just stops.
// Then:
//   - every request ends (none hangs): those r1 had not started are served by r2 with exactly
//     the text they give undisturbed; those that had streamed end with an error naming r1;
//   - new requests are served (by r2) while r1 is cut off;
//   - the link back up, r1 is up again: it serves new requests, and ends with nothing running
//     or waiting and no KV block held (what it was cut off from was cancelled or finished).
//   usage: node partition.mjs path/to/courier path/to/model
import { spawn, execFileSync } from 'node:child_process';
import assert from 'node:assert/strict';

const [courier, model] = process.argv.slice(2);
const procs = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ip = (...args) => execFileSync('ip', args, { stdio: 'pipe' }).toString();

function start(name, argv) {
  const p = spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
  p.log = '';
  p.stdout.on('data', (d) => (p.log += d));
  p.stderr.on('data', (d) => (p.log += d));
  p.name = name;
  procs.push(p);
  return p;
}

async function waitFor(p, re, seconds = 60) {
  for (let i = 0; i < seconds * 10; i++) {
    const m = p.log.match(re);
    if (m) return m;
    if (p.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`${p.name}: no ${re} in its log:\n${p.log}`);
}

function count(text, re) {
  return (text.match(re) || []).length;
}

// Sums every sample of `name` in a Prometheus text.
function metric(text, name) {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(name + ' ') || line.startsWith(name + '{')) {
      sum += Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return sum;
}

// One streaming completion; resolves to what the client saw.
async function complete(base, prompt, maxTokens, onToken = () => {}) {
  const out = { text: '', streamed: 0, finish: null, error: null };
  const res = await fetch(`${base}/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'tiny-qwen3', prompt, max_tokens: maxTokens, temperature: 0, ignore_eos: true,
      stream: true,
    }),
    signal: AbortSignal.timeout(120_000), // a hung request fails the test
  });
  if (!res.ok) {
    out.error = `HTTP ${res.status}: ${await res.text()}`;
    return out;
  }
  const decoder = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body) {
    buf += decoder.decode(chunk, { stream: true });
    let nl;
    while ((nl = buf.indexOf('\n\n')) >= 0) {
      const event = buf.slice(0, nl);
      buf = buf.slice(nl + 2);
      const data = event.replace(/^data: /, '');
      if (data === '[DONE]') continue;
      const j = JSON.parse(data);
      if (j.error) {
        out.error = j.error.message;
        continue;
      }
      const c = j.choices[0];
      if (c.text) {
        out.text += c.text;
        out.streamed++;
        onToken();
      }
      if (c.finish_reason) out.finish = c.finish_reason;
    }
  }
  return out;
}

async function main() {
  ip('link', 'set', 'lo', 'up');
  for (const i of [1, 2]) {
    ip('netns', 'add', `r${i}`);
    ip('link', 'add', `v${i}h`, 'type', 'veth', 'peer', 'name', `v${i}r`);
    ip('link', 'set', `v${i}r`, 'netns', `r${i}`);
    ip('addr', 'add', `10.77.${i}.1/24`, 'dev', `v${i}h`);
    ip('link', 'set', `v${i}h`, 'up');
    ip('netns', 'exec', `r${i}`, 'ip', 'addr', 'add', `10.77.${i}.2/24`, 'dev', `v${i}r`);
    ip('netns', 'exec', `r${i}`, 'ip', 'link', 'set', `v${i}r`, 'up');
    ip('netns', 'exec', `r${i}`, 'ip', 'link', 'set', 'lo', 'up');
  }
  const replicaUrls = [];
  for (const i of [1, 2]) {
    const r = start(`replica ${i}`, [
      'ip', 'netns', 'exec', `r${i}`, courier, 'serve', '--model', model, '--backend', 'sim',
      '--set', `server.host=10.77.${i}.2`, '--set', 'server.port=0',
      '--set', `cluster.listen=10.77.${i}.2:7070`, '--set', 'device.sim.threads=1',
      '--set', 'device.sim.memory_mb=512', '--set', 'scheduler.num_kv_blocks=512',
      '--set', 'scheduler.max_num_seqs=2']);
    replicaUrls.push((await waitFor(r, /at (http:\/\/[0-9.:]+)\/v1/))[1]);
  }
  const front = start('front end', [
    courier, 'serve', '--model', model, '--backend', 'sim', '--set', 'server.port=0',
    '--set', 'cluster.replicas=[10.77.1.2:7070, 10.77.2.2:7070]',
    '--set', 'cluster.routing=round_robin', '--set', 'cluster.heartbeat_ms=100']);
  const base = (await waitFor(front, /at (http:\/\/[0-9.:]+\/v1)/))[1];
  await waitFor(front, /replica 10\.77\.2\.2:7070 is up/);
  await waitFor(front, /replica 10\.77\.1\.2:7070 is up/);

  // What each prompt gives undisturbed.
  const prompts = Array.from({ length: 12 }, (_, k) => `Request ${k}: the story of a river,`);
  const maxTokens = 200;
  const t0 = Date.now();
  const reference = [];
  for (const r of await Promise.all(prompts.map((p) => complete(base, p, maxTokens)))) {
    assert.equal(r.error, null, 'a reference run');
    assert.equal(r.finish, 'length');
    reference.push(r.text);
  }
  console.log(`references: ${Date.now() - t0} ms`);

  // The run: cut r1 off once 4 requests stream.
  const streaming = new Set();
  let cut = false;
  const cutOff = (k) => () => {
    streaming.add(k);
    if (!cut && streaming.size >= 4) {
      cut = true;
      ip('link', 'set', 'v1h', 'down');
    }
  };
  const results = await Promise.all(prompts.map((p, k) => complete(base, p, maxTokens, cutOff(k))));
  assert.ok(cut, 'four requests streamed at once');
  console.log(`run: ${Date.now() - t0} ms`);
  await waitFor(front, /replica 10\.77\.1\.2:7070 is down/, 30);
  let finished = 0;
  let failed = 0;
  results.forEach((r, k) => {
    if (r.error === null) {
      assert.equal(r.finish, 'length', `request ${k}`);
      assert.equal(r.text, reference[k], `request ${k}: its text as undisturbed`);
      finished++;
    } else {
      assert.match(r.error, /10\.77\.1\.2:7070/, `request ${k}: the error names the replica`);
      assert.ok(r.streamed > 0, `request ${k} failed without having streamed`);
      failed++;
    }
  });
  console.log(`cut off mid-run: ${finished} finished (as undisturbed), ${failed} failed after ` +
              'streaming (r1 ran 2 at a time)');
  assert.ok(failed >= 1 && failed <= 2, `${failed} failed: only r1's running requests may`);
  assert.equal(finished + failed, 12);

  // While r1 is cut off, new requests are served.
  const during = await Promise.all(prompts.slice(0, 4).map((p) => complete(base, p, 8)));
  during.forEach((r, k) => assert.equal(r.error, null, `request ${k} during the partition`));

  // The link back up: r1 answers again, drops what it was cut off from, and serves.
  ip('link', 'set', 'v1h', 'up');
  for (let i = 0; i < 300 && count(front.log, /replica 10\.77\.1\.2:7070 is up/g) < 2; i++) {
    await sleep(100);
  }
  assert.equal(count(front.log, /replica 10\.77\.1\.2:7070 is up/g), 2, 'r1 is up again');
  console.log(`healed: ${Date.now() - t0} ms`);
  const idle = async () => {
    let m = '';
    for (let i = 0; i < 300; i++) {
      m = await (await fetch(`${replicaUrls[0]}/metrics`)).text();
      if (metric(m, 'courier:num_requests_running') === 0 &&
          metric(m, 'courier:num_requests_waiting') === 0) break;
      await sleep(100);
    }
    assert.equal(metric(m, 'courier:num_requests_running'), 0, 'r1 runs nothing');
    assert.equal(metric(m, 'courier:num_requests_waiting'), 0, 'r1 has nothing waiting');
    assert.equal(metric(m, 'courier:kv_cache_usage_perc'), 0, 'r1 holds no KV block');
    return m;
  };
  const successBefore = metric(await idle(), 'courier:request_success_total');
  const after = await Promise.all(prompts.slice(0, 6).map((p) => complete(base, p, 8)));
  after.forEach((r, k) => assert.equal(r.error, null, `request ${k} after the partition`));
  const served = metric(await idle(), 'courier:request_success_total') - successBefore;
  assert.ok(served >= 1, `r1 served requests after the partition (${served})`);
  console.log(`healed: r1 up again, served ${served} of 6 new requests; nothing left running`);
}

let status = 0;
try {
  await main();
  console.log('partition test: ok');
} catch (e) {
  status = 1;
  console.error(e);
  for (const p of procs) console.error(`--- ${p.name}:\n${p.log}`);
} finally {
  for (const p of procs) p.kill('SIGKILL');
}
process.exit(status);
