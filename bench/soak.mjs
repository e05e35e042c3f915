// The clients of bench/soak.sh: CLIENTS loops, each picking a random operation until MINUTES
// have passed, then a summary: operations by kind and status, 5xx, and requests that never
// ended (no answer within 120 s). Node 20's fetch; no packages.
//
//   node bench/soak.mjs BASE_URL MODEL MINUTES CLIENTS [OPS_REGEX]
// OPS_REGEX: only the operations whose names match (e.g. "schema|regex"), to find what grows.
const [base, model, minutes, clients, only = "."] = process.argv.slice(2);
const end = Date.now() + Number(minutes) * 60_000;
let seed = 12345;
const rand = (n) => {  // xorshift: the same operations in the same order every run
  seed ^= seed << 13; seed ^= seed >>> 17; seed ^= seed << 5;
  return (seed >>> 0) % n;
};
const word = () => "w" + rand(1e9).toString(36);
const user = (text) => [{ role: "user", content: text }];
let schemas = 0;

// Each returns [path, body (object or raw string), options].
const ops = {
  chat: () => ["/v1/chat/completions", { model, messages: user(word()), max_tokens: 16 + rand(32) }],
  stream: () => ["/v1/chat/completions",
    { model, messages: user(word()), max_tokens: 32, stream: true, stream_options: { include_usage: true } }],
  stream_cut: () => ["/v1/chat/completions", { model, messages: user(word()), max_tokens: 64, stream: true },
    { cut: true }],
  schema_new: () => {  // a new grammar each time: what fills the grammar and mask caches
    const props = Object.fromEntries(Array.from({ length: 1 + rand(6) }, () => [word(), { type: ["string", "integer", "boolean"][rand(3)] }]));
    ++schemas;
    return ["/v1/chat/completions", { model, messages: user("json"), max_tokens: 48,
      response_format: { type: "json_schema", json_schema: { name: "s", schema: { type: "object", properties: props, required: Object.keys(props) } } } }];
  },
  regex_new: () => ["/v1/chat/completions",
    { model, messages: user("r"), max_tokens: 24, guided_regex: `[a-z]{1,${5 + rand(500)}}-${word()}` }],
  tools: () => ["/v1/chat/completions", { model, messages: user("weather?"), max_tokens: 48, tool_choice: "required",
    tools: [{ type: "function", function: { name: "get_" + word(), parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } } }] }],
  anthropic: () => ["/v1/messages", { model, max_tokens: 24, messages: user(word()), stream: rand(2) === 0 }],
  responses: () => ["/v1/responses", { model, input: word(), max_output_tokens: 24 }],
  tokenize: () => ["/tokenize", { model, prompt: word().repeat(1 + rand(50)) }],
  bad_json: () => ["/v1/chat/completions", '{"model": "' + model + '", "messages": [' + "{".repeat(rand(100))],
  bad_field: () => ["/v1/chat/completions", { model, messages: user("x"), max_tokens: -1 - rand(10) }],
};
const names = Object.keys(ops).filter((n) => new RegExp(only).test(n));
const counts = {};
let fivexx = 0, stuck = 0, total = 0;

async function one(name) {
  const [path, body, opt = {}] = ops[name]();
  const ctrl = new AbortController();
  const timer = setTimeout(() => ctrl.abort("stuck"), 120_000);
  let status = "error";
  try {
    const r = await fetch(base + path, { method: "POST", headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body), signal: ctrl.signal });
    status = r.status;
    if (opt.cut && r.body) {  // read one chunk, then hang up
      const reader = r.body.getReader();
      await reader.read();
      await reader.cancel();
    } else {
      await r.arrayBuffer();
    }
  } catch (e) {
    if (ctrl.signal.aborted && ctrl.signal.reason === "stuck") { status = "stuck"; ++stuck; }
  } finally {
    clearTimeout(timer);
  }
  if (typeof status === "number" && status >= 500) ++fivexx;
  const key = `${name} ${status}`;
  counts[key] = (counts[key] || 0) + 1;
  ++total;
}

async function client() {
  while (Date.now() < end) await one(names[rand(names.length)]);
}

await Promise.all(Array.from({ length: Number(clients) }, client));
console.log(`operations: ${total} in ${minutes} min by ${clients} clients (${schemas} distinct schemas); 5xx: ${fivexx}; never ended: ${stuck}`);
for (const k of Object.keys(counts).sort()) console.log(`  ${k.padEnd(28)} ${counts[k]}`);
