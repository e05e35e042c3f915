// to_gbnf: an expr printed as GBNF that parse_gbnf reads back to the same tree, up to grouping
// (nested sequences and alternations flatten; adjacent literals may be split differently).
#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/expr.hpp"
#include "grammar/gbnf.hpp"
#include "grammar/grammar_error.hpp"
#include "grammar/utf8_ranges.hpp"

namespace courier::grammar {

namespace {

// The printer recurses over the tree. Trees come from parsers that bound their nesting to
// max_nesting groups, each a few expr levels deep; a deeper tree (built by hand) is refused
// rather than risk the stack.
constexpr int max_print_depth = 8 * max_nesting;

[[noreturn]] void fail(const std::string& what) {
  throw grammar_error("to_gbnf: " + what);
}

// Literals: printable ASCII as is, the escapes GBNF names, other ASCII controls as \xHH, and
// non-ASCII UTF-8 raw (a literal is bytes; \xHH would name a code point, not a byte).
void print_literal(std::string_view bytes, std::string& out) {
  out += '"';
  for (std::size_t i = 0; i < bytes.size();) {
    const auto b = static_cast<unsigned char>(bytes[i]);
    if (b >= 0x80) {
      char32_t cp = 0;
      const std::size_t n = decode_utf8(bytes.substr(i), cp);
      if (n == 0) fail(fmt::format("a literal holds invalid UTF-8 at byte {}", i));
      out += bytes.substr(i, n);
      i += n;
      continue;
    }
    switch (b) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      default:
        if (b < 0x20 || b == 0x7F) {
          out += fmt::format("\\x{:02X}", b);
        } else {
          out += static_cast<char>(b);
        }
    }
    ++i;
  }
  out += '"';
}

// Class members: printable ASCII as is (escaping what is special inside [...]), everything else
// escaped, so that a class reads the same whatever the reader's font does with combining marks.
// `-` and `^` are written \x2D and \x5E: llama.cpp's GBNF has no \- or \^ escape, and a bare
// one means something depending on where it stands.
void print_class_char(char32_t cp, std::string& out) {
  switch (cp) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    case '[':
    case ']':
    case '\\':
      out += '\\';
      out += static_cast<char>(cp);
      return;
    default:
      break;
  }
  if (cp < 0x20 || cp == 0x7F || cp == '-' || cp == '^') {
    out += fmt::format("\\x{:02X}", static_cast<unsigned>(cp));
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp <= 0xFFFF) {
    out += fmt::format("\\u{:04X}", static_cast<unsigned>(cp));
  } else {
    out += fmt::format("\\U{:08X}", static_cast<unsigned>(cp));
  }
}

void print_ranges(const std::vector<code_point_range>& ranges, std::string& out) {
  for (const code_point_range& r : ranges) {
    print_class_char(r.first, out);
    if (r.last != r.first) {
      out += '-';
      print_class_char(r.last, out);
    }
  }
}

// Whichever of [...] and [^...] is shorter; `.` for every code point.
void print_class(const std::vector<code_point_range>& ranges, std::string& out) {
  if (ranges.empty()) fail("a class that matches nothing has no GBNF form");
  const std::vector<code_point_range> complement = normalize_ranges(ranges, true);
  if (complement.empty()) {
    out += '.';
    return;
  }
  const bool negate = complement.size() < ranges.size();
  out += negate ? "[^" : "[";
  print_ranges(negate ? complement : ranges, out);
  out += ']';
}

void print_rule_ref(const std::string& name, std::string& out) {
  if (name.empty()) fail("a rule reference without a name");
  for (char c : name) {
    if (!is_gbnf_name_char(c)) fail(fmt::format("'{}' is not a GBNF rule name", name));
  }
  out += name;
}

std::string repeat_suffix(std::uint32_t min, std::uint32_t max) {
  if (max == expr::unbounded) {
    if (min == 0) return "*";
    if (min == 1) return "+";
    return fmt::format("{{{},}}", min);
  }
  if (min == 0 && max == 1) return "?";
  if (min == max) return fmt::format("{{{}}}", min);
  return fmt::format("{{{},{}}}", min, max);
}

// A sequence or alternation of one child is that child (as make_sequence makes it).
const expr& unwrap(const expr& e) {
  const expr* p = &e;
  while ((p->k == expr::kind::sequence || p->k == expr::kind::alternation) &&
         p->children.size() == 1) {
    p = &p->children[0];
  }
  return *p;
}

// How tightly the context binds what is printed in it: an alternation inside a sequence, and
// anything compound under a repeat, need parentheses.
enum class context { alternation, sequence, repeat };

void print(const expr& e, context ctx, int depth, std::string& out);

void print_parenthesized(const expr& e, int depth, std::string& out) {
  out += '(';
  print(e, context::alternation, depth, out);
  out += ')';
}

void print(const expr& node, context ctx, int depth, std::string& out) {
  if (depth > max_print_depth) fail(fmt::format("expression nested over {} deep", max_print_depth));
  const expr& e = unwrap(node);
  switch (e.k) {
    case expr::kind::empty:
      out += "\"\"";
      return;
    case expr::kind::literal:
      print_literal(e.text, out);
      return;
    case expr::kind::char_class:
      print_class(e.ranges, out);
      return;
    case expr::kind::rule_ref:
      print_rule_ref(e.text, out);
      return;
    case expr::kind::sequence:
      if (e.children.empty()) {
        out += "\"\"";
      } else if (ctx == context::repeat) {
        print_parenthesized(e, depth + 1, out);
      } else {
        for (std::size_t i = 0; i < e.children.size(); ++i) {
          if (i > 0) out += ' ';
          print(e.children[i], context::sequence, depth + 1, out);
        }
      }
      return;
    case expr::kind::alternation:
      if (e.children.empty()) fail("an alternation without alternatives has no GBNF form");
      if (ctx != context::alternation) {
        print_parenthesized(e, depth + 1, out);
      } else {
        for (std::size_t i = 0; i < e.children.size(); ++i) {
          if (i > 0) out += " | ";
          print(e.children[i], context::alternation, depth + 1, out);
        }
      }
      return;
    case expr::kind::repeat:
      if (e.children.size() != 1) fail("a repeat without exactly one child");
      if (e.max < e.min) fail(fmt::format("a repeat {{{},{}}} runs backwards", e.min, e.max));
      if (ctx == context::repeat) {
        print_parenthesized(e, depth + 1, out);
      } else {
        print(e.children[0], context::repeat, depth + 1, out);
        out += repeat_suffix(e.min, e.max);
      }
      return;
  }
}

}  // namespace

std::string to_gbnf(const expr& e) {
  std::string out;
  print(e, context::alternation, 0, out);
  return out;
}

}  // namespace courier::grammar
