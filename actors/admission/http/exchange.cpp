#include "actors/admission/http/exchange.hpp"

namespace courier::http {
namespace {

// A callback must not throw; if one does, the others still run and the I/O thread lives on.
void run_guarded(const std::function<void()>& fn) {
  try {
    fn();
  } catch (...) {
  }
}

}  // namespace

void exchange::add_disconnect_callback(std::function<void()> fn) {
  switch (state()) {
    case exchange_state::open:
      disconnect_callbacks_.push_back(std::move(fn));
      return;
    case exchange_state::finished:
      return;
    case exchange_state::gone:
      run_guarded(fn);
      return;
  }
}

void exchange::finish() {
  if (state() != exchange_state::open) return;
  state_.store(exchange_state::finished, std::memory_order_release);
  disconnect_callbacks_.clear();
}

void exchange::mark_gone() {
  if (state() != exchange_state::open) return;
  state_.store(exchange_state::gone, std::memory_order_release);
  // Moved out first: a callback may add another (which then runs at once).
  auto callbacks = std::move(disconnect_callbacks_);
  disconnect_callbacks_.clear();
  for (auto& fn : callbacks) run_guarded(fn);
}

}  // namespace courier::http
