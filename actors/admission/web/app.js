// courier's web page: a chat playground over /v1/chat/completions and a dashboard over /metrics.
// Plain JavaScript, no dependencies: served from the binary (server.web_ui), it needs nothing
// beyond this server. Conversations are kept in this browser's localStorage only, the API key
// in its sessionStorage.
'use strict';

const $ = (id) => document.getElementById(id);
const CONVERSATIONS = 'courier.conversations';
const API_KEY = 'courier.apiKey';

function apiHeaders() {
  const h = { 'content-type': 'application/json' };
  const key = $('api-key').value.trim();
  if (key) h.authorization = 'Bearer ' + key;
  return h;
}

function setStatus(text) { $('status').textContent = text || ''; }

// A new element with a class and its text (both optional).
function element(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

async function errorText(response) {
  try {
    const j = await response.json();
    if (j.error && j.error.message) return response.status + ': ' + j.error.message;
  } catch (e) { /* not JSON */ }
  return 'HTTP ' + response.status;
}

// ---- pages -------------------------------------------------------------------------------

function showPage(page) {
  for (const tab of document.querySelectorAll('.tab')) {
    tab.classList.toggle('active', tab.dataset.page === page);
  }
  $('page-chat').classList.toggle('hidden', page !== 'chat');
  $('page-dash').classList.toggle('hidden', page !== 'dash');
  dashboard.running(page === 'dash');
}

// ---- the playground ----------------------------------------------------------------------

function loadConversations() {
  try {
    const list = JSON.parse(localStorage.getItem(CONVERSATIONS) || '[]');
    return Array.isArray(list) ? list : [];
  } catch (e) {
    return [];
  }
}

let conversations = loadConversations();
let current = null;
let controller = null;  // the reply streaming now, if any

// Keeps the conversations in localStorage; when the browser's storage is full, the oldest go
// first (never the one open now), and the page says so.
function saveConversations() {
  for (;;) {
    try {
      localStorage.setItem(CONVERSATIONS, JSON.stringify(conversations));
      return;
    } catch (e) {
      const oldest = conversations[conversations.length - 1];
      if (conversations.length <= 1 || oldest === current) {
        setStatus('browser storage is full: this conversation is not saved');
        return;
      }
      conversations.pop();
      setStatus('browser storage was full: the oldest conversations were removed');
      renderConversations();
    }
  }
}

function newConversation() {
  current = { id: Date.now().toString(36), title: '', messages: [] };
  conversations.unshift(current);
  saveConversations();
  renderConversations();
  renderMessages();
}

function renderConversations() {
  const ul = $('conversations');
  ul.textContent = '';
  for (const c of conversations) {
    const li = element('li', '', c.title || 'New conversation');
    li.classList.toggle('current', c === current);
    li.addEventListener('click', () => {
      if (controller) return;
      current = c;
      renderConversations();
      renderMessages();
    });
    ul.appendChild(li);
  }
}

function messageElement(m) {
  const div = element('div', 'msg ' + m.role);
  div.appendChild(element('div', 'role', m.role));
  if (m.reasoning) div.appendChild(element('div', 'reasoning', m.reasoning));
  div.appendChild(element('div', 'content', m.content));
  if (m.stats) div.appendChild(element('div', 'stats', m.stats));
  return div;
}

function renderMessages() {
  const box = $('messages');
  box.textContent = '';
  for (const m of current.messages) box.appendChild(messageElement(m));
}

function renderLast(m) {
  const box = $('messages');
  if (box.lastChild) box.replaceChild(messageElement(m), box.lastChild);
}

function setBusy(busy) {
  $('send').disabled = busy;
  $('stop').disabled = !busy;
}

function numberField(id) {
  const v = parseFloat($(id).value);
  return Number.isFinite(v) ? v : undefined;
}

// The request the settings describe, for the conversation so far.
function requestBody() {
  const messages = [];
  const system = $('system').value.trim();
  if (system) messages.push({ role: 'system', content: system });
  for (const m of current.messages) messages.push({ role: m.role, content: m.content });
  const body = {
    model: $('model').value,
    messages,
    stream: true,
    stream_options: { include_usage: true },
    temperature: numberField('temperature'),
    top_p: numberField('top-p'),
    max_tokens: numberField('max-tokens'),
  };
  if ($('json-mode').checked) {
    body.response_format = {
      type: 'json_schema',
      json_schema: { name: 'reply', schema: JSON.parse($('schema').value), strict: true },
    };
  }
  return body;
}

function replyStats(t0, first, t1, usage, stopped) {
  const parts = [];
  if (first) parts.push('TTFT ' + Math.round(first - t0) + ' ms');
  if (usage) {
    parts.push(usage.prompt_tokens + ' prompt + ' + usage.completion_tokens + ' tokens');
    if (first && t1 > first && usage.completion_tokens > 1) {
      parts.push(((usage.completion_tokens - 1) / ((t1 - first) / 1000)).toFixed(1) + ' tok/s');
    }
  }
  if (stopped) parts.push('stopped');
  return parts.join(' · ');
}

// Reads an SSE stream, calling onEvent with each data payload but [DONE].
async function readEvents(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const data = line.slice(5).trim();
        if (data !== '[DONE]') onEvent(JSON.parse(data));
      }
    }
  }
}

async function send() {
  const text = $('input').value.trim();
  if (!text || controller) return;
  setStatus('');
  current.messages.push({ role: 'user', content: text });
  let body;
  try {
    body = requestBody();
  } catch (e) {
    current.messages.pop();
    setStatus('JSON schema: ' + e.message);
    return;
  }
  if (!current.title) current.title = text.slice(0, 40);
  const reply = { role: 'assistant', content: '', reasoning: '' };
  current.messages.push(reply);
  $('input').value = '';
  renderConversations();
  renderMessages();
  controller = new AbortController();
  setBusy(true);
  const t0 = performance.now();
  let first = 0;
  let usage = null;
  let stopped = false;
  try {
    const response = await fetch('/v1/chat/completions', {
      method: 'POST', headers: apiHeaders(), body: JSON.stringify(body), signal: controller.signal,
    });
    if (!response.ok) throw new Error(await errorText(response));
    await readEvents(response, (j) => {
      if (j.error) throw new Error(j.error.message);
      if (j.usage) usage = j.usage;
      const delta = j.choices && j.choices[0] && j.choices[0].delta;
      if (!delta) return;
      if ((delta.content || delta.reasoning_content) && !first) first = performance.now();
      if (delta.reasoning_content) reply.reasoning += delta.reasoning_content;
      if (delta.content) reply.content += delta.content;
      renderLast(reply);
    });
  } catch (e) {
    if (e.name === 'AbortError') {
      stopped = true;
    } else {
      setStatus(e.message);
    }
  } finally {
    reply.stats = replyStats(t0, first, performance.now(), usage, stopped);
    controller = null;
    setBusy(false);
    renderMessages();
    saveConversations();
  }
}

async function loadModels() {
  try {
    const response = await fetch('/v1/models', { headers: apiHeaders() });
    if (!response.ok) throw new Error(await errorText(response));
    const list = await response.json();
    const select = $('model');
    const was = select.value;
    select.textContent = '';
    for (const m of list.data) {
      const option = element('option', '', m.parent ? m.id + ' (adapter of ' + m.parent + ')' : m.id);
      option.value = m.id;
      select.appendChild(option);
    }
    if (was) select.value = was;
    dashboard.models(list.data);
    setStatus('');
  } catch (e) {
    setStatus('models: ' + e.message);
  }
}

// ---- the dashboard -----------------------------------------------------------------------

// Prometheus text: [{name, labels: {..}, value}], one per sample line.
function parseMetrics(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) {
      for (const pair of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
        labels[pair[1]] = pair[2];
      }
    }
    samples.push({ name: m[1], labels, value: parseFloat(m[4]) });
  }
  return samples;
}

function total(samples, name, where) {
  let sum = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    if (where && !Object.entries(where).every(([k, v]) => s.labels[k] === v)) continue;
    sum += s.value;
  }
  return sum;
}

// The q-quantile of a histogram (summed over its label sets), interpolated within a bucket as
// Prometheus' histogram_quantile does; NaN when it has no observation.
function quantile(samples, name, q) {
  const buckets = new Map();
  for (const s of samples) {
    if (s.name !== name + '_bucket') continue;
    const le = s.labels.le === '+Inf' ? Infinity : parseFloat(s.labels.le);
    buckets.set(le, (buckets.get(le) || 0) + s.value);
  }
  const sorted = [...buckets.entries()].sort((a, b) => a[0] - b[0]);
  if (!sorted.length || sorted[sorted.length - 1][1] === 0) return NaN;
  const rank = q * sorted[sorted.length - 1][1];
  let lower = 0;
  let below = 0;
  for (const [le, count] of sorted) {
    if (count >= rank) {
      if (le === Infinity) return lower;
      return lower + (le - lower) * (count === below ? 0 : (rank - below) / (count - below));
    }
    lower = le;
    below = count;
  }
  return lower;
}

const CARDS = [
  ['running', 'Requests running'],
  ['waiting', 'Requests waiting'],
  ['kv', 'KV cache used (%)'],
  ['tokens-per-s', 'Generated tokens/s'],
  ['ttft-p50', 'TTFT p50 (ms)'],
  ['ttft-p99', 'TTFT p99 (ms)'],
  ['itl-p50', 'Inter-token p50 (ms)'],
  ['itl-p99', 'Inter-token p99 (ms)'],
  ['prefix-hit', 'Prefix cache hit rate (%)'],
  ['hit-device', 'Hits on the device (%)'],
  ['hit-host', 'Hits from the host tier (%)'],
  ['hit-disk', 'Hits from the disk tier (%)'],
  ['cached-device', 'Cached blocks on the device'],
  ['cached-host', 'Cached blocks on the host'],
  ['cached-disk', 'Cached blocks on disk'],
  ['spec-accept', 'Draft acceptance (%)'],
  ['preemptions', 'Preemptions'],
  ['generated', 'Tokens generated'],
];
// Cards shown with one decimal (the others are counts).
const DECIMAL = new Set(['kv', 'prefix-hit', 'hit-device', 'hit-host', 'hit-disk', 'spec-accept',
                         'ttft-p50', 'ttft-p99', 'itl-p50', 'itl-p99', 'tokens-per-s']);
const CHARTS = [['running', 'Requests running'], ['waiting', 'Requests waiting'],
                ['kv', 'KV cache used (%)'], ['tokens-per-s', 'Generated tokens/s'],
                ['recent-hit', 'Prefix cache hit rate, last 10 s (%)'],
                ['ttft-p50', 'TTFT p50 (ms)']];
const HISTORY = 120;  // chart points: two minutes at one refresh a second
const WINDOW_MS = 10000;  // the recent hit rate's window

// The share of looked-up prompt tokens each tier served (the counters nest: disk hits are also
// host hits, host hits also hits), as percentages; NaN before any lookup.
function tierRates(queries, hits, host, disk) {
  const share = (x) => (queries > 0 ? 100 * x / queries : NaN);
  return { 'prefix-hit': share(hits), 'hit-device': share(hits - host),
           'hit-host': share(host - disk), 'hit-disk': share(disk) };
}

// /server_info's value as the page shows it.
function configText(key, value) {
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (key.endsWith('_bytes')) {
    const [unit, size] = value >= 1 << 20 ? ['MiB', 1 << 20] : ['KiB', 1024];
    return +(value / size).toFixed(1) + ' ' + unit;
  }
  if (typeof value === 'number') return value.toLocaleString('en-US');
  return String(value);
}

const ENGINE_GROUPS = [
  ['model', 'Model'], ['device', 'Device'], ['kv_cache', 'KV cache'], ['scheduler', 'Scheduler'],
  ['engine', 'Engine'], ['speculative', 'Speculative decoding'], ['lora', 'LoRA'],
  ['recurrent_state', 'Recurrent state'], ['cluster', 'Cluster'], ['server', 'Server'],
];

const dashboard = (() => {
  let timer = null;
  let last = null;  // {t, generated}
  const recent = [];  // [{t, queries, hits}] over the last WINDOW_MS
  const history = {};
  const built = { cards: false };

  function build() {
    const cards = $('cards');
    for (const [id, label] of CARDS) {
      const card = element('div', 'card');
      card.dataset.metric = id;
      const value = element('div', 'value', '-');
      value.id = 'metric-' + id;
      card.append(element('div', 'name', label), value);
      cards.appendChild(card);
    }
    const charts = $('charts');
    for (const [id, label] of CHARTS) {
      const box = element('div', 'chart');
      const head = element('div', 'head');
      const now = element('span', 'now', '-');
      now.id = 'now-' + id;
      head.append(element('span', 'name', label), now);
      const canvas = element('canvas');
      canvas.id = 'chart-' + id;
      canvas.width = 600;
      canvas.height = 140;
      box.append(head, canvas);
      charts.appendChild(box);
      history[id] = [];
    }
    built.cards = true;
  }

  function show(id, value, digits) {
    const el = $('metric-' + id);
    if (!el) return;
    el.textContent = Number.isFinite(value) ? value.toFixed(digits) : '-';
    el.dataset.value = Number.isFinite(value) ? String(value) : '';
  }

  // A line over the last two minutes with its area filled, gridlines at a round scale, and
  // gaps where the value was undefined.
  function draw(id) {
    const canvas = $('chart-' + id);
    if (canvas.clientWidth > 0 && canvas.width !== canvas.clientWidth) {
      canvas.width = canvas.clientWidth;  // draw at the size it is shown, not stretched
    }
    const points = history[id];
    const g = canvas.getContext('2d');
    const w = canvas.width;
    const h = canvas.height;
    const top = 8;
    const bottom = h - 16;
    g.clearRect(0, 0, w, h);
    const finite = points.filter(Number.isFinite);
    const peak = Math.max(1, ...finite);
    const step = Math.pow(10, Math.floor(Math.log10(peak)));
    const max = Math.ceil(peak / step) * step;
    const y = (v) => bottom - (v / max) * (bottom - top);
    const x = (i) => w - ((points.length - 1 - i) / (HISTORY - 1)) * w;
    g.font = '11px system-ui, sans-serif';
    g.strokeStyle = '#e4e7ec';
    g.fillStyle = '#98a2b3';
    g.lineWidth = 1;
    for (const v of [0, max / 2, max]) {
      g.beginPath();
      g.moveTo(0, Math.round(y(v)) + 0.5);
      g.lineTo(w, Math.round(y(v)) + 0.5);
      g.stroke();
      g.fillText(String(+v.toPrecision(3)), 4, Math.max(10, y(v) - 2));
    }
    g.fillText('2 min', 4, h - 3);
    g.fillText('now', w - 24, h - 3);
    let run = [];
    const flush = () => {
      if (run.length > 1) {
        g.beginPath();
        run.forEach(([px, py], k) => (k ? g.lineTo(px, py) : g.moveTo(px, py)));
        g.strokeStyle = '#2457c5';
        g.lineWidth = 2;
        g.stroke();
        g.lineTo(run[run.length - 1][0], bottom);
        g.lineTo(run[0][0], bottom);
        g.closePath();
        g.fillStyle = 'rgba(36, 87, 197, 0.12)';
        g.fill();
      }
      run = [];
    };
    points.forEach((v, i) => (Number.isFinite(v) ? run.push([x(i), y(v)]) : flush()));
    flush();
  }

  async function refresh() {
    let samples;
    try {
      const response = await fetch('/metrics');
      if (!response.ok) throw new Error(await errorText(response));
      samples = parseMetrics(await response.text());
    } catch (e) {
      setStatus('metrics: ' + e.message);
      return;
    }
    const now = performance.now();
    const values = {
      running: total(samples, 'courier:num_requests_running'),
      waiting: total(samples, 'courier:num_requests_waiting'),
      kv: 100 * total(samples, 'courier:kv_cache_usage_perc'),
      'ttft-p50': 1000 * quantile(samples, 'courier:time_to_first_token_seconds', 0.5),
      'ttft-p99': 1000 * quantile(samples, 'courier:time_to_first_token_seconds', 0.99),
      'itl-p50': 1000 * quantile(samples, 'courier:inter_token_latency_seconds', 0.5),
      'itl-p99': 1000 * quantile(samples, 'courier:inter_token_latency_seconds', 0.99),
      preemptions: total(samples, 'courier:num_preemptions_total'),
      'cached-device': total(samples, 'courier:prefix_cache_blocks'),
      'cached-host': total(samples, 'courier:kv_host_tier_cached_blocks'),
      'cached-disk': total(samples, 'courier:kv_disk_tier_cached_blocks'),
      generated: total(samples, 'courier:generation_tokens_total'),
    };
    const queries = total(samples, 'courier:prefix_cache_queries_total');
    const hits = total(samples, 'courier:prefix_cache_hits_total');
    Object.assign(values, tierRates(queries, hits,
                                    total(samples, 'courier:prefix_cache_host_hits_total'),
                                    total(samples, 'courier:prefix_cache_disk_hits_total')));
    recent.push({ t: now, queries, hits });
    while (recent.length > 2 && now - recent[1].t >= WINDOW_MS) recent.shift();
    const dq = queries - recent[0].queries;
    values['recent-hit'] = dq > 0 ? 100 * (hits - recent[0].hits) / dq : NaN;
    const drafted = total(samples, 'courier:spec_decode_num_draft_tokens_total');
    values['spec-accept'] = drafted > 0 ?
      100 * total(samples, 'courier:spec_decode_num_accepted_tokens_total') / drafted : NaN;
    values['tokens-per-s'] = last && now > last.t ?
      Math.max(0, values.generated - last.generated) / ((now - last.t) / 1000) : 0;
    last = { t: now, generated: values.generated };
    for (const [id] of CARDS) show(id, values[id], DECIMAL.has(id) ? 1 : 0);
    for (const [id] of CHARTS) {
      history[id].push(values[id]);
      if (history[id].length > HISTORY) history[id].shift();
      const v = values[id];
      $('now-' + id).textContent = Number.isFinite(v) ? v.toFixed(DECIMAL.has(id) ? 1 : 0) : '-';
      draw(id);
    }
    document.body.dataset.metricsRefreshed = String(Date.now());
  }

  async function loadEngine() {
    const box = $('engine');
    try {
      const response = await fetch('/server_info', { headers: apiHeaders() });
      if (!response.ok) throw new Error(await errorText(response));
      const info = await response.json();
      box.textContent = '';
      for (const [group, title] of ENGINE_GROUPS) {
        if (!info[group]) continue;
        const section = element('div', 'group');
        const dl = element('dl');
        for (const [key, value] of Object.entries(info[group])) {
          const dd = element('dd', '', configText(key, value));
          dd.dataset.key = group + '.' + key;
          dl.append(element('dt', '', key.replace(/_/g, ' ')), dd);
        }
        section.append(element('h3', '', title), dl);
        box.appendChild(section);
      }
      box.dataset.loaded = 'true';
    } catch (e) {
      box.textContent = 'server info: ' + e.message;
    }
  }

  return {
    running(on) {
      if (on && !built.cards) build();
      if (on) loadEngine();
      if (on && !timer) {
        refresh();
        timer = setInterval(refresh, 1000);
      } else if (!on && timer) {
        clearInterval(timer);
        timer = null;
      }
    },
    models(list) {
      const dl = $('served');
      dl.textContent = '';
      for (const m of list) {
        dl.append(element('dt', '', m.parent ? 'adapter' : 'model'),
                  element('dd', '', m.id + (m.parent ? ' (of ' + m.parent + ')' : '') +
                                    ', max_model_len ' + m.max_model_len));
      }
      if (timer) loadEngine();  // the key may have changed
    },
  };
})();

// ---- start -------------------------------------------------------------------------------

function start() {
  for (const tab of document.querySelectorAll('.tab')) {
    tab.addEventListener('click', () => showPage(tab.dataset.page));
  }
  $('api-key').value = sessionStorage.getItem(API_KEY) || '';
  $('api-key').addEventListener('change', () => {
    sessionStorage.setItem(API_KEY, $('api-key').value.trim());
    loadModels();
  });
  $('json-mode').addEventListener('change', () => {
    $('schema').classList.toggle('hidden', !$('json-mode').checked);
  });
  $('new-chat').addEventListener('click', () => { if (!controller) newConversation(); });
  $('composer').addEventListener('submit', (e) => { e.preventDefault(); send(); });
  $('input').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !e.shiftKey) {
      e.preventDefault();
      send();
    }
  });
  $('stop').addEventListener('click', () => { if (controller) controller.abort(); });
  if (conversations.length) {
    current = conversations[0];
    renderConversations();
    renderMessages();
  } else {
    newConversation();
  }
  loadModels();
}

start();
