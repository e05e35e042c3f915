// Anthropic's Messages API (/v1/messages) through the official @anthropic-ai/sdk, and OpenAI's
// Responses API (/v1/responses) through the openai SDK: text, forced tool calls whose input
// satisfies the tool's schema (ajv), structured text, streams that the SDKs assemble into the
// same result as the whole response, usage, and the errors in each API's own shape.
import { test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { zodOutputFormat } from "@anthropic-ai/sdk/helpers/zod";
import { createAnthropic } from "@ai-sdk/anthropic";
import { ChatAnthropic } from "@langchain/anthropic";
import { generateObject, generateText } from "ai";
import { z } from "zod";
import OpenAI from "openai";
import Ajv2020 from "ajv/dist/2020.js";
import { apiKey, baseURL, model, post, root } from "./conversation.mjs";

const anthropic = new Anthropic({ baseURL: root, apiKey, maxRetries: 0, timeout: 120000 });
const openai = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });

const weather = {
  type: "object",
  properties: { city: { type: "string", maxLength: 10 }, unit: { enum: ["c", "f"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};
const validWeather = new Ajv2020({ strict: false }).compile(weather);

test("anthropic sdk: a text message, whole and streamed alike, with usage", async () => {
  const params = { model, max_tokens: 8, temperature: 0, messages: [{ role: "user", content: "Hello" }] };
  const whole = await anthropic.messages.create(params);
  assert.equal(whole.type, "message");
  assert.equal(whole.role, "assistant");
  assert.match(whole.id, /^msg_/);
  assert.equal(whole.stop_reason, "max_tokens");
  assert.equal(whole.usage.output_tokens, 8);
  assert.ok(whole.usage.input_tokens > 0);
  const stream = anthropic.messages.stream(params);
  let text = "";
  stream.on("text", (t) => { text += t; });
  const final = await stream.finalMessage();
  assert.equal(text, whole.content[0].text);
  assert.deepEqual(final.content, whole.content);
  assert.equal(final.stop_reason, "max_tokens");
  assert.equal(final.usage.output_tokens, 8);
});

test("anthropic sdk: a forced tool gives a tool_use block whose input fits its schema", async () => {
  const params = {
    model, max_tokens: 200, temperature: 0,
    system: "You call tools.",
    messages: [{ role: "user", content: "Weather in Lima?" }],
    tools: [{ name: "get_weather", description: "Weather of a city", input_schema: weather }],
    tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
  };
  const whole = await anthropic.messages.create(params);
  assert.equal(whole.stop_reason, "tool_use", JSON.stringify(whole));
  const uses = whole.content.filter((b) => b.type === "tool_use");
  assert.equal(uses.length, 1);
  assert.equal(uses[0].name, "get_weather");
  assert.match(uses[0].id, /^toolu_/);
  assert.ok(validWeather(uses[0].input), JSON.stringify(uses[0].input));
  const final = await anthropic.messages.stream(params).finalMessage();
  assert.deepEqual(final.content.filter((b) => b.type === "tool_use").map((b) => b.input), [uses[0].input]);

  // The result goes back as a tool_result block, and the conversation goes on.
  const next = await anthropic.messages.create({
    ...params, tool_choice: { type: "auto" }, max_tokens: 4,
    messages: [...params.messages, { role: "assistant", content: whole.content },
      { role: "user", content: [{ type: "tool_result", tool_use_id: uses[0].id, content: "18 C, sunny" }] }],
  });
  assert.equal(next.type, "message");
});

// A final assistant message is a prefill: the prompt ends inside it (the tokens /tokenize counts
// with continue_final_message), not after it in a new turn.
test("anthropic sdk: a final assistant message is a prefill the answer continues", async () => {
  const messages = [{ role: "user", content: "Reply in JSON." }, { role: "assistant", content: '{"answer":' }];
  const r = await anthropic.messages.create({ model, max_tokens: 2, temperature: 0, messages });
  const continued = await post("/tokenize", { model, messages, continue_final_message: true });
  const closed = await post("/tokenize", { model, messages, add_generation_prompt: true });
  assert.equal(r.usage.input_tokens, continued.json.count);
  assert.ok(continued.json.count < closed.json.count);
  await assert.rejects(
    anthropic.messages.create({ model, max_tokens: 2, messages: [messages[0], { role: "assistant", content: '{"answer": ' }] }),
    (e) => e instanceof Anthropic.BadRequestError && /trailing whitespace/.test(e.error.error.message));
});

// Structured outputs (output_config.format): messages.parse with zodOutputFormat, the SDK's own
// helper, gets text that zod accepts (the tiny model's random weights give JSON only under the
// grammar), whole and streamed alike; a format courier cannot honour is a 400 naming it.
test("anthropic sdk: messages.parse with output_config.format gives what its schema accepts", async () => {
  // Short whatever the model (the SDK moves numeric bounds into descriptions, as Anthropic's
  // structured outputs do not hold them): an enum and a boolean.
  const Shape = z.object({ kind: z.enum(["circle", "square"]), filled: z.boolean() });
  const params = {
    model, max_tokens: 160, temperature: 0,
    messages: [{ role: "user", content: "A shape, in JSON." }],
    output_config: { format: zodOutputFormat(Shape) },
  };
  const whole = await anthropic.messages.parse(params);
  assert.equal(whole.stop_reason, "end_turn", whole.content[0].text);
  assert.deepEqual(whole.parsed_output, Shape.parse(JSON.parse(whole.content[0].text)));
  const streamed = await anthropic.messages.stream(params).finalMessage();
  assert.deepEqual(streamed.parsed_output, whole.parsed_output);
  await assert.rejects(
    anthropic.messages.create({ ...params, output_config: { format: { type: "xml_schema", schema: {} } } }),
    (e) => e instanceof Anthropic.BadRequestError && /output_config\.format\.type/.test(e.error.error.message));
});

// The other clients of Anthropic's API: LangChain's ChatAnthropic (invoke, and
// withStructuredOutput's jsonSchema method, which sends output_config.format) and the Vercel AI
// SDK's @ai-sdk/anthropic (generateText, and generateObject, which forces a JSON tool for a
// model it does not know), each answer held to zod.
test("langchain ChatAnthropic and @ai-sdk/anthropic: text, and objects their schema accepts", async () => {
  // Booleans: LangChain's schema transform moves a string's enum into its description, which
  // leaves the string's length to random weights.
  const Shape = z.object({ round: z.boolean(), filled: z.boolean() });
  const chat = new ChatAnthropic({
    model, apiKey, anthropicApiUrl: root, maxTokens: 160, temperature: 0, maxRetries: 0,
  });
  const said = await chat.invoke("Hello");
  assert.equal(typeof said.content, "string");
  assert.ok(said.usage_metadata.output_tokens > 0);
  const shape = await chat.withStructuredOutput(Shape, { method: "jsonSchema" }).invoke("A shape, in JSON.");
  assert.deepEqual(shape, Shape.parse(shape));

  const provider = createAnthropic({ baseURL: root + "/v1", apiKey });
  const text = await generateText({ model: provider(model), prompt: "Hello", maxOutputTokens: 4, temperature: 0 });
  assert.equal(text.finishReason, "length");
  assert.equal(text.usage.outputTokens, 4);
  const { object } = await generateObject({
    model: provider(model), schema: Shape, prompt: "A shape, in JSON.", maxOutputTokens: 160, temperature: 0,
  });
  assert.deepEqual(object, Shape.parse(object));
});

// countTokens counts the prompt messages.create gets for the same request (system, tools and
// all); a route under /v1/messages that courier lacks answers in Anthropic's error shape.
test("anthropic sdk: countTokens equals the input_tokens of the same request", async () => {
  const tools = [{ name: "get_weather", description: "Weather", input_schema: weather }];
  const params = { model, system: "Be brief.", tools, messages: [{ role: "user", content: "Weather in Paris?" }] };
  const counted = await anthropic.messages.countTokens(params);
  const r = await anthropic.messages.create({ ...params, max_tokens: 1 });
  assert.equal(counted.input_tokens, r.usage.input_tokens);
  const plain = await anthropic.messages.countTokens({ model, messages: params.messages });
  assert.ok(plain.input_tokens < counted.input_tokens);
  await assert.rejects(anthropic.messages.countTokens({ model: "gpt-9", messages: params.messages }),
    (e) => e instanceof Anthropic.NotFoundError && e.error?.error?.type === "not_found_error");
  await assert.rejects(anthropic.messages.batches.list(),
    (e) => e instanceof Anthropic.NotFoundError && e.error?.type === "error" && e.error.error.type === "not_found_error");
});

test("anthropic sdk: errors arrive in Anthropic's shape", async () => {
  await assert.rejects(
    anthropic.messages.create({
      model, max_tokens: 4,
      messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }] }],
    }),
    (e) => e instanceof Anthropic.BadRequestError && e.error?.type === "error" && /text only/.test(e.error.error.message));
  // A context overflow in Anthropic's words ("prompt is too long"), which ChatAnthropic looks for.
  await assert.rejects(
    anthropic.messages.create({ model, max_tokens: 100000000, messages: [{ role: "user", content: "Hi" }] }),
    (e) => e instanceof Anthropic.BadRequestError && /^prompt is too long/.test(e.error.error.message));
  const stranger = new Anthropic({ baseURL: root, apiKey: "wrong", maxRetries: 0 });
  await assert.rejects(stranger.messages.create({ model, max_tokens: 4, messages: [{ role: "user", content: "Hi" }] }),
    (e) => e instanceof Anthropic.AuthenticationError && e.error?.error?.type === "authentication_error");
});

test("openai sdk: responses.create answers text, and the stream builds the same response", async () => {
  const params = { model, input: "Hello", instructions: "Be brief.", max_output_tokens: 8, temperature: 0 };
  const whole = await openai.responses.create(params);
  assert.equal(whole.object, "response");
  assert.equal(whole.status, "incomplete");
  assert.equal(whole.incomplete_details.reason, "max_output_tokens");
  assert.equal(typeof whole.output_text, "string");
  assert.equal(whole.usage.output_tokens, 8);
  const stream = openai.responses.stream(params);
  let deltas = "";
  const types = new Set();
  for await (const e of stream) {
    types.add(e.type);
    if (e.type === "response.output_text.delta") deltas += e.delta;
  }
  const final = await stream.finalResponse();
  assert.equal(deltas, whole.output_text);
  assert.equal(final.output_text, whole.output_text);
  for (const t of ["response.created", "response.output_text.delta", "response.incomplete"]) assert.ok(types.has(t), t);
});

test("openai sdk: responses with a forced function call and with a json_schema format", async () => {
  const call = await openai.responses.create({
    model, input: [{ role: "user", content: "Weather in Kyiv?" }], max_output_tokens: 200, temperature: 0,
    tools: [{ type: "function", name: "get_weather", description: "Weather of a city", parameters: weather, strict: true }],
    tool_choice: { type: "function", name: "get_weather" },
  });
  const calls = call.output.filter((o) => o.type === "function_call");
  assert.equal(calls.length, 1, JSON.stringify(call.output));
  assert.equal(calls[0].name, "get_weather");
  assert.ok(validWeather(JSON.parse(calls[0].arguments)), calls[0].arguments);
  // The output goes back as function_call_output, keyed by call_id.
  const next = await openai.responses.create({
    model, max_output_tokens: 4,
    input: [{ role: "user", content: "Weather in Kyiv?" }, calls[0],
      { type: "function_call_output", call_id: calls[0].call_id, output: "3 C" }],
  });
  assert.equal(next.object, "response");

  const doc = await openai.responses.create({
    model, input: "A city.", max_output_tokens: 100, temperature: 0,
    text: { format: { type: "json_schema", name: "weather", schema: weather, strict: true } },
  });
  assert.equal(doc.status, "completed", JSON.stringify(doc.output));
  assert.ok(validWeather(JSON.parse(doc.output_text)), doc.output_text);
  await assert.rejects(openai.responses.create({ model, input: "Hi", previous_response_id: "resp_x" }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === "previous_response_id");
});

// Every answer names its request: the id a client sent in X-Request-Id, else one the server
// made, read by each SDK from its own header (openai: x-request-id; Anthropic: request-id), and
// in Anthropic's error bodies as request_id.
test("request ids: each SDK reads the request's id from its header, and Anthropic's errors carry it", async () => {
  const openaiMade = await openai.chat.completions
    .create({ model, max_tokens: 2, messages: [{ role: "user", content: "Hi" }] })
    .withResponse();
  assert.match(openaiMade.request_id, /^req_[0-9a-f]{24}$/);
  const again = await openai.chat.completions
    .create({ model, max_tokens: 2, messages: [{ role: "user", content: "Hi" }] })
    .withResponse();
  assert.notEqual(again.request_id, openaiMade.request_id);
  const mine = await openai.chat.completions
    .create({ model, max_tokens: 2, messages: [{ role: "user", content: "Hi" }] },
      { headers: { "X-Request-Id": "agent-run-42" } })
    .withResponse();
  assert.equal(mine.request_id, "agent-run-42");
  const message = await anthropic.messages
    .create({ model, max_tokens: 2, messages: [{ role: "user", content: "Hi" }] },
      { headers: { "X-Request-Id": "claude-run-7" } })
    .withResponse();
  assert.equal(message.request_id, "claude-run-7");
  await assert.rejects(
    anthropic.messages.create({ model, max_tokens: 0, messages: [{ role: "user", content: "Hi" }] },
      { headers: { "X-Request-Id": "bad-run-1" } }),
    (e) => e instanceof Anthropic.BadRequestError && e.requestID === "bad-run-1" &&
      e.error?.request_id === "bad-run-1" && e.error?.type === "error");
  await assert.rejects(
    openai.chat.completions.create({ model: "gpt-9", messages: [{ role: "user", content: "Hi" }] },
      { headers: { "X-Request-Id": "bad-run-2" } }),
    (e) => e instanceof OpenAI.NotFoundError && e.requestID === "bad-run-2");
});
