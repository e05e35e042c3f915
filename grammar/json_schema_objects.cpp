// Objects and arrays of a JSON Schema, and the built-in rules for any JSON value.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "grammar/expr.hpp"
#include "grammar/json_schema_internal.hpp"

namespace courier::grammar::json_schema_detail {

namespace {

// Optional prefix items nest one group per item; a rule every this many keeps the GBNF's
// nesting well under the parser's max_nesting.
constexpr std::size_t prefix_items_per_rule = 32;

const std::string open_brace = gbnf_quote("{");
const std::string close_brace = gbnf_quote("}");
const std::string open_bracket = gbnf_quote("[");
const std::string close_bracket = gbnf_quote("]");
const std::string colon = gbnf_quote(":");

}  // namespace

std::string converter::any_value_body(const std::string& name) {
  if (name == "value") {
    return fmt::format("{} | {} | {} | {} | \"true\" | \"false\" | \"null\"", builtin("object"),
                       builtin("array"), builtin("string"), builtin("number"));
  }
  if (name == "object") {
    const std::string member =
        gbnf_sequence({builtin("string"), ws_, colon, ws_, builtin("value")});
    const std::string members =
        gbnf_sequence({member, gbnf_repeat(gbnf_sequence({sep_, member}), 0, unbounded), ws_});
    return gbnf_sequence({open_brace, ws_, gbnf_repeat(members, 0, 1), close_brace});
  }
  const std::string items = gbnf_sequence(
      {builtin("value"), gbnf_repeat(gbnf_sequence({sep_, builtin("value")}), 0, unbounded), ws_});
  return gbnf_sequence({open_bracket, ws_, gbnf_repeat(items, 0, 1), close_bracket});
}

std::string converter::visit_object(const json& schema, const location& at) {
  static const json no_properties = json::object();
  const auto props_it = schema.find("properties");
  const json& props = props_it == schema.end() ? no_properties : *props_it;
  std::set<std::string> required;
  const auto required_it = schema.find("required");
  if (required_it != schema.end()) {
    for (const json& name : *required_it) required.insert(name.get<std::string>());
  }
  const auto additional_it = schema.find("additionalProperties");
  const bool additional = additional_it == schema.end() ? opts_.default_additional_properties
                                                        : *additional_it != json(false);
  std::string additional_value;
  if (additional) {
    if (additional_it != schema.end() && additional_it->is_object()) {
      location here = child(at, "additionalProperties");
      here.hint = at.hint + "-additional";
      additional_value = visit(*additional_it, here);
    } else {
      additional_value = builtin("value");
    }
  }

  // Members in the schema's order: (the member's GBNF, whether it must be there).
  std::vector<std::pair<std::string, bool>> members;
  const auto member = [&](const std::string& name, const std::string& value) {
    return gbnf_sequence({gbnf_quote(json(name).dump()), ws_, colon, ws_, value});
  };
  for (const auto& [name, sub] : props.items()) {
    const bool must = required.count(name) != 0;
    const location here = child(at, "properties", name, fmt::format("{}-{}", at.hint, name));
    if (sub == json(false)) {
      if (must) fail(here, fmt::format("required property '{}' has the schema false", name));
      continue;  // may not appear: not a member at all
    }
    members.emplace_back(member(name, visit(sub, here)), must);
  }
  // Required names without a schema of their own take additionalProperties' schema; they come
  // after the declared ones, in `required`'s order. (A set: an ordered_json finds a key in
  // linear time.)
  std::set<std::string> declared_names;
  for (const auto& [name, sub] : props.items()) declared_names.insert(name);
  if (required_it != schema.end()) {
    std::set<std::string> seen;
    for (const json& n : *required_it) {
      const std::string& name = n.get_ref<const std::string&>();
      if (declared_names.count(name) != 0 || !seen.insert(name).second) continue;
      if (!additional) {
        fail(at, fmt::format("required property '{}' is not in 'properties' and "
                             "additionalProperties is false",
                             name));
      }
      members.emplace_back(member(name, additional_value), true);
    }
  }
  // Extra members follow the declared ones, with any key but a declared name.
  std::string extra;
  if (additional) {
    std::vector<std::string> declared;
    for (const auto& [name, sub] : props.items()) declared.push_back(name);
    if (required_it != schema.end()) {
      for (const json& n : *required_it) {
        if (declared_names.count(n.get_ref<const std::string&>()) == 0) declared.push_back(n);
      }
    }
    extra = gbnf_sequence({extra_key(declared, at), ws_, colon, ws_, additional_value});
  }
  return finish(at, object_members(members, extra, at), true);
}

// The object `{ ... }` with `members` in order (each required or optional), then any number of
// `extra` members when it is not empty; commas only between members that are there.
std::string converter::object_members(const std::vector<std::pair<std::string, bool>>& members,
                                      const std::string& extra, const location& at) {
  const std::size_t n = members.size();
  std::size_t first_required = n;
  for (std::size_t i = 0; i < n; ++i) {
    if (members[i].second) {
      first_required = i;
      break;
    }
  }
  // The object's first member is one of members[0..last_first], or an extra one when nothing
  // is required; after the first member i comes tails[i + 1].
  const std::size_t last_first = std::min(first_required, n == 0 ? 0 : n - 1);
  const bool extra_first = first_required == n && !extra.empty();
  const std::size_t num_firsts = (n == 0 ? 0 : last_first + 1) + (extra_first ? 1 : 0);
  const std::string extras =
      extra.empty() ? "" : gbnf_repeat(gbnf_sequence({sep_, extra}), 0, unbounded);
  const auto piece = [&](std::size_t j) {
    const std::string p = gbnf_sequence({sep_, members[j].first});
    return members[j].second ? p : gbnf_repeat(p, 0, 1);
  };
  // tails[j] for j up to last_first + 1 (what the alternatives of the first member need). The
  // last of them is the pieces of the members after it in order, built forward: building each
  // tail from the next would copy the rest once per member (quadratic text).
  const std::size_t kept = n == 0 ? 0 : last_first + 1;
  std::vector<std::string> tails(kept + 1);
  if (n > 0) {
    std::vector<std::string> rest;
    for (std::size_t j = kept; j < n; ++j) rest.push_back(piece(j));
    rest.push_back(extras);
    tails[kept] = gbnf_sequence(rest);
    budget_.charge_work(tails[kept].size() / 16 + 1);
    // Shared by the alternative that starts at member j - 1 and by tails[j - 1]: a rule keeps
    // the object's GBNF linear in its number of members.
    const auto shared = [&](std::size_t j) {
      if (num_firsts > 1 && j >= 2 && j < n) {
        tails[j] = add_rule(fmt::format("{}-after-{}", at.hint, j - 1), tails[j]);
      }
    };
    shared(kept);
    for (std::size_t j = kept; j-- > 1;) {
      tails[j] = gbnf_sequence({piece(j), tails[j + 1]});
      shared(j);
    }
  }
  std::vector<std::string> firsts;
  if (n > 0) {
    for (std::size_t i = 0; i <= last_first; ++i) {
      firsts.push_back(gbnf_sequence({members[i].first, tails[i + 1]}));
    }
  }
  if (extra_first) firsts.push_back(gbnf_sequence({extra, extras}));
  if (firsts.empty()) return gbnf_sequence({open_brace, ws_, close_brace});
  std::string content;
  for (const std::string& f : firsts) content += (content.empty() ? "" : " | ") + f;
  if (firsts.size() > 1) content = gbnf_group(content);
  content = gbnf_sequence({content, ws_});
  if (first_required == n) content = gbnf_repeat(content, 0, 1);
  return gbnf_sequence({open_brace, ws_, content, close_brace});
}

std::string converter::visit_array(const json& schema, const location& at) {
  static const json no_prefix = json::array();
  const auto prefix_it = schema.find("prefixItems");
  const json& prefix = prefix_it == schema.end() ? no_prefix : *prefix_it;
  const auto items_it = schema.find("items");
  const std::uint64_t min_items = count_keyword(schema, "minItems", 0, at);
  const std::uint64_t max_items = count_keyword(schema, "maxItems", unbounded, at);
  if (max_items < min_items) {
    fail(at, fmt::format("minItems {} is more than maxItems {}", min_items, max_items));
  }
  // How many items the array can hold: items false ends it after the prefix, a false prefix
  // item ends it before that item.
  std::uint64_t most = max_items;
  const std::uint64_t num_prefix = prefix.size();
  if (items_it != schema.end() && *items_it == json(false)) most = std::min(most, num_prefix);
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (prefix[i] == json(false)) most = std::min<std::uint64_t>(most, i);
  }
  if (min_items > most) {
    fail(at, fmt::format("minItems {} cannot be met: the array holds at most {} items", min_items,
                         most));
  }
  const auto too_large = [&](std::uint64_t count) {
    return count != unbounded && count > max_repeat_bound;
  };
  if (too_large(min_items) || too_large(most)) {
    fail(at, fmt::format("minItems or maxItems over {} is unsupported", max_repeat_bound));
  }
  const std::uint64_t num_fixed = std::min(num_prefix, most);
  std::vector<std::string> fixed;
  for (std::size_t i = 0; i < num_fixed; ++i) {
    const std::string index = std::to_string(i);
    fixed.push_back(
        visit(prefix[i], child(at, "prefixItems", index, fmt::format("{}-{}", at.hint, index))));
  }
  std::string rest;  // after the item before the current position
  std::string item;  // the schema of the items past the prefix
  if (most > num_prefix) {
    const bool typed = items_it != schema.end() && items_it->is_object();
    location here = child(at, "items");
    here.hint = at.hint + "-item";
    item = typed ? visit(*items_it, here) : builtin("value");
    const std::uint64_t lo = min_items > num_prefix ? min_items - num_prefix : 0;
    const std::uint64_t hi = most == unbounded ? unbounded : most - num_prefix;
    if (num_fixed == 0) {
      rest = gbnf_repeat(gbnf_sequence({sep_, item}), lo == 0 ? 0 : lo - 1,
                         hi == unbounded ? unbounded : hi - 1);
      fixed.push_back(item);  // the first item is the only one without a comma before it
    } else {
      rest = gbnf_repeat(gbnf_sequence({sep_, item}), lo, hi);
    }
  }
  const std::size_t num_firsts = fixed.size();
  for (std::size_t i = num_firsts; i-- > 1;) {
    const std::string piece = gbnf_sequence({sep_, fixed[i], rest});
    rest = i < min_items ? piece : gbnf_repeat(piece, 0, 1);
    if ((num_firsts - i) % prefix_items_per_rule == 0) {
      rest = add_rule(fmt::format("{}-from-{}", at.hint, i), rest);
    }
  }
  std::string body;
  if (fixed.empty()) {
    body = gbnf_sequence({open_bracket, ws_, close_bracket});
  } else {
    std::string content = gbnf_sequence({fixed[0], rest, ws_});
    if (min_items == 0) content = gbnf_repeat(content, 0, 1);
    body = gbnf_sequence({open_bracket, ws_, content, close_bracket});
  }
  return finish(at, body, true);
}

}  // namespace courier::grammar::json_schema_detail
