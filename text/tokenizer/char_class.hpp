#pragma once
// The two character classes Hugging Face's added-token matching uses, with Rust's meanings:
// `char::is_whitespace` (lstrip/rstrip) and `is_alphanumeric() || c == '_'` (single_word).
namespace courier::text {

// Unicode White_Space, as Rust's char::is_whitespace.
bool is_whitespace(char32_t cp);

// Letters (L*), numbers (Nd, Nl, No) and '_'. Rust's is_alphanumeric also counts the few
// Other_Alphabetic marks; those only matter for single_word added tokens next to such a mark.
bool is_word_char(char32_t cp);

}  // namespace courier::text
