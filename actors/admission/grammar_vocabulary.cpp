#include "actors/admission/grammar_vocabulary.hpp"

#include <string>

namespace courier::admission {

std::shared_ptr<const grammar::token_vocabulary> grammar_vocabulary(
    const text::tokenizer& tok, const std::vector<text::token_id>& eos_ids) {
  std::vector<std::string> bytes(tok.id_bound());
  std::vector<std::uint32_t> excluded;
  for (text::token_id id = 0; id < tok.id_bound(); ++id) {
    bytes[id] = std::string(tok.token_bytes(id));
    if (tok.is_special(id)) excluded.push_back(id);
  }
  return std::make_shared<grammar::token_vocabulary>(
      std::move(bytes), std::vector<std::uint32_t>(eos_ids.begin(), eos_ids.end()), excluded);
}

}  // namespace courier::admission
