// The scripted agent conversation (conversation.mjs) through the Vercel AI SDK (v6):
// generateText and streamText on @ai-sdk/openai-compatible and on @ai-sdk/openai's
// chat-completions model, with the request fields each provider passes on.
import { test } from "node:test";
import assert from "node:assert/strict";
import { APICallError, generateText, jsonSchema, streamText, tool } from "ai";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  assertBudget, baseURL, apiKey, forcedToken, model, script, tinyPng, unknownFields, weatherSchema,
} from "./conversation.mjs";

globalThis.AI_SDK_LOG_WARNINGS = false;

const compatible = createOpenAICompatible({ name: "courier", baseURL, apiKey, includeUsage: true });
const openai = createOpenAI({ baseURL, apiKey });

// Each provider, with the options that make it send what the script needs.
const providers = [
  {
    name: "openai-compatible",
    model: compatible.chatModel(model),
    // Keys the compatible provider does not know go into the body as they are, nulls included.
    extra: { courier: { ...unknownFields, top_k: null, n: null, max_completion_tokens: null } },
    bias: (id) => ({ courier: { logit_bias: { [id]: 100 } } }),
  },
  {
    name: "openai chat",
    model: openai.chat(model),
    // systemMessageMode "developer" sends the system prompt in the developer role.
    base: { openai: { systemMessageMode: "developer" } },
    extra: {
      openai: {
        systemMessageMode: "developer", store: false, metadata: { suite: "node" },
        promptCacheKey: "courier-node-tests", safetyIdentifier: "user-1234", textVerbosity: "low",
        parallelToolCalls: true, prediction: { type: "content", content: "It is sunny." },
        reasoningEffort: "low", serviceTier: "auto", user: "tester",
      },
    },
    bias: (id) => ({ openai: { systemMessageMode: "developer", logitBias: { [id]: 100 } } }),
  },
];

const tools = {
  [script.call.name]: tool({ description: "Current weather of a city", inputSchema: jsonSchema(weatherSchema) }),
};

const messages = [
  { role: "user", content: [{ type: "text", text: script.user }, { type: "text", text: script.developer }] },
  { role: "assistant", content: [{ type: "text", text: script.assistant }] },
  { role: "user", content: script.question },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: script.call.id, toolName: script.call.name, input: script.call.args }],
  },
  {
    role: "tool",
    content: [{
      type: "tool-result", toolCallId: script.call.id, toolName: script.call.name,
      output: { type: "text", value: script.result },
    }],
  },
  { role: "user", content: [{ type: "text", text: script.followUp }] },
];

function call(p, providerOptions = p.base) {
  return {
    model: p.model, system: script.system, messages, tools, maxOutputTokens: 2, temperature: 0,
    maxRetries: 0, providerOptions,
  };
}

function assertResult({ text, finishReason, usage }) {
  assert.equal(typeof text, "string");
  assertBudget(usage.outputTokens, finishReason, 2);
  assert.ok(usage.inputTokens > 0);
  assert.equal(usage.totalTokens, usage.inputTokens + usage.outputTokens);
}

async function streamed(options) {
  const r = streamText(options);
  let text = "", deltas = 0;
  for await (const part of r.fullStream) {
    if (part.type === "error") throw part.error;
    if (part.type === "text-delta") {
      text += part.text;
      deltas++;
    }
  }
  return { text, deltas, finishReason: await r.finishReason, usage: await r.usage };
}

for (const p of providers) {
  test(`ai-sdk ${p.name}: generateText answers the scripted tool round trip`, async () => {
    const r = await generateText(call(p));
    assertResult(r);
    assert.deepEqual(r.toolCalls, []);
  });

  test(`ai-sdk ${p.name}: streamText streams it and ends with usage`, async () => {
    const s = await streamed(call(p));
    assertResult(s);
  });

  test(`ai-sdk ${p.name}: the fields the provider passes on are accepted`, async () => {
    const r = await generateText(call(p, p.extra));
    assertResult(r);
    const s = await streamed(call(p, p.extra));
    assertResult(s);
  });

  test(`ai-sdk ${p.name}: logit_bias +100 forces its token`, async () => {
    const { id, text } = await forcedToken(2);
    const options = call(p, p.bias(id));
    const r = await generateText(options);
    assert.equal(r.text, text);
    assert.equal(r.finishReason, "length");
    const s = await streamed(options);
    assert.equal(s.text, text);
  });

  test(`ai-sdk ${p.name}: after an aborted streamText the server answers the next call`, async () => {
    const controller = new AbortController();
    const r = streamText({ ...call(p), maxOutputTokens: 200, abortSignal: controller.signal });
    let deltas = 0;
    try {
      for await (const part of r.fullStream) {
        if (part.type === "error") throw part.error;
        if (part.type === "text-delta" && ++deltas === 2) {
          controller.abort();
          break;
        }
      }
    } catch (e) {
      if (e.name !== "AbortError") throw e;
    }
    assert.equal(deltas, 2);
    const next = await generateText(call(p));
    assertResult(next);
  });

  test(`ai-sdk ${p.name}: an image part is refused with 400, text only`, async () => {
    const options = {
      ...call(p),
      messages: [{ role: "user", content: [{ type: "text", text: "What is this?" }, { type: "image", image: tinyPng, mediaType: "image/png" }] }],
    };
    await assert.rejects(generateText(options),
      (e) => APICallError.isInstance(e) && e.statusCode === 400 && /text only/i.test(e.message));
  });
}
