#pragma once
// The request's `messages`, in the shapes OpenAI clients send, turned into what Hugging Face
// chat templates expect (as vLLM and transformers prepare them):
// - `developer` is `system`; any other role than system/user/assistant/tool is a 400;
// - `content` given as a list of parts is joined into one string: the text parts (and an
//   assistant's `refusal` parts) with "\n" between them, as vLLM does; image, audio and file
//   parts are a 400 (this server's models take text only);
// - `content: null` (or none) is "" for assistant messages (those with `tool_calls` have none;
//   vLLM does the same, and templates such as Qwen3's fail on null) and a 400 elsewhere;
// - a tool call's `function.arguments` given as a JSON string holding an object becomes that
//   object (templates write `arguments | tojson`), as vLLM does;
// - everything else in a message (name, tool_call_id, reasoning_content, ...) is kept, in the
//   client's key order.
// The caller bounds the body's nesting depth before parsing (json_body.hpp), so copying is safe;
// arguments held in a string are parsed here under the same bound, `max_depth`.
#include <nlohmann/json.hpp>

namespace courier::admission {

// Throws api_error 400 naming the message (e.g. "messages[2].content[0]") on a bad shape, or on
// arguments nesting deeper than `max_depth` (server.max_json_depth).
nlohmann::ordered_json template_messages(const nlohmann::ordered_json& messages, int max_depth);

}  // namespace courier::admission
