// The key of an extra member (additionalProperties): any JSON string but the declared property
// names, so that a declared property can neither come twice nor come back, out of order, as an
// extra member with a value its schema does not allow.
//
// The names are excluded as nlohmann writes them (characters as themselves, `"`, `\` and
// control characters escaped): a key that spells a declared name with an optional escape
// (`\u0061` for `a`, `\/` for `/`) is not recognized and stays allowed. When the names are
// too many for one DFA (about 1500 bytes of distinct prefixes), the key is any string.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "grammar/expr.hpp"
#include "grammar/json_schema_internal.hpp"
#include "grammar/utf8_ranges.hpp"

namespace courier::grammar::json_schema_detail {

namespace {

// An estimate of the key DFA's states past which the exclusion is given up (max_dfa_states
// bounds the real count before minimization), and its parts.
constexpr std::size_t max_key_states = 1500;
constexpr std::size_t states_per_escape_child = 16;
constexpr std::size_t states_per_beyond_child = 6;

// `name` as JSON string text (no quotes), cut into characters: one code point's UTF-8, or one
// escape.
std::vector<std::string> json_characters(const std::string& name) {
  const std::string text = json(name).dump();
  std::vector<std::string> out;
  for (std::size_t i = 1; i + 1 < text.size();) {
    std::size_t n = 1;
    if (text[i] == '\\') {
      n = text[i + 1] == 'u' ? 6 : 2;
    } else {
      char32_t cp = 0;
      n = std::max<std::size_t>(1, decode_utf8(std::string_view(text).substr(i), cp));
    }
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

// The declared names' trie over JSON characters.
struct trie_node {
  std::map<std::string, std::size_t> children;  // JSON character -> node
  bool is_name = false;
};

// How a key leaves the trie at one node: with a JSON character that is none of the node's
// children. In three kinds (ASCII, beyond ASCII, escapes) so that every node without children
// of a kind shares that kind's automaton: the DFA then has about one state per node, not one
// per node and byte of a character. Empty `beyond`/`escapes`: the shared automaton serves.
struct leaving {
  std::string ascii;  // a class of printable ASCII, or "" for none
  std::string beyond;
  std::string escapes;
};

// An escape `\uXXXX` among the children excludes every \u escape here (fewer keys, never a
// declared one).
leaving leaving_at(const std::map<std::string, std::size_t>& children) {
  std::vector<code_point_range> ascii_taken = {
      {0x00, 0x1F}, {U'"', U'"'}, {U'\\', U'\\'}, {0x80, 0x10FFFF}};
  std::vector<code_point_range> beyond_taken = {{0x00, 0x7F}};
  bool beyond_child = false;
  std::string letters = "\"\\/bfnrt";
  bool unicode = true;
  bool escape_child = false;
  for (const auto& [c, unused] : children) {
    if (c[0] == '\\') {
      escape_child = true;
      if (c[1] == 'u') unicode = false;
      const auto pos = letters.find(c[1]);
      if (pos != std::string::npos) letters.erase(pos, 1);
      continue;
    }
    char32_t cp = 0;
    if (decode_utf8(c, cp) == 0) continue;
    (cp < 0x80 ? ascii_taken : beyond_taken).push_back({cp, cp});
    beyond_child = beyond_child || cp >= 0x80;
  }
  leaving out;
  const std::vector<code_point_range> ascii = normalize_ranges(ascii_taken, true);
  if (!ascii.empty()) out.ascii = to_gbnf(expr::make_class(ascii));
  if (beyond_child) {
    out.beyond = to_gbnf(expr::make_class(normalize_ranges(beyond_taken, true)));
  }
  if (escape_child) {
    std::vector<std::string> alts;
    std::vector<code_point_range> letter_ranges;
    for (const char l : letters) letter_ranges.push_back({char32_t(l), char32_t(l)});
    if (!letter_ranges.empty()) alts.push_back(to_gbnf(expr::make_class(letter_ranges)));
    if (unicode) alts.push_back(json_unicode_escape_body());
    // With every escape a child's (impossible for one node: \u and all letters), none leaves.
    out.escapes =
        alts.empty() ? "!" : gbnf_sequence({gbnf_quote("\\"), gbnf_group(join_alternatives(alts))});
  }
  return out;
}

// Any of `prefixes` (GBNF literals, "" for the empty one) followed by `then`.
std::string after_any_of(const std::vector<std::string>& prefixes, const std::string& then) {
  std::vector<std::string> nonempty;
  for (const std::string& p : prefixes) {
    if (!p.empty()) nonempty.push_back(p);
  }
  std::string head = nonempty.empty() ? "" : gbnf_group(join_alternatives(nonempty));
  if (nonempty.size() < prefixes.size() && !head.empty()) head = gbnf_repeat(head, 0, 1);
  return gbnf_sequence({head, then});
}

}  // namespace

std::string converter::extra_key(const std::vector<std::string>& declared, const location& at) {
  if (declared.empty()) return builtin("string");
  // The DFA has about one state per byte of the trie's characters, and a few more per node
  // that leaves it with a character of its own (a child beyond ASCII, or an escape).
  std::size_t num_states = 0;
  std::vector<trie_node> trie(1);
  std::vector<std::string> prefix(1);  // each node's JSON text
  for (const std::string& name : declared) {
    std::size_t node = 0;
    for (const std::string& c : json_characters(name)) {
      auto it = trie[node].children.find(c);
      if (it == trie[node].children.end()) {
        num_states += c.size() + (c[0] == '\\' ? states_per_escape_child : 0) +
                      (static_cast<unsigned char>(c[0]) >= 0x80 ? states_per_beyond_child : 0);
        if (num_states > max_key_states) return builtin("string");
        it = trie[node].children.emplace(c, trie.size()).first;
        trie.emplace_back();
        prefix.push_back(prefix[node] + c);
      }
      node = it->second;
    }
    trie[node].is_name = true;
  }
  // One regular expression, so one DFA: the key leaves the trie somewhere (a node's text, then
  // a character that is none of its children) and then has any characters, or it ends at a
  // node that is not a name.
  std::vector<std::string> leave;
  std::vector<std::string> share_beyond;
  std::vector<std::string> share_escapes;
  std::vector<std::string> end_early;
  for (std::size_t i = 0; i < trie.size(); ++i) {
    const std::string here = prefix[i].empty() ? "" : gbnf_quote(prefix[i]);
    const leaving l = leaving_at(trie[i].children);
    if (!l.ascii.empty()) leave.push_back(gbnf_sequence({here, l.ascii}));
    if (l.beyond.empty()) {
      share_beyond.push_back(here);
    } else {
      leave.push_back(gbnf_sequence({here, l.beyond}));
    }
    if (l.escapes.empty()) {
      share_escapes.push_back(here);
    } else if (l.escapes != "!") {
      leave.push_back(gbnf_sequence({here, l.escapes}));
    }
    if (i != 0 && !trie[i].is_name) end_early.push_back(here);
  }
  if (!share_beyond.empty()) leave.push_back(after_any_of(share_beyond, R"([^\x00-\x7F])"));
  if (!share_escapes.empty()) {
    const std::string any_escape = gbnf_sequence(
        {gbnf_quote("\\"), gbnf_group(R"(["\\/bfnrt] | )" + json_unicode_escape_body())});
    leave.push_back(after_any_of(share_escapes, any_escape));
  }
  std::string key = gbnf_sequence({gbnf_group(join_alternatives(leave)),
                                   gbnf_repeat(gbnf_group(json_char_body()), 0, unbounded)});
  if (!end_early.empty()) key = gbnf_group(key + " | " + join_alternatives(end_early));
  if (!trie[0].is_name) key = gbnf_repeat(key, 0, 1);
  const std::string quote = gbnf_quote("\"");
  return add_rule(at.hint + "-key", gbnf_sequence({quote, key, quote}));
}

}  // namespace courier::grammar::json_schema_detail
