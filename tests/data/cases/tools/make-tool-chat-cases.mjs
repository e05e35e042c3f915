// Renders tool-call conversations with @huggingface/jinja (the renderer the chat fixtures come
// from) on the templates of tests/data/cases/chat-cases.json.
import { Template } from "@huggingface/jinja";
import fs from "fs";
const src = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const tools = [{type: "function", function: {name: "get_weather", description: "Weather of a city",
  parameters: {type: "object", properties: {city: {type: "string"}}, required: ["city"]}}}];
// What courier hands the template: arguments as an object (vLLM does the same), developer as system,
// content parts joined with "\n".
const conversations = [
  {name: "tool-result history",
   messages: [
    {role: "system", content: "You are helpful."},
    {role: "user", content: "Weather in Paris?"},
    {role: "assistant", content: "", tool_calls: [{id: "call_1", type: "function",
      function: {name: "get_weather", arguments: {city: "Paris"}}}]},
    {role: "tool", tool_call_id: "call_1", content: "{\"temp\": 21}"},
    {role: "user", content: "Thanks.\nAnd tomorrow?"}],
   tools},
];
const cases = [];
for (const family of ["qwen3", "llama3_1"]) {
  const t = new Template(src.templates[family]);
  for (const c of conversations) {
    const ctx = {messages: c.messages, tools: c.tools, add_generation_prompt: true,
                 bos_token: family === "qwen3" ? "" : "<|begin_of_text|>",
                 eos_token: family === "qwen3" ? "<|im_end|>" : "<|eot_id|>"};
    cases.push({family, name: c.name, ...ctx, rendered: t.render(ctx)});
  }
}
process.stdout.write(JSON.stringify({source: "@huggingface/jinja " + JSON.parse(fs.readFileSync("node_modules/@huggingface/jinja/package.json")).version + " rendering the templates of chat-cases.json", cases}, null, 1) + "\n");
