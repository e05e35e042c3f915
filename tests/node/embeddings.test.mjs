// POST /v1/embeddings through the openai SDK (its default base64, decoded by the SDK, and
// floats), LangChain's OpenAIEmbeddings and the AI SDK's embed/embedMany, on a second server
// whose model folder is tiny-qwen3 with sentence-transformers' last-token Pooling and Normalize
// modules (written here beside links to its files): every client gets the same vectors, of unit
// length, one per input in order. The main server's plain causal LM answers 404.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import os from "node:os";
import path from "node:path";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import OpenAI from "openai";
import { OpenAIEmbeddings } from "@langchain/openai";
import { createOpenAI } from "@ai-sdk/openai";
import { embed, embedMany } from "ai";
import { apiKey, baseURL, model, startServer } from "./conversation.mjs";

let folder, server, client, url;

before(async () => {
  folder = mkdtempSync(path.join(os.tmpdir(), "courier-embedding-"));
  const from = path.resolve(process.cwd(), "../data/models/tiny-qwen3");
  for (const f of readdirSync(from)) symlinkSync(path.join(from, f), path.join(folder, f));
  writeFileSync(path.join(folder, "modules.json"), JSON.stringify([
    { idx: 0, name: "0", path: "", type: "sentence_transformers.models.Transformer" },
    { idx: 1, name: "1", path: "1_Pooling", type: "sentence_transformers.models.Pooling" },
    { idx: 2, name: "2", path: "2_Normalize", type: "sentence_transformers.models.Normalize" },
  ]));
  mkdirSync(path.join(folder, "1_Pooling"));
  writeFileSync(path.join(folder, "1_Pooling", "config.json"),
    JSON.stringify({ word_embedding_dimension: 64, pooling_mode_lasttoken: true, pooling_mode_mean_tokens: false }));
  ({ server, url } = await startServer(["--set", "model.path=" + folder]));
  client = new OpenAI({ baseURL: url + "/v1", apiKey, maxRetries: 0, timeout: 120000 });
});

after(() => {
  server?.kill("SIGTERM");
  if (folder) rmSync(folder, { recursive: true, force: true });
});

const texts = ["The weather in Paris", "Quarterly revenue grew", "The weather in Paris"];
const norm = (v) => Math.sqrt(v.reduce((s, x) => s + x * x, 0));

test("openai sdk: embeddings.create, base64 (its default) and float alike, unit length", async () => {
  const b64 = await client.embeddings.create({ model, input: texts });
  const floats = await client.embeddings.create({ model, input: texts, encoding_format: "float" });
  assert.equal(b64.object, "list");
  assert.equal(b64.data.length, 3);
  assert.deepEqual(b64.data.map((d) => d.index), [0, 1, 2]);
  assert.deepEqual(b64.data.map((d) => d.embedding), floats.data.map((d) => d.embedding));
  for (const d of floats.data) {
    assert.equal(d.embedding.length, 64);  // tiny-qwen3's hidden_size
    assert.ok(Math.abs(norm(d.embedding) - 1) < 1e-5, String(norm(d.embedding)));
  }
  assert.deepEqual(floats.data[0].embedding, floats.data[2].embedding);  // the same text
  assert.notDeepEqual(floats.data[0].embedding, floats.data[1].embedding);
  assert.ok(floats.usage.prompt_tokens > 0);
  assert.equal(floats.usage.total_tokens, floats.usage.prompt_tokens);
  await assert.rejects(client.embeddings.create({ model, input: texts, dimensions: 32 }),
    (e) => e instanceof OpenAI.BadRequestError && e.param === "dimensions");
});

test("langchain OpenAIEmbeddings and the AI SDK's embed/embedMany give the same vectors", async () => {
  const reference = (await client.embeddings.create({ model, input: texts, encoding_format: "float" }))
    .data.map((d) => d.embedding);
  const lc = new OpenAIEmbeddings({ model, apiKey, configuration: { baseURL: url + "/v1" }, maxRetries: 0 });
  assert.deepEqual(await lc.embedDocuments(texts), reference);
  assert.deepEqual(await lc.embedQuery(texts[1]), reference[1]);
  const provider = createOpenAI({ baseURL: url + "/v1", apiKey });
  const many = await embedMany({ model: provider.embedding(model), values: texts, maxRetries: 0 });
  assert.deepEqual(many.embeddings, reference);
  const one = await embed({ model: provider.embedding(model), value: texts[0], maxRetries: 0 });
  assert.deepEqual(one.embedding, reference[0]);
});

test("a causal LM's folder answers /v1/embeddings with a 404 that says why", async () => {
  const plain = new OpenAI({ baseURL, apiKey, maxRetries: 0 });
  await assert.rejects(plain.embeddings.create({ model, input: "Hi" }),
    (e) => e instanceof OpenAI.NotFoundError && /modules\.json/.test(e.message));
});
