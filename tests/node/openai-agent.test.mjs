// The scripted agent conversation (conversation.mjs) through the official openai client, in the
// request shapes agent frameworks send: text parts, the developer role, a tool round trip,
// explicit nulls, fields courier does not act on, logit_bias, an aborted stream, and the 400s.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import {
  assertBudget, baseURL, apiKey, forcedToken, model, nullOptionals, parts, pngDataUrl, script,
  tools, unknownFields, wireConversation,
} from "./conversation.mjs";

const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });
const budget = { model, temperature: 0, max_tokens: 2 };

async function collect(stream, maxChunks = Infinity) {
  let text = "", finish = null, usage = null, contentChunks = 0;
  for await (const c of stream) {
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      if (ch.delta.content) {
        text += ch.delta.content;
        if (++contentChunks > maxChunks) return { text, finish, usage, contentChunks };
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  return { text, finish, usage, contentChunks };
}

function assertAnswer(r, max = 2) {
  assert.equal(r.object, "chat.completion");
  assert.equal(r.choices.length, 1);
  const m = r.choices[0].message;
  assert.equal(m.role, "assistant");
  assert.equal(typeof m.content, "string");
  assertBudget(r.usage.completion_tokens, r.choices[0].finish_reason, max);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
}

test("text parts in system, user and assistant messages count as their text", async () => {
  const asStrings = [
    { role: "system", content: script.system },
    { role: "user", content: script.user },
    { role: "assistant", content: script.assistant },
    { role: "user", content: script.question },
  ];
  const asParts = asStrings.map((m) => ({ ...m, content: parts(m.content) }));
  const s = await client.chat.completions.create({ ...budget, messages: asStrings });
  const p = await client.chat.completions.create({ ...budget, messages: asParts });
  assertAnswer(s);
  assertAnswer(p);
  assert.equal(p.usage.prompt_tokens, s.usage.prompt_tokens);
  const two = asParts.slice(0, 3).concat({ role: "user", content: parts(script.question, script.followUp) });
  const t = await client.chat.completions.create({ ...budget, messages: two });
  assertAnswer(t);
  assert.ok(t.usage.prompt_tokens > p.usage.prompt_tokens, "the second text part reaches the prompt");
});

test("a developer message reaches the prompt", async () => {
  const without = [{ role: "user", content: script.user }];
  const withDev = [{ role: "developer", content: parts(script.developer) }, ...without];
  const a = await client.chat.completions.create({ ...budget, messages: without });
  const b = await client.chat.completions.create({ ...budget, messages: withDev });
  assertAnswer(b);
  assert.ok(b.usage.prompt_tokens > a.usage.prompt_tokens,
    `prompt_tokens with the developer message ${b.usage.prompt_tokens}, without ${a.usage.prompt_tokens}`);
});

test("the scripted tool round trip is answered, whole and streamed", async () => {
  const body = { ...budget, messages: wireConversation(), tools, tool_choice: "auto" };
  const whole = await client.chat.completions.create(body);
  assertAnswer(whole);
  assert.equal(typeof whole.id, "string");
  assert.equal(whole.model, model);
  const s = await collect(await client.chat.completions.create({
    ...body, stream: true, stream_options: { include_usage: true },
  }));
  assert.equal(typeof s.text, "string");
  assertBudget(s.usage.completion_tokens, s.finish, 2);
  assert.equal(s.usage.prompt_tokens, whole.usage.prompt_tokens);
});

test("explicit nulls leave the defaults; max_tokens holds next to a null max_completion_tokens", async () => {
  const body = { ...nullOptionals, model, max_tokens: 2, messages: wireConversation(), tools };
  // Streamed first and cut off past the budget, so a server that ignores max_tokens fails fast.
  const s = await collect(await client.chat.completions.create({ ...body, stream: true }), 2);
  assert.ok(s.contentChunks <= 2, `more than 2 content chunks: ${JSON.stringify(s.text)}`);
  assert.ok(["length", "stop"].includes(s.finish), `finish_reason ${s.finish}`);
  const r = await client.chat.completions.create({ ...body, stream: null });
  assertAnswer(r);
});

test("fields agent SDKs send that courier does not act on are ignored", async () => {
  const body = { ...budget, ...unknownFields, messages: wireConversation(), tools };
  assertAnswer(await client.chat.completions.create(body));
  const s = await collect(await client.chat.completions.create({
    ...body, stream: true, stream_options: { include_usage: true },
  }));
  assertBudget(s.usage.completion_tokens, s.finish, 2);
});

test("logit_bias +100 on one token makes greedy decoding emit only it, whole and streamed", async () => {
  const { id, text } = await forcedToken(3);
  const body = { model, temperature: 0, max_tokens: 3, logit_bias: { [id]: 100 }, messages: wireConversation() };
  const r = await client.chat.completions.create(body);
  assert.equal(r.choices[0].message.content, text);
  assert.equal(r.choices[0].finish_reason, "length");
  assert.equal(r.usage.completion_tokens, 3);
  const s = await collect(await client.chat.completions.create({ ...body, stream: true }));
  assert.equal(s.text, text);
  assert.equal(s.finish, "length");
});

test("after a stream is aborted mid-way the server answers the next request", async () => {
  const controller = new AbortController();
  const stream = await client.chat.completions.create(
    { model, temperature: 0, max_tokens: 200, ignore_eos: true, messages: wireConversation(), stream: true },
    { signal: controller.signal });
  let chunks = 0;
  try {
    for await (const c of stream) {
      if (c.choices[0]?.delta.content && ++chunks === 2) {
        controller.abort();
        break;
      }
    }
  } catch (e) {
    if (!(e instanceof OpenAI.APIUserAbortError || e.name === "AbortError")) throw e;
  }
  assert.equal(chunks, 2);
  assertAnswer(await client.chat.completions.create({ ...budget, messages: wireConversation() }));
});

test("an image part is refused with 400: the model takes text only", async () => {
  const messages = [{
    role: "user",
    content: [...parts("What is in this picture?"), { type: "image_url", image_url: { url: pngDataUrl } }],
  }];
  await assert.rejects(client.chat.completions.create({ ...budget, messages }),
    (e) => e.status === 400 && /text only/i.test(e.message));
  await assert.rejects(client.chat.completions.create({ ...budget, messages, stream: true }),
    (e) => e.status === 400 && /text only/i.test(e.message));
});

test("an unknown role is refused with 400", async () => {
  const messages = [{ role: "narrator", content: "Once upon a time" }, { role: "user", content: script.user }];
  await assert.rejects(client.chat.completions.create({ ...budget, messages }),
    (e) => e.status === 400 && /role/i.test(e.message));
});

// OpenAI's legacy function calling (functions, function_call), which OpenAI still honours: the
// answer is message.function_call with finish_reason "function_call" (no tool_calls), whole
// and streamed alike, its arguments valid for the function's parameters; the legacy history
// (an assistant's function_call, then a function message) goes on; both forms at once: a 400.
test("openai sdk: legacy functions answer with message.function_call, whole and streamed", async () => {
  const parameters = {
    type: "object", properties: { city: { enum: ["Paris", "Rome"] } }, required: ["city"],
    additionalProperties: false,
  };
  const functions = [{ name: "get_weather", description: "Weather in a city", parameters }];
  const params = {
    model, max_tokens: 60, temperature: 0, messages: [{ role: "user", content: "Weather in Paris?" }],
    functions, function_call: { name: "get_weather" },
  };
  const whole = await client.chat.completions.create(params);
  const choice = whole.choices[0];
  assert.equal(choice.finish_reason, "function_call");
  assert.equal(choice.message.tool_calls, undefined);
  assert.equal(choice.message.function_call.name, "get_weather");
  assert.ok(["Paris", "Rome"].includes(JSON.parse(choice.message.function_call.arguments).city));

  let name = "", args = "", finish = null;
  for await (const chunk of await client.chat.completions.create({ ...params, stream: true })) {
    const c = chunk.choices[0];
    if (!c) continue;
    assert.equal(c.delta.tool_calls, undefined);
    name += c.delta.function_call?.name ?? "";
    args += c.delta.function_call?.arguments ?? "";
    finish = c.finish_reason ?? finish;
  }
  assert.deepEqual({ name, args, finish },
    { name: "get_weather", args: choice.message.function_call.arguments, finish: "function_call" });

  const next = await client.chat.completions.create({
    model, max_tokens: 4, temperature: 0, functions,
    messages: [...params.messages, { role: "assistant", content: null, function_call: choice.message.function_call },
      { role: "function", name: "get_weather", content: "18 C, sunny" }],
  });
  assert.equal(next.choices[0].finish_reason, "length");
  await assert.rejects(
    client.chat.completions.create({ ...params, tools: [{ type: "function", function: functions[0] }] }),
    (e) => e.status === 400 && e.param === "functions");
});
