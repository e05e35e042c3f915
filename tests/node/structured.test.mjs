// Structured outputs and forced tool calls end to end, on the bundled tiny Qwen3 (random
// weights: only the grammar makes its output valid). Every constrained output that finishes is
// checked by independent validators: ajv (draft 2020-12) for JSON Schemas and tool arguments,
// zod for the SDK helpers. Through the raw API, the openai SDK (chat.completions.parse with a
// zod schema, the streaming helper's tool-call assembly), the Vercel AI SDK (generateObject,
// generateText with a required tool) and LangChain (withStructuredOutput, bindTools).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import OpenAI from "openai";
import { zodResponseFormat } from "openai/helpers/zod";
import { z } from "zod";
import { generateObject, generateText, jsonSchema, tool } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { ChatOpenAI } from "@langchain/openai";
import { apiKey, baseURL, model, post } from "./conversation.mjs";

const client = new OpenAI({ baseURL, apiKey, maxRetries: 0, timeout: 120000 });
const dir = fileURLToPath(new URL("../data/schemas/", import.meta.url));
const messages = [{ role: "user", content: "Answer in JSON." }];

function validator(schema) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile(schema);
}

function assertValid(validate, text, what) {
  let doc;
  assert.doesNotThrow(() => { doc = JSON.parse(text); }, `${what}: not JSON: ${text}`);
  assert.ok(validate(doc), `${what}: ${JSON.stringify(text)}: ${JSON.stringify(validate.errors)}`);
  return doc;
}

// Schemas whose documents are short whatever the model: every output of these must finish
// within the budget. (The others allow long strings and arrays, which random weights may fill.)
const bounded = new Set(["shapes.json", "tree.json", "tuple.json"]);
// A schema of each kind: anyOf of objects, $ref recursion, prefixItems, OpenAI's strict shape,
// formats and bounds. (grammar-ajv.test.mjs holds every schema's grammar to ajv on many more
// sentences; here the point is the server's own outputs, which cost a model run each.)
const served = ["shapes.json", "tree.json", "tuple.json", "strict_openai.json", "person.json"];

test("response_format json_schema: every finished output of each schema validates", async () => {
  const files = readdirSync(dir).filter((f) => served.includes(f)).sort();
  assert.equal(files.length, served.length);
  let finished = 0, total = 0;
  await Promise.all(files.map(async (file) => {
    const schema = JSON.parse(readFileSync(dir + file, "utf8"));
    const validate = validator(schema);
    const r = await client.chat.completions.create({
      model, messages, n: 2, temperature: 1, seed: 5, max_tokens: 160,
      response_format: { type: "json_schema", json_schema: { name: "doc", schema } },
    });
    for (const c of r.choices) {
      total++;
      if (bounded.has(file)) assert.equal(c.finish_reason, "stop", `${file}: ${c.message.content}`);
      if (c.finish_reason !== "stop") continue;
      finished++;
      assertValid(validate, c.message.content, file);
    }
  }));
  assert.ok(finished >= total / 2, `${finished} of ${total} finished`);
});

test("response_format json_object and guided fields, streamed as whole", async () => {
  const object = await client.chat.completions.create({
    model, messages, temperature: 0, max_tokens: 200, response_format: { type: "json_object" },
  });
  const stream = await client.chat.completions.create({
    model, messages, temperature: 0, max_tokens: 200, response_format: { type: "json_object" },
    stream: true,
  });
  let text = "";
  for await (const c of stream) text += c.choices[0]?.delta?.content ?? "";
  assert.equal(text, object.choices[0].message.content);
  if (object.choices[0].finish_reason === "stop") {
    const doc = JSON.parse(text);
    assert.equal(typeof doc, "object");
    assert.ok(doc !== null && !Array.isArray(doc));
  }
  const choice = await post("/v1/completions", {
    model, prompt: "Pick:", max_tokens: 10, n: 4, temperature: 1, seed: 3, guided_choice: ["alpha", "beta gamma"],
  });
  assert.equal(choice.status, 200);
  for (const c of choice.json.choices) assert.ok(["alpha", "beta gamma"].includes(c.text), c.text);
  const regex = await post("/v1/completions", {
    model, prompt: "Code:", max_tokens: 20, structured_outputs: { regex: "[A-Z]{2}-[0-9]{3}" },
  });
  assert.match(regex.json.choices[0].text, /^[A-Z]{2}-[0-9]{3}$/);
  const bad = await post("/v1/chat/completions", {
    model, messages, response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "string", contentMediaType: "text/html" } } },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.param, "response_format.json_schema.schema");
  assert.match(bad.json.error.message, /contentMediaType/);
});

const Person = z.object({
  name: z.string().max(8),
  age: z.number().int().min(0).max(120),
  pets: z.array(z.enum(["cat", "dog", "fish"])).max(3),
});

test("openai sdk: chat.completions.parse with a zod schema gives a parsed, valid object", async () => {
  const r = await client.chat.completions.parse({
    model, messages, temperature: 0, max_tokens: 120, response_format: zodResponseFormat(Person, "person"),
  });
  const m = r.choices[0].message;
  assert.equal(r.choices[0].finish_reason, "stop", m.content);
  assert.ok(Person.safeParse(m.parsed).success, JSON.stringify(m.parsed));
});

const weather = {
  type: "object",
  properties: { city: { type: "string", maxLength: 12 }, unit: { enum: ["c", "f"] } },
  required: ["city", "unit"],
  additionalProperties: false,
};
const add = {
  type: "object",
  properties: { a: { type: "integer", minimum: 0, maximum: 99 }, b: { type: "integer", minimum: -99, maximum: 99 } },
  required: ["a", "b"],
  additionalProperties: false,
};
const tools = [
  { type: "function", function: { name: "get_weather", description: "Weather of a city", parameters: weather } },
  { type: "function", function: { name: "add", description: "Adds two integers", parameters: add } },
];
const schemas = { get_weather: validator(weather), add: validator(add) };

function assertCalls(calls, only) {
  assert.ok(calls.length >= 1);
  for (const c of calls) {
    assert.equal(c.type, "function");
    assert.match(c.id, /^call_[0-9a-f]{24}$/);
    assert.ok(c.function.name in schemas, c.function.name);
    if (only) assert.equal(c.function.name, only);
    assertValid(schemas[c.function.name], c.function.arguments, c.function.name);
  }
}

// One call at a time: random weights would add parallel calls until the budget runs out.
test("tool_choice required and named: schema-valid calls, whole and streamed", async () => {
  for (const [tool_choice, only] of [["required", null], [{ type: "function", function: { name: "add" } }, "add"]]) {
    const r = await client.chat.completions.create({
      model, messages: [{ role: "user", content: "Weather in Oslo?" }], tools, tool_choice,
      parallel_tool_calls: false, temperature: 0, max_tokens: 200,
    });
    const c = r.choices[0];
    assert.equal(c.finish_reason, "tool_calls", JSON.stringify(c.message));
    assert.equal(c.message.content, null);
    assert.equal(c.message.tool_calls.length, 1);
    assertCalls(c.message.tool_calls, only);
    // The SDK's streaming helper assembles the deltas into the same calls.
    const stream = client.chat.completions.stream({
      model, messages: [{ role: "user", content: "Weather in Oslo?" }], tools, tool_choice,
      parallel_tool_calls: false, temperature: 0, max_tokens: 200,
    });
    const whole = await stream.finalChatCompletion();
    const s = whole.choices[0];
    assert.equal(s.finish_reason, "tool_calls");
    assertCalls(s.message.tool_calls, only);
    assert.deepEqual(s.message.tool_calls.map((t) => [t.function.name, t.function.arguments]),
      c.message.tool_calls.map((t) => [t.function.name, t.function.arguments]));
  }
});

test("tool_choice auto: a call the model starts is held to the tools' schemas", async () => {
  // +100 on "<tool_call>" makes the model start a call wherever its text is free.
  const r = await client.chat.completions.create({
    model, messages: [{ role: "user", content: "Weather in Oslo?" }], tools, max_tokens: 80,
    temperature: 0, logit_bias: { 151657: 100 },
  });
  const c = r.choices[0];
  const calls = c.message.tool_calls ?? [];
  assert.ok(calls.length >= 2, JSON.stringify(c.message));
  // At the budget the last call may be cut off; every other one is complete and valid.
  assertCalls(c.finish_reason === "length" ? calls.slice(0, -1) : calls, null);
});

const compatible = createOpenAICompatible({ name: "courier", baseURL, apiKey, includeUsage: true, supportsStructuredOutputs: true });

test("ai sdk: generateObject and generateText with a required tool", async () => {
  const { object } = await generateObject({
    model: compatible.chatModel(model), schema: Person, prompt: "A person.", temperature: 0,
    maxOutputTokens: 120, maxRetries: 0,
  });
  assert.ok(Person.safeParse(object).success, JSON.stringify(object));
  const r = await generateText({
    model: compatible.chatModel(model), prompt: "Weather in Rome?", temperature: 0, maxOutputTokens: 200,
    maxRetries: 0, toolChoice: "required",
    tools: { get_weather: tool({ description: "Weather of a city", inputSchema: jsonSchema(weather) }) },
  });
  assert.equal(r.finishReason, "tool-calls");
  assert.ok(r.toolCalls.length >= 1);
  for (const c of r.toolCalls) {
    assert.equal(c.toolName, "get_weather");
    assert.ok(schemas.get_weather(c.input), JSON.stringify(c.input));
  }
});

test("langchain: withStructuredOutput and bindTools with a forced tool", async () => {
  const llm = new ChatOpenAI({ model, apiKey, configuration: { baseURL }, temperature: 0, maxTokens: 150, maxRetries: 0 });
  const person = await llm.withStructuredOutput(Person, { name: "person", method: "jsonSchema" }).invoke("A person.");
  assert.ok(Person.safeParse(person).success, JSON.stringify(person));
  const m = await llm.bindTools(tools, { tool_choice: "required" }).invoke("Add 2 and 3.");
  assert.ok(m.tool_calls.length >= 1);
  for (const c of m.tool_calls) assert.ok(schemas[c.name](c.args), JSON.stringify(c));
});
