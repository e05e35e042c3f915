// The scripted agent conversation (conversation.mjs) through LangChain JS: ChatOpenAI on the
// chat-completions API, invoke and stream with its message classes, tools bound as the OpenAI
// format, explicit nulls and unknown fields through modelKwargs, logitBias, abort, the 400s.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ChatOpenAI } from "@langchain/openai";
import { AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage } from "@langchain/core/messages";
import {
  assertBudget, baseURL, apiKey, forcedToken, model, nullOptionals, parts, pngDataUrl, script,
  tools, unknownFields,
} from "./conversation.mjs";

function chat(fields = {}) {
  return new ChatOpenAI({
    model, apiKey, configuration: { baseURL }, temperature: 0, maxTokens: 2, maxRetries: 0, ...fields,
  });
}

const history = [
  new SystemMessage({ content: parts(script.system) }),
  new ChatMessage({ role: "developer", content: script.developer }),
  new HumanMessage({ content: parts(script.user) }),
  new AIMessage({ content: parts(script.assistant) }),
  new HumanMessage(script.question),
  new AIMessage({
    content: "",
    tool_calls: [{ id: script.call.id, name: script.call.name, args: script.call.args, type: "tool_call" }],
  }),
  new ToolMessage({ content: script.result, tool_call_id: script.call.id }),
  new HumanMessage({ content: parts(script.followUp) }),
];

function assertAnswer(m) {
  assert.ok(AIMessage.isInstance(m) || m.constructor.name === "AIMessageChunk", m.constructor.name);
  assert.equal(typeof m.content, "string");
  assert.deepEqual(m.tool_calls ?? [], []);
  const u = m.usage_metadata;
  assert.ok(u, "usage_metadata");
  assertBudget(u.output_tokens, m.response_metadata.finish_reason, 2);
  assert.ok(u.input_tokens > 0);
  assert.equal(u.total_tokens, u.input_tokens + u.output_tokens);
}

async function streamed(runnable, messages, options) {
  let whole = null;
  for await (const chunk of await runnable.stream(messages, options)) whole = whole ? whole.concat(chunk) : chunk;
  return whole;
}

test("langchain: invoke answers the scripted tool round trip with bound tools", async () => {
  assertAnswer(await chat().bindTools(tools).invoke(history));
});

test("langchain: stream delivers it in chunks that add up, with usage", async () => {
  assertAnswer(await streamed(chat().bindTools(tools), history));
});

test("langchain: explicit nulls and unknown fields in modelKwargs are accepted", async () => {
  const { stream_options, ...nulls } = nullOptionals;  // null would switch off streamed usage
  const llm = chat({ modelKwargs: { ...nulls, ...unknownFields } }).bindTools(tools);
  assertAnswer(await llm.invoke(history));
  assertAnswer(await streamed(llm, history));
});

test("langchain: logitBias +100 forces its token", async () => {
  const { id, text } = await forcedToken(2);
  const llm = chat({ logitBias: { [id]: 100 } });
  const m = await llm.invoke(history);
  assert.equal(m.content, text);
  assert.equal(m.response_metadata.finish_reason, "length");
  assert.equal((await streamed(llm, history)).content, text);
});

test("langchain: after an aborted stream the server answers the next invoke", async () => {
  const controller = new AbortController();
  const llm = chat({ maxTokens: 200, modelKwargs: { ignore_eos: true } });
  let chunks = 0;
  try {
    for await (const chunk of await llm.stream(history, { signal: controller.signal })) {
      if (chunk.content && ++chunks === 2) {
        controller.abort();
        break;
      }
    }
  } catch (e) {
    if (e.name !== "AbortError") throw e;
  }
  assert.equal(chunks, 2);
  assertAnswer(await chat().invoke(history));
});

test("langchain: an image part is refused with 400, text only", async () => {
  const image = new HumanMessage({
    content: [...parts("What is in this picture?"), { type: "image_url", image_url: { url: pngDataUrl } }],
  });
  await assert.rejects(chat().invoke([image]), (e) => e.status === 400 && /text only/i.test(e.message));
});

test("langchain: an unknown role is refused with 400", async () => {
  const warn = console.warn;
  console.warn = () => {};  // LangChain warns about the role it is told to send
  try {
    const narrator = new ChatMessage({ role: "narrator", content: "Once upon a time" });
    await assert.rejects(chat().invoke([narrator, new HumanMessage(script.user)]),
      (e) => e.status === 400 && /role/i.test(e.message));
  } finally {
    console.warn = warn;
  }
});

// ChatOpenAI({useResponsesApi: true}) talks to /v1/responses and sends "text": {} (no format) on
// every request, with or without tools: plain text, as OpenAI treats it.
test("langchain: on the Responses API (useResponsesApi, which sends \"text\": {}) invoke and stream answer", async () => {
  const llm = chat({ useResponsesApi: true });
  for (const m of [await llm.bindTools(tools).invoke(history), await streamed(llm, [new HumanMessage(script.question)])]) {
    assert.equal(typeof m.text, "string");
    assert.deepEqual(m.tool_calls ?? [], []);
    const u = m.usage_metadata;
    assert.ok(u, "usage_metadata");
    assert.ok(u.input_tokens > 0);
    assert.ok(u.output_tokens >= 1 && u.output_tokens <= 2, `${u.output_tokens} output tokens`);
  }
});
