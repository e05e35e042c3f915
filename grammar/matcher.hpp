#pragma once
// Matches bytes against a compiled grammar, one token at a time, as decoding produces them.
// The state is a set of parse stacks (an Earley-like set, deduplicated): each stack is an
// interned linked list of frames (element, DFA state, parent frame), so stacks share their
// tails and a step costs the stacks that can take the byte, not the depth of the nesting.
//
// Invariants: the state is never empty after a successful accept (an accept that would empty it
// is refused and changes nothing); can_end() is true exactly when the bytes accepted so far are
// a complete sentence of the grammar.
#include <cstdint>
#include <memory>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "grammar/compiled_grammar.hpp"

namespace courier::grammar {

class matcher {
 public:
  explicit matcher(std::shared_ptr<const compiled_grammar> g);

  // Takes `bytes` (a token's bytes; possibly part of a UTF-8 character) if the grammar allows
  // them here, else returns false and leaves the state as it was.
  [[nodiscard]] bool accept(std::string_view bytes);
  // The grammar is complete: end of sequence may come here.
  bool can_end() const;
  // Nothing more can be accepted (complete and no stack can go on).
  bool is_terminated() const;
  // Starts the grammar over (a triggered grammar's next occurrence), as one step that
  // rollback undoes like an accept.
  void restart() { history_.push_back(history_.front()); }
  // Undoes the last `num_steps` successful accept() (and restart()) calls (speculative tokens
  // rejected).
  void rollback(std::size_t num_steps);
  std::size_t num_steps() const { return history_.size() - 1; }

  const compiled_grammar& grammar() const { return *grammar_; }

  // The frames, for token_mask: a stack is its top frame's id. A top frame is inside a
  // terminal (element, DFA state); a parent frame is where a rule returns to: the element after
  // the reference, with dfa_state `continuation`.
  struct frame {
    std::uint32_t element = 0;
    std::uint32_t dfa_state = 0;
    std::uint32_t parent = 0;  // the frame to return to after this rule, or no_parent
  };
  static constexpr std::uint32_t continuation = 0xFFFFFFFFu;
  static constexpr std::uint32_t no_parent = 0xFFFFFFFFu;
  // The parent of a frame studied out of context (token_mask's cache): a rule that ends there
  // sets `escaped` instead of returning.
  static constexpr std::uint32_t unknown_parent = 0xFFFFFFFEu;
  struct state {
    std::vector<std::uint32_t> stacks;  // sorted top-frame ids
    bool complete = false;              // an empty stack: the root has ended
    bool escaped = false;               // a rule returned to unknown_parent
  };
  // The state of one stack: the frame `top` alone (a state's stacks are independent).
  state single(std::uint32_t top) const { return state{{top}, false, false}; }
  // A frame inside terminal `element` at `dfa_state` whose rule returns to `return_to`: the
  // element after a reference, in a rule that itself returns to unknown_parent; or no_parent
  // (the root's end). One level of what lies below a stack's top, for token_mask's cache.
  std::uint32_t out_of_context(std::uint32_t element, std::uint32_t dfa_state,
                               std::uint32_t return_to) {
    const std::uint32_t parent =
        return_to == no_parent ? no_parent : intern(return_to, continuation, unknown_parent);
    return intern(element, dfa_state, parent);
  }
  const state& current() const { return history_.back(); }
  const frame& frame_at(std::uint32_t id) const { return frames_[id]; }

  // Advances `from` by one byte into `to` (cleared first); false when no stack takes it (and
  // the grammar neither ended nor escaped on it).
  bool step(const state& from, std::uint8_t byte, state& to);

 private:
  std::uint32_t intern(std::uint32_t element, std::uint32_t dfa_state, std::uint32_t parent);
  // Adds to `out` every stack that continues at `element` (of a rule whose caller is
  // `parent`), expanding rule references and popping finished rules.
  void expand(std::uint32_t element, std::uint32_t parent, state& out);

  std::shared_ptr<const compiled_grammar> grammar_;
  std::vector<frame> frames_;
  struct frame_hash {
    std::size_t operator()(const frame& f) const {
      std::uint64_t h = (std::uint64_t{f.element} << 32 | f.dfa_state) * 0x9E3779B97F4A7C15ull;
      return static_cast<std::size_t>(h ^ (h >> 29) ^ (std::uint64_t{f.parent} * 0xC2B2AE3D27D4EB4Full));
    }
  };
  struct frame_eq {
    bool operator()(const frame& a, const frame& b) const {
      return a.element == b.element && a.dfa_state == b.dfa_state && a.parent == b.parent;
    }
  };
  std::unordered_map<frame, std::uint32_t, frame_hash, frame_eq> frame_ids_;
  std::vector<state> history_;  // history_[0]: the start; back(): now
  std::vector<std::uint32_t> work_;
};

// True when `text` is a complete sentence of `g` (tests, and checking a whole output).
bool full_match(const std::shared_ptr<const compiled_grammar>& g, std::string_view text);

}  // namespace courier::grammar
