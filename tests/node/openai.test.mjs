// courier serve against the official openai client: completions, chat, streaming with usage,
// logprobs, stop strings, n > 1, errors, and 200 concurrent streams.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { apiKey, baseURL, model, post } from "./conversation.mjs";

const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });

const greedy = { model, temperature: 0, max_tokens: 12, ignore_eos: true };
const messages = [{ role: "user", content: "Write one sentence about the sea." }];

test("models lists the served model", async () => {
  const list = await client.models.list();
  assert.deepEqual(list.data.map((m) => m.id), [model]);
});

test("a completion's text is the decode of its token ids", async () => {
  const r = await client.completions.create({ ...greedy, prompt: "Hello, my name is", return_token_ids: true });
  assert.equal(r.object, "text_completion");
  assert.equal(r.choices.length, 1);
  assert.equal(r.choices[0].finish_reason, "length");
  assert.equal(r.usage.completion_tokens, 12);
  const d = await post("/detokenize", { model, tokens: r.choices[0].token_ids });
  assert.equal(d.status, 200);
  assert.equal(r.choices[0].text, d.json.prompt);
  const again = await client.completions.create({ ...greedy, prompt: "Hello, my name is" });
  assert.equal(again.choices[0].text, r.choices[0].text);
});

test("chat counts the templated prompt as /tokenize does", async () => {
  const r = await client.chat.completions.create({ ...greedy, messages });
  assert.equal(r.object, "chat.completion");
  assert.equal(r.choices[0].message.role, "assistant");
  assert.equal(typeof r.choices[0].message.content, "string");
  const t = await post("/tokenize", { model, messages });
  assert.equal(t.status, 200);
  assert.equal(r.usage.prompt_tokens, t.json.count);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.equal(typeof r.usage.prompt_tokens_details.cached_tokens, "number");
});

test("a streamed chat equals the whole response and ends with usage", async () => {
  const whole = await client.chat.completions.create({ ...greedy, messages });
  const stream = await client.chat.completions.create({
    ...greedy, messages, stream: true, stream_options: { include_usage: true },
  });
  let text = "", finish = null, usage = null, chunks = 0;
  for await (const c of stream) {
    chunks++;
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      text += ch.delta.content ?? "";
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  assert.ok(chunks > 2);
  assert.equal(text, whole.choices[0].message.content);
  assert.equal(finish, "length");
  assert.equal(usage.completion_tokens, 12);
  assert.equal(usage.prompt_tokens, whole.usage.prompt_tokens);
});

test("chat logprobs list the top alternatives, best first, and greedy picks the best", async () => {
  const r = await client.chat.completions.create({ ...greedy, messages, logprobs: true, top_logprobs: 3 });
  const content = r.choices[0].logprobs.content;
  assert.equal(content.length, 12);
  for (const t of content) {
    assert.equal(t.top_logprobs.length, 3);
    for (let i = 1; i < 3; i++) assert.ok(t.top_logprobs[i - 1].logprob >= t.top_logprobs[i].logprob);
    assert.ok(t.logprob <= 0);
    assert.equal(t.logprob, t.top_logprobs[0].logprob);
  }
});

// OpenAI lists a logprob for each token of the content, never for the end token that stopped
// it: a choice whose only token is the end of turn (forced by a +100 bias) lists none.
test("a choice that stops at the end token lists no logprob for it, whole or streamed", async () => {
  const t = await post("/tokenize", { model, prompt: "<|im_end|>" });
  assert.equal(t.json.tokens.length, 1);
  const params = { model, messages, max_tokens: 4, logprobs: true, logit_bias: { [t.json.tokens[0]]: 100 } };
  const r = await client.chat.completions.create(params);
  assert.equal(r.choices[0].finish_reason, "stop");
  assert.equal(r.usage.completion_tokens, 1);
  assert.deepEqual(r.choices[0].logprobs.content, []);
  const listed = [];
  for await (const c of await client.chat.completions.create({ ...params, stream: true })) {
    listed.push(...(c.choices[0]?.logprobs?.content ?? []));
  }
  assert.deepEqual(listed, []);
});

// vLLM's min_tokens: the end token is held back until the output is that long, even one a +100
// bias forces; past max_tokens it is a 400 naming the field.
test("min_tokens holds back the end token a +100 bias forces, whole and streamed", async () => {
  const t = await post("/tokenize", { model, prompt: "<|im_end|>" });
  assert.equal(t.json.tokens.length, 1);
  const params = {
    model, messages, temperature: 0, max_tokens: 8, min_tokens: 5, logprobs: true,
    logit_bias: { [t.json.tokens[0]]: 100 },
  };
  const r = await client.chat.completions.create(params);
  assert.equal(r.choices[0].finish_reason, "stop");
  assert.equal(r.usage.completion_tokens, 6);
  assert.equal(r.choices[0].logprobs.content.length, 5);  // the end token is not listed
  let streamed = "";
  let finish = null;
  for await (const c of await client.chat.completions.create({ ...params, stream: true })) {
    streamed += c.choices[0]?.delta?.content ?? "";
    finish = c.choices[0]?.finish_reason ?? finish;
  }
  assert.equal(streamed, r.choices[0].message.content);
  assert.equal(finish, "stop");
  await assert.rejects(client.chat.completions.create({ ...params, min_tokens: 9 }),
    (e) => e.status === 400 && e.param === "min_tokens");
});

test("a stop string ends the text before it (after it with include_stop_str_in_output), streaming or not", async () => {
  const base = await client.completions.create({ ...greedy, max_tokens: 16, prompt: "Once upon a time" });
  const text = base.choices[0].text;
  const stop = text.slice(Math.floor(text.length / 2), Math.floor(text.length / 2) + 3);
  assert.ok(stop.length === 3, `a 3-character stop string from ${JSON.stringify(text)}`);
  const want = text.slice(0, text.indexOf(stop));
  const r = await client.completions.create({ ...greedy, max_tokens: 16, prompt: "Once upon a time", stop: [stop] });
  assert.equal(r.choices[0].text, want);
  assert.equal(r.choices[0].finish_reason, "stop");
  const s = await client.completions.create({ ...greedy, max_tokens: 16, prompt: "Once upon a time", stop: [stop], stream: true });
  let streamed = "";
  for await (const c of s) streamed += c.choices[0]?.text ?? "";
  assert.equal(streamed, want);
  // vLLM's include_stop_str_in_output: the text ends with the stop string it matched.
  const kept = { ...greedy, max_tokens: 16, prompt: "Once upon a time", stop: [stop], include_stop_str_in_output: true };
  const k = await client.completions.create(kept);
  assert.equal(k.choices[0].text, want + stop);
  assert.equal(k.choices[0].finish_reason, "stop");
  let keptStreamed = "";
  for await (const c of await client.completions.create({ ...kept, stream: true })) keptStreamed += c.choices[0]?.text ?? "";
  assert.equal(keptStreamed, want + stop);
  await assert.rejects(client.completions.create({ ...kept, include_stop_str_in_output: "yes" }),
    (e) => e.status === 400 && /include_stop_str_in_output/.test(e.message));
});

// vLLM's chat echo: with a final assistant message (continued here), each choice's content
// starts with that message's text, whole and streamed; without one, echo changes nothing.
test("chat echo starts the content with the final assistant message, streaming or not", async () => {
  const messages = [{ role: "user", content: "Tell a story." }, { role: "assistant", content: "Once upon" }];
  const params = { ...greedy, max_tokens: 6, messages, continue_final_message: true, add_generation_prompt: false };
  const plain = await client.chat.completions.create(params);
  const echoed = await client.chat.completions.create({ ...params, echo: true });
  assert.equal(echoed.choices[0].message.content, "Once upon" + plain.choices[0].message.content);
  let streamed = "";
  for await (const c of await client.chat.completions.create({ ...params, echo: true, stream: true })) {
    streamed += c.choices[0]?.delta?.content ?? "";
  }
  assert.equal(streamed, echoed.choices[0].message.content);
  const user = [{ role: "user", content: "Tell a story." }];
  const a = await client.chat.completions.create({ ...greedy, max_tokens: 6, messages: user });
  const b = await client.chat.completions.create({ ...greedy, max_tokens: 6, messages: user, echo: true });
  assert.equal(b.choices[0].message.content, a.choices[0].message.content);
});

test("n > 1 returns that many choices, indexed", async () => {
  const r = await client.chat.completions.create({
    model, messages, n: 3, max_tokens: 6, temperature: 1.0, seed: 7, ignore_eos: true,
  });
  assert.deepEqual(r.choices.map((c) => c.index).sort(), [0, 1, 2]);
  for (const c of r.choices) assert.equal(c.finish_reason, "length");
  assert.equal(r.usage.completion_tokens, 18);
});

test("errors are OpenAI errors with the right status", async () => {
  await assert.rejects(client.chat.completions.create({ ...greedy, model: "no-such-model", messages }),
    (e) => e.status === 404);
  await assert.rejects(client.chat.completions.create({ ...greedy, messages, max_tokens: -1 }),
    (e) => e.status === 400 && /max_tokens/.test(e.message));
  const bad = new OpenAI({ baseURL, apiKey: "wrong-key", maxRetries: 0 });
  await assert.rejects(bad.models.list(), (e) => e.status === 401);
});

test("200 concurrent streaming clients all get complete, correct streams", async () => {
  const prompts = ["The sky is", "Numbers: 1, 2,", "def add(a, b):", "Paris is the capital of"];
  const opts = { model, temperature: 0, max_tokens: 6, ignore_eos: true };
  const want = await Promise.all(prompts.map(async (p) =>
    (await client.completions.create({ ...opts, prompt: p })).choices[0].text));
  const runs = Array.from({ length: 200 }, async (_, i) => {
    const s = await client.completions.create({ ...opts, prompt: prompts[i % 4], stream: true });
    let text = "", finish = null;
    for await (const c of s) {
      text += c.choices[0]?.text ?? "";
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    return { i, text, finish };
  });
  for (const r of await Promise.all(runs)) {
    assert.equal(r.finish, "length");
    assert.equal(r.text, want[r.i % 4]);
  }
});
