#pragma once
// What a model folder's sentence-transformers files say about pooling its hidden states into
// one embedding (/v1/embeddings, embeddings.hpp). `modules.json` lists the modules in order: a
// `sentence_transformers.models.Transformer`, then a `...models.Pooling` whose folder's
// `config.json` sets `pooling_mode_lasttoken` and no other mode, then optionally a
// `...models.Normalize` (each vector to unit length). Anything else (another pooling mode, a
// `Dense` that projects further, a module courier does not know) serves no embeddings, and says
// why naming the file and the field.
#include <string>

namespace courier::admission {

struct sentence_pooling {
  bool served = false;     // last-token pooling: /v1/embeddings answers
  bool normalize = false;  // a Normalize module follows the pooling
  std::string refusal;     // when not served: why (the file and the field)
};

// Reads DIR/modules.json and the pooling module's config.json. Never throws: a folder that
// cannot serve embeddings (an unreadable or malformed file too) says why in `refusal`.
sentence_pooling read_sentence_pooling(const std::string& model_dir);

}  // namespace courier::admission
