#include "text/jinja/string_format.hpp"

#include <fmt/format.h>

#include <cmath>

#include "text/jinja/template_error.hpp"
#include "text/jinja/utf8.hpp"

namespace courier::text::jinja {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Reads a small decimal number at `i` (a width or precision), advancing `i`.
int read_count(std::string_view s, std::size_t& i) {
  int n = 0;
  while (i < s.size() && is_digit(s[i])) {
    n = n * 10 + (s[i++] - '0');
    if (n > 10'000) throw template_error("format width or precision too large");
  }
  return n;
}

double number_arg(const value& v, char conv) {
  if (v.is_float()) return v.as_float();
  if (v.is_int()) return static_cast<double>(v.as_int());
  if (v.is_bool()) return v.as_bool() ? 1 : 0;
  throw template_error(std::string("%") + conv + " format: a number is required, not " +
                       type_name(v));
}

std::string convert(const value& v, char conv, int precision, bool plus, bool space,
                    render_state& state) {
  std::string body;
  switch (conv) {
    case 's':
      return state.text(v);
    case 'r':
      return v.is_string() ? "'" + v.as_string() + "'" : state.text(v);
    case 'c':
      if (v.is_string() && utf8::length(v.as_string()) == 1) return v.as_string();
      if (v.is_int() && v.as_int() >= 0 && v.as_int() <= 0x10FFFF) {
        utf8::append(body, static_cast<char32_t>(v.as_int()));
        return body;
      }
      throw template_error("%c requires an integer code point or a single character");
    case 'd':
    case 'i':
    case 'u':
    case 'x':
    case 'X':
    case 'o': {
      const double d = number_arg(v, conv);
      const std::int64_t n = v.is_int() ? v.as_int() : static_cast<std::int64_t>(std::trunc(d));
      const char* spec = conv == 'x' ? "{:x}" : conv == 'X' ? "{:X}" : conv == 'o' ? "{:o}" : "{}";
      body = fmt::format(fmt::runtime(spec), n);
      break;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G': {
      const double d = number_arg(v, conv);
      body = fmt::format(
          fmt::runtime(fmt::format("{{:.{}{}}}", precision < 0 ? 6 : precision, conv)), d);
      break;
    }
    default:
      throw template_error(std::string("unsupported format character '") + conv + "'");
  }
  if (body[0] != '-' && (plus || space)) body.insert(body.begin(), plus ? '+' : ' ');
  return body;
}

}  // namespace

std::string percent_format(std::string_view format, const std::vector<value>& args,
                           render_state& state) {
  std::string out;
  std::size_t next_arg = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    if (format[i] != '%') {
      out += format[i];
      continue;
    }
    if (++i >= format.size()) throw template_error("incomplete format: a '%' at the end");
    if (format[i] == '%') {
      out += '%';
      continue;
    }
    bool left = false, zero = false, plus = false, space = false;
    for (; i < format.size(); ++i) {
      const char f = format[i];
      if (f == '-')
        left = true;
      else if (f == '0')
        zero = true;
      else if (f == '+')
        plus = true;
      else if (f == ' ')
        space = true;
      else if (f != '#')
        break;
    }
    const int width = read_count(format, i);
    int precision = -1;
    if (i < format.size() && format[i] == '.') precision = read_count(format, ++i);
    while (i < format.size() && (format[i] == 'l' || format[i] == 'h' || format[i] == 'L')) ++i;
    if (i >= format.size()) throw template_error("incomplete format");
    if (next_arg >= args.size()) throw template_error("not enough arguments for format string");
    const char conv = format[i];
    std::string body = convert(args[next_arg++], conv, precision, plus, space, state);
    if ((conv == 's' || conv == 'r') && precision >= 0) {
      body.resize(utf8::offset_of(body, static_cast<std::size_t>(precision)));
    }
    const std::size_t len = utf8::length(body);
    if (static_cast<std::size_t>(width) > len) {
      const std::size_t pad = static_cast<std::size_t>(width) - len;
      const bool numeric = conv != 's' && conv != 'r' && conv != 'c';
      if (left) {
        body.append(pad, ' ');
      } else if (zero && numeric) {
        const std::size_t sign = (body[0] == '-' || body[0] == '+' || body[0] == ' ') ? 1 : 0;
        body.insert(sign, pad, '0');
      } else {
        body.insert(0, pad, ' ');
      }
    }
    out += body;
  }
  if (next_arg < args.size()) {
    throw template_error("not all arguments converted during string formatting");
  }
  return out;
}

std::string brace_format(std::string_view format, const call_args& args, render_state& state) {
  std::string out;
  std::size_t auto_index = 0;
  for (std::size_t i = 0; i < format.size(); ++i) {
    const char c = format[i];
    if (c == '}') {
      if (i + 1 < format.size() && format[i + 1] == '}')
        ++i;
      else
        throw template_error("single '}' encountered in format string");
      out += '}';
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    if (i + 1 < format.size() && format[i + 1] == '{') {
      out += '{';
      ++i;
      continue;
    }
    const std::size_t close = format.find('}', i);
    if (close == std::string_view::npos) throw template_error("unclosed '{' in format string");
    std::string_view field = format.substr(i + 1, close - i - 1);
    i = close;
    std::string_view spec;
    if (const std::size_t colon = field.find(':'); colon != std::string_view::npos) {
      spec = field.substr(colon + 1);
      field = field.substr(0, colon);
    }
    if (const std::size_t bang = field.find('!'); bang != std::string_view::npos) {
      field = field.substr(0, bang);  // !s and !r convert to text, which every field does
    }
    const value* arg = nullptr;
    if (field.empty()) {
      arg = auto_index < args.positional.size() ? &args.positional[auto_index] : nullptr;
      ++auto_index;
    } else if (is_digit(field[0])) {
      std::size_t p = 0;
      const auto n = static_cast<std::size_t>(read_count(field, p));
      if (p != field.size())
        throw template_error("unsupported format field '" + std::string(field) + "'");
      arg = n < args.positional.size() ? &args.positional[n] : nullptr;
    } else {
      arg = args.find(SIZE_MAX, field);
    }
    if (arg == nullptr)
      throw template_error("format: no argument for field '{" + std::string(field) + "}'");
    for (std::size_t p = 0; p < spec.size(); ++p) {
      if (is_digit(spec[p])) read_count(spec, p);  // refuses widths that would flood memory
    }
    const std::string pattern = "{:" + std::string(spec) + "}";
    try {
      if (arg->is_int())
        out += fmt::format(fmt::runtime(pattern), arg->as_int());
      else if (arg->is_float())
        out += fmt::format(fmt::runtime(pattern), arg->as_float());
      else
        out += fmt::format(fmt::runtime(pattern), state.text(*arg));
    } catch (const fmt::format_error&) {
      throw template_error("unsupported format spec '" + std::string(spec) + "'");
    }
  }
  return out;
}

}  // namespace courier::text::jinja
