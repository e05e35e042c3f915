// What the agent-framework tests share: the server's address and key, a raw POST, the scripted
// conversation (in the OpenAI wire format; each client test translates it to its own message
// classes), the tool definition, the optional fields agent SDKs send as explicit nulls, the
// fields they send that courier does not act on, and the token a logit_bias forces.
import assert from "node:assert/strict";
import path from "node:path";
import { spawn } from "node:child_process";

export const baseURL = process.env.COURIER_URL;
export const root = baseURL.replace(/\/v1$/, "");
export const model = "tiny-qwen3";
export const apiKey = "test-key";

export async function post(path, body, key = apiKey) {
  const r = await fetch(root + path, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: await r.json() };
}

export const parts = (...texts) => texts.map((text) => ({ type: "text", text }));

// The script: instructions, a question, an answer, a tool call and its result, a follow-up.
export const script = {
  system: "You are a terse weather assistant.",
  developer: "Answer in one short sentence.",
  user: "Hello! Can you help me with the weather?",
  assistant: "Sure, which city?",
  question: "What is the weather in Paris?",
  call: { id: "call_weather_1", name: "get_weather", args: { city: "Paris" } },
  result: '{"city": "Paris", "temperature_c": 21, "sky": "clear"}',
  followUp: "Thanks. Should I take an umbrella?",
};

export const weatherSchema = {
  type: "object",
  properties: { city: { type: "string", description: "the city's name" } },
  required: ["city"],
  additionalProperties: false,
};

// The tools list as the OpenAI SDK and the frameworks send it.
export const tools = [{
  type: "function",
  function: { name: script.call.name, description: "Current weather of a city", parameters: weatherSchema },
}];

// The whole conversation in the OpenAI wire format, contents as text parts where the API allows.
export function wireConversation() {
  return [
    { role: "system", content: parts(script.system) },
    { role: "developer", content: script.developer },
    { role: "user", content: parts(script.user) },
    { role: "assistant", content: parts(script.assistant) },
    { role: "user", content: script.question },
    {
      role: "assistant", content: null,
      tool_calls: [{
        id: script.call.id, type: "function",
        function: { name: script.call.name, arguments: JSON.stringify(script.call.args) },
      }],
    },
    { role: "tool", tool_call_id: script.call.id, content: script.result },
    { role: "user", content: parts(script.followUp) },
  ];
}

// Optional fields as agent SDKs send them when the caller left them unset: explicit nulls.
export const nullOptionals = {
  temperature: null, top_p: null, n: null, presence_penalty: null, frequency_penalty: null,
  top_k: null, response_format: null, max_completion_tokens: null, seed: null, stop: null,
  logprobs: null, top_logprobs: null, logit_bias: null, stream_options: null, user: null,
  tool_choice: null,
};

// Fields of the OpenAI API (and its newer releases) that agent SDKs send and courier accepts;
// it acts on none of them but parallel_tool_calls (true here, its default).
export const unknownFields = {
  reasoning_effort: "low", prompt_cache_key: "courier-node-tests", safety_identifier: "user-1234",
  verbosity: "low", prediction: { type: "content", content: "It is sunny." }, modalities: ["text"],
  store: false, metadata: { suite: "node" }, parallel_tool_calls: true, service_tier: "auto",
  user: "tester", prompt_cache_retention: "in_memory", audio: null, web_search_options: null,
};

// A 1×1 PNG, for the image part a text-only model must refuse.
export const tinyPng = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64");
export const pngDataUrl = `data:image/png;base64,${tinyPng.toString("base64")}`;

// The token of "hello" and the text `count` of it decode to: what a +100 logit_bias on it forces
// greedy decoding to produce.
export async function forcedToken(count) {
  const t = await post("/tokenize", { prompt: "hello" });
  assert.equal(t.status, 200, JSON.stringify(t.json));
  const id = t.json.tokens.at(-1);
  const d = await post("/detokenize", { model, tokens: Array(count).fill(id) });
  assert.equal(d.status, 200, JSON.stringify(d.json));
  return { id, text: d.json.prompt };
}

// A generation cut at `max` tokens: at most that many, and finish_reason says why it ended.
export function assertBudget(completionTokens, finishReason, max) {
  assert.equal(typeof completionTokens, "number");
  assert.ok(completionTokens >= 1 && completionTokens <= max,
    `completion_tokens ${completionTokens} not in [1, ${max}]`);
  assert.ok(["length", "stop"].includes(finishReason), `finish_reason ${finishReason}`);
  if (finishReason === "length") assert.equal(completionTokens, max);
}

// A second `courier serve` (COURIER_BIN, from the repository root, on configs/default.yaml with
// port 0 and the key test-key) with `args` added: { server, url } once it listens (url without
// /v1). The caller kills it.
export async function startServer(args) {
  const rootDir = path.resolve(process.cwd(), "../..");
  const server = spawn(process.env.COURIER_BIN, [
    "serve", "--config", "configs/default.yaml", "--set", "server.port=0",
    "--set", 'server.api_keys={"test-key": "team-a"}', ...args,
  ], { cwd: rootDir, stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  const url = await new Promise((resolve, reject) => {
    const seen = (chunk) => {
      log += chunk;
      const m = /http:\/\/\S+\/v1/.exec(log);
      if (m) resolve(m[0].replace(/\/v1$/, ""));
    };
    server.stdout.on("data", seen);
    server.stderr.on("data", seen);
    server.on("exit", (code) => reject(new Error("server exited " + code + ":\n" + log)));
  });
  return { server, url };
}
