#pragma once
// The model's vocabulary for grammar masks (grammar/token_vocabulary.hpp), from its tokenizer:
// each id's bytes as decoding emits them, special tokens excluded (a grammar never produces
// them), and the end-of-sequence ids allowed where the grammar is complete.
#include <memory>
#include <vector>

#include "grammar/token_vocabulary.hpp"
#include "text/tokenizer/tokenizer.hpp"

namespace courier::admission {

std::shared_ptr<const grammar::token_vocabulary> grammar_vocabulary(
    const text::tokenizer& tok, const std::vector<text::token_id>& eos_ids);

}  // namespace courier::admission
