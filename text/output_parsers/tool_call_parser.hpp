#pragma once
// Tool calls out of a chat model's generated text, whole or as it streams: the text a model
// writes to call a function (Hermes `<tool_call>` blocks, Llama 3 JSON, Mistral `[TOOL_CALLS]`)
// becomes OpenAI's `tool_calls`, everything else `content`. See README.md for the formats, the
// streaming contract and what happens to malformed and cut-off calls.
//
// Bad model output never throws: text that does not turn into a call is content.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/output_parsers/call_object_reader.hpp"
#include "text/output_parsers/json_scanner.hpp"
#include "text/output_parsers/tool_event_list.hpp"

namespace courier::text::parsers {

enum class tool_family {
  hermes,       // Qwen 2.5 / Qwen 3, NousResearch Hermes: <tool_call>{...}</tool_call>
  llama3_json,  // Llama 3.1-3.3: [<|python_tag|>]{"name": ..., "parameters": ...}; ...
  mistral,      // [TOOL_CALLS][{...}, ...] or [TOOL_CALLS]name[ARGS]{...}
};
// "hermes", "qwen" (= hermes), "llama3_json", "llama", "mistral"; nullopt for anything else.
std::optional<tool_family> tool_family_from_name(std::string_view name);

struct tool_call {
  std::string name;
  std::string arguments;  // JSON text of an object, as the model wrote it
};

struct parsed_output {
  std::string content;
  std::vector<tool_call> calls;
  bool truncated_call = false;  // the last call was cut off: its arguments are incomplete
};

// The whole output at once: exactly what feeding it to a tool_call_parser and assembling the
// events gives (content concatenated; per index, the name and the concatenated arguments).
parsed_output parse_tool_calls(tool_family family, std::string_view whole);

// One stream's parser; spent after finish(). Invariants: events for a call come in the order
// call_begin, arguments...; indexes count up from 0 in call_begin order; no content or arguments
// event ends inside a UTF-8 character, except from finish() when the output itself ends inside one.
class tool_call_parser {
 public:
  explicit tool_call_parser(tool_family family);

  std::vector<tool_event> feed(std::string_view piece);
  // The end of the output: the text held back is resolved (content, or a cut-off call).
  std::vector<tool_event> finish();

  bool saw_tool_call() const { return num_calls_ > 0 || call_open_; }  // a call_begin was sent
  // The output ended inside a call whose call_begin was sent (e.g. at max_tokens).
  bool truncated_call() const { return truncated_; }

 private:
  enum class phase {
    content,       // outside calls, looking for the family's start marker
    llama_start,   // Llama: before the first call, whitespace and <|python_tag|>
    object,        // inside a call object (call_object_reader)
    hermes_close,  // after a Hermes call object: whitespace and </tool_call>
    between,       // after a call: whitespace, then another call or content
    llama_after,   // after a Llama call: whitespace, then ';' and another call, or content
    llama_next,    // after ';': whitespace before the next call
    mistral_open,  // after [TOOL_CALLS]: '[' (array form) or a name (v11 form)
    mistral_name,  // v11: the name, up to [ARGS]
    mistral_args,  // v11: the arguments object
    mistral_next,  // array form, after a call: ',' or ']'
    skip_broken,   // a sent call turned invalid: drop text up to where calls can resume
  };
  void run();
  bool step();
  bool step_content();
  bool step_object();
  bool step_hermes_close();
  bool step_between();
  bool step_llama_start();
  bool step_llama_after();
  bool step_llama_next();
  bool step_mistral_open();
  bool step_mistral_name();
  bool step_mistral_args();
  bool step_mistral_next();
  bool step_skip_broken();

  bool skip_space();  // advances past whitespace; false if the input ran out first
  std::string_view rest() const { return std::string_view(in_).substr(pos_); }
  std::string_view marker() const;
  void start_call_at(std::size_t marker_at);
  void hold(std::size_t from, std::size_t resume);
  void give_up_call();
  void cut_off_call();
  void object_ended();
  void send_call_progress();
  void begin_call(std::string name);
  void end_call();
  void compact();

  tool_family family_;
  phase phase_;
  std::string in_;       // input not yet consumed, from held_ if a call is tentative
  std::size_t pos_ = 0;  // next byte of in_ to read
  bool at_end_ = false;  // finish() was called: nothing held can wait for more
  // A call that has not been sent yet (no call_begin) is tentative: if it fails, in_[held_,
  // resume_) becomes content and reading goes on from resume_ as content, so a start marker that
  // leads nowhere is content and is not matched twice.
  bool tentative_ = false;
  std::size_t held_ = 0;
  std::size_t resume_ = 0;
  call_object_reader reader_;
  json_scanner args_;       // Mistral v11's arguments object
  std::string name_;        // Mistral v11's name while it is read
  bool call_open_ = false;  // call_begin sent for index num_calls_, call not ended
  std::size_t num_calls_ = 0;
  bool truncated_ = false;
  tool_event_list events_;
};

}  // namespace courier::text::parsers
