// Stored responses (/v1/responses with `store`, OpenAI's default) through the openai SDK and
// @ai-sdk/openai's responses model: a follow-up by previous_response_id (or the AI SDK's
// item_reference) prompts the model exactly as resending the whole conversation does (the same
// input_tokens and, greedy, the same text); responses.retrieve gives back the response as it was
// answered (whole or streamed); another API key's ids are unknown; responses.delete removes one;
// store: false keeps nothing; the AI SDK's follow-up streams the same. And the OpenAI Agents
// SDK's server-managed conversation: a run with previousResponseId sends each turn's new items
// only (a tool's output after its call), and ends, whole or streamed, as the same run over the
// whole history does.
import { test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { createOpenAI } from "@ai-sdk/openai";
import { generateText, streamText } from "ai";
import { Agent, run, setDefaultOpenAIClient, setTracingDisabled, tool } from "@openai/agents";
import { z } from "zod";
import { apiKey, baseURL, model } from "./conversation.mjs";

const openai = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });
const stranger = new OpenAI({ baseURL, apiKey: "other-key", maxRetries: 0, timeout: 120000 });
const notFound = (e) => e instanceof OpenAI.NotFoundError && /not found/.test(e.message);

test("openai sdk: previous_response_id continues a kept response as resending it would; retrieve and delete", async () => {
  const base = { model, max_output_tokens: 6, temperature: 0 };
  const first = await openai.responses.create({ ...base, instructions: "Be brief.", input: "Hello" });
  assert.equal(first.store, true);
  assert.deepEqual(await openai.responses.retrieve(first.id), first);

  const next = await openai.responses.create({ ...base, previous_response_id: first.id, input: "And then?" });
  assert.equal(next.previous_response_id, first.id);
  // The same prompt, sent whole (a previous response's instructions are not carried over).
  const resent = await openai.responses.create({
    ...base, store: false,
    input: [{ role: "user", content: "Hello" }, ...first.output, { role: "user", content: "And then?" }],
  });
  assert.equal(resent.store, false);
  assert.equal(next.usage.input_tokens, resent.usage.input_tokens);
  assert.equal(next.output_text, resent.output_text);
  await assert.rejects(openai.responses.retrieve(resent.id), notFound);

  // A chain: the third continues the second, which continued the first.
  const third = await openai.responses.create({ ...base, previous_response_id: next.id, input: "Ok." });
  const third2 = await openai.responses.create({
    ...base, store: false,
    input: [{ role: "user", content: "Hello" }, ...first.output, { role: "user", content: "And then?" },
      ...next.output, { role: "user", content: "Ok." }],
  });
  assert.equal(third.usage.input_tokens, third2.usage.input_tokens);

  // Another key's ids are unknown: not read, not continued, not removed.
  await assert.rejects(stranger.responses.retrieve(first.id), notFound);
  await assert.rejects(stranger.responses.create({ ...base, previous_response_id: first.id, input: "x" }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === "previous_response_id");
  await assert.rejects(stranger.responses.delete(first.id), notFound);

  await openai.responses.delete(first.id);
  await assert.rejects(openai.responses.retrieve(first.id), notFound);
  await assert.rejects(openai.responses.create({ ...base, previous_response_id: first.id, input: "x" }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === "previous_response_id");
  await assert.rejects(openai.responses.delete(first.id), notFound);
  // The second keeps the whole conversation it answered, the first's part included.
  const after = await openai.responses.create({ ...base, previous_response_id: next.id, input: "Ok." });
  assert.equal(after.usage.input_tokens, third.usage.input_tokens);
});

test("openai sdk: a streamed response is kept as response.completed had it", async () => {
  const stream = openai.responses.stream({ model, input: "Hi", max_output_tokens: 5, temperature: 0 });
  for await (const _ of stream);
  const final = await stream.finalResponse();
  const kept = await openai.responses.retrieve(final.id);
  assert.equal(kept.id, final.id);
  // The stream helper adds a `parsed` of its own to each text part; the rest is the same.
  const unparsed = (items) => JSON.parse(JSON.stringify(items, (k, v) => (k === "parsed" ? undefined : v)));
  assert.deepEqual(unparsed(kept.output), unparsed(final.output));
  assert.equal(kept.output_text, final.output_text);
  assert.deepEqual(kept.usage, final.usage);
  assert.equal(kept.status, final.status);
});

test("@ai-sdk/openai responses: a follow-up sends its earlier answer as an item_reference, answered as the whole text", async () => {
  const provider = createOpenAI({ baseURL, apiKey });
  const opts = { model: provider.responses(model), maxOutputTokens: 6, temperature: 0, maxRetries: 0 };
  const first = await generateText({ ...opts, messages: [{ role: "user", content: "Hello" }] });
  const history = [{ role: "user", content: "Hello" }, ...first.response.messages,
    { role: "user", content: "And then?" }];
  const kept = await generateText({ ...opts, messages: history });
  const sent = typeof kept.request.body === "string" ? JSON.parse(kept.request.body) : kept.request.body;
  assert.ok(sent.input.some((i) => i.type === "item_reference"), JSON.stringify(sent.input));
  const whole = await generateText({ ...opts, messages: history, providerOptions: { openai: { store: false } } });
  const wholeSent = typeof whole.request.body === "string" ? JSON.parse(whole.request.body) : whole.request.body;
  assert.ok(!wholeSent.input.some((i) => i.type === "item_reference"));
  assert.equal(kept.usage.inputTokens, whole.usage.inputTokens);
  assert.equal(kept.text, whole.text);
  // Streamed, the same follow-up (its reference too) gives the same text and usage.
  const streamed = streamText({ ...opts, messages: history });
  assert.equal(await streamed.text, kept.text);
  assert.equal((await streamed.usage).inputTokens, kept.usage.inputTokens);
  const streamedBody = (await streamed.request).body;
  const streamedSent = typeof streamedBody === "string" ? JSON.parse(streamedBody) : streamedBody;
  assert.ok(streamedSent.input.some((i) => i.type === "item_reference"));
});

test("openai agents sdk: a tool-calling run on previousResponseId ends as the run over the whole history", async () => {
  setDefaultOpenAIClient(openai);
  setTracingDisabled(true);
  const plain = new Agent({ name: "plain", instructions: "Be brief.", model, modelSettings: { temperature: 0, maxTokens: 6 } });
  const first = await run(plain, "Hello");
  assert.match(first.lastResponseId, /^resp_/);
  const weather = tool({
    name: "get_weather", description: "Weather of a city",
    parameters: z.object({ city: z.string().max(10) }),
    execute: async ({ city }) => `${city}: 21 C, clear`,
  });
  // The first turn must call the tool (then the SDK resets tool_choice and the model answers).
  const agent = new Agent({
    name: "weather", instructions: "Be brief.", model, tools: [weather],
    modelSettings: { temperature: 0, maxTokens: 60, toolChoice: "required" },
  });
  const chained = await run(agent, "Weather in Paris?", { previousResponseId: first.lastResponseId, maxTurns: 4 });
  assert.deepEqual(chained.newItems.map((i) => i.type), ["tool_call_item", "tool_call_output_item", "message_output_item"]);
  // The last turn continued the turn that called the tool, which continued the first run.
  const last = await openai.responses.retrieve(chained.lastResponseId);
  const calling = await openai.responses.retrieve(last.previous_response_id);
  assert.equal(calling.previous_response_id, first.lastResponseId);
  assert.ok(calling.output.some((o) => o.type === "function_call" && o.name === "get_weather"));
  const whole = await run(agent, [...first.history, { role: "user", content: "Weather in Paris?" }], { maxTurns: 4 });
  assert.deepEqual(whole.newItems.map((i) => i.type), chained.newItems.map((i) => i.type));
  assert.equal(chained.finalOutput, whole.finalOutput);
  // Streamed (the SDK reads each turn's events), the chained run ends the same.
  const streamed = await run(agent, "Weather in Paris?",
    { previousResponseId: first.lastResponseId, maxTurns: 4, stream: true });
  for await (const _ of streamed);
  await streamed.completed;
  assert.deepEqual(streamed.newItems.map((i) => i.type), chained.newItems.map((i) => i.type));
  assert.equal(streamed.finalOutput, chained.finalOutput);
});
