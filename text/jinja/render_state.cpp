#include "text/jinja/render_state.hpp"

#include <string>

#include "text/jinja/template_error.hpp"

namespace courier::text::jinja {

namespace {

constexpr std::size_t bytes_per_step = 32;
constexpr std::size_t max_namespaces = 100'000;

}  // namespace

render_state::render_state(const render_options& options) : options_(options) {}

render_state::~render_state() {
  // Emptying each namespace breaks every reference cycle, which all pass through one.
  for (const value& ns : namespaces_) ns.as_object().clear();
}

void render_state::charge_text(std::size_t size_bytes) {
  check_text(size_bytes);
  step(size_bytes / bytes_per_step);
}

void render_state::check_text(std::size_t size_bytes) const {
  if (size_bytes > options_.max_output_bytes) {
    throw template_error("text longer than the limit of " +
                         std::to_string(options_.max_output_bytes) + " bytes");
  }
}

value render_state::make_namespace(object_data contents) {
  if (namespaces_.size() >= max_namespaces) {
    throw template_error("more than " + std::to_string(max_namespaces) + " namespaces");
  }
  contents.is_namespace = true;
  value ns = value::object(std::move(contents));
  namespaces_.push_back(ns);
  return ns;
}

std::time_t render_state::now() const {
  return options_.now ? *options_.now : std::time(nullptr);
}

void render_state::steps_exceeded() const {
  throw template_error("the template did more than " + std::to_string(options_.max_steps) +
                       " steps of work (an unbounded loop?)");
}

}  // namespace courier::text::jinja
