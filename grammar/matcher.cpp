#include "grammar/matcher.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace courier::grammar {

matcher::matcher(std::shared_ptr<const compiled_grammar> g) : grammar_(std::move(g)) {
  state start;
  for (std::uint32_t alt : grammar_->alternatives(grammar_->root())) expand(alt, no_parent, start);
  std::sort(start.stacks.begin(), start.stacks.end());
  start.stacks.erase(std::unique(start.stacks.begin(), start.stacks.end()), start.stacks.end());
  history_.push_back(std::move(start));
}

std::uint32_t matcher::intern(std::uint32_t element, std::uint32_t dfa_state,
                              std::uint32_t parent) {
  const frame f{element, dfa_state, parent};
  auto [it, added] = frame_ids_.emplace(f, static_cast<std::uint32_t>(frames_.size()));
  if (added) frames_.push_back(f);
  return it->second;
}

// An explicit work list, not recursion: how far a pop can climb depends on the input. Left
// recursion is refused at compile time, so descending through references ends; each pop
// climbs one frame of a finite stack, so the whole walk ends.
void matcher::expand(std::uint32_t element_index, std::uint32_t parent, state& out) {
  const std::vector<element>& elements = grammar_->elements();
  work_.clear();
  work_.push_back(element_index);
  work_.push_back(parent);
  while (!work_.empty()) {
    const std::uint32_t p = work_.back();
    work_.pop_back();
    const std::uint32_t e = work_.back();
    work_.pop_back();
    const element& el = elements[e];
    switch (el.k) {
      case element::kind::terminal: {
        const byte_dfa& d = grammar_->dfas()[el.index];
        if (d.is_live(0)) out.stacks.push_back(intern(e, 0, p));
        if (d.accepts(0)) {  // the terminal may match nothing: go on past it
          work_.push_back(e + 1);
          work_.push_back(p);
        }
        break;
      }
      case element::kind::rule_ref: {
        // A reference last in its alternative returns straight to our caller (no frame).
        const std::uint32_t after =
            elements[e + 1].k == element::kind::end ? p : intern(e + 1, continuation, p);
        for (std::uint32_t alt : grammar_->alternatives(el.index)) {
          work_.push_back(alt);
          work_.push_back(after);
        }
        break;
      }
      case element::kind::end:
        if (p == no_parent) {
          out.complete = true;
        } else if (p == unknown_parent) {
          out.escaped = true;
        } else {
          const frame f = frames_[p];
          work_.push_back(f.element);
          work_.push_back(f.parent);
        }
        break;
    }
  }
}

bool matcher::step(const state& from, std::uint8_t byte, state& to) {
  to.stacks.clear();
  to.complete = false;
  to.escaped = false;
  const std::vector<element>& elements = grammar_->elements();
  for (std::uint32_t id : from.stacks) {
    const frame f = frames_[id];
    const byte_dfa& d = grammar_->dfas()[elements[f.element].index];
    const std::uint32_t next = d.step(f.dfa_state, byte);
    if (next == byte_dfa::dead) continue;
    if (d.is_live(next)) to.stacks.push_back(intern(f.element, next, f.parent));
    if (d.accepts(next)) expand(f.element + 1, f.parent, to);
  }
  std::sort(to.stacks.begin(), to.stacks.end());
  to.stacks.erase(std::unique(to.stacks.begin(), to.stacks.end()), to.stacks.end());
  return !to.stacks.empty() || to.complete || to.escaped;
}

bool matcher::accept(std::string_view bytes) {
  state cur = history_.back();
  state next;
  for (char c : bytes) {
    if (!step(cur, static_cast<std::uint8_t>(c), next)) return false;
    std::swap(cur, next);
  }
  history_.push_back(std::move(cur));
  return true;
}

bool matcher::can_end() const { return history_.back().complete; }

bool matcher::is_terminated() const { return history_.back().stacks.empty(); }

void matcher::rollback(std::size_t num_steps) {
  if (num_steps > history_.size() - 1) {
    throw std::invalid_argument("matcher::rollback: more steps than were accepted");
  }
  history_.resize(history_.size() - num_steps);
}

bool full_match(const std::shared_ptr<const compiled_grammar>& g, std::string_view text) {
  matcher m(g);
  return m.accept(text) && m.can_end();
}

}  // namespace courier::grammar
