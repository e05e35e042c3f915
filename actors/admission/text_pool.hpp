#pragma once
// Admission's CPU-heavy work runs on lanes (base/job_lane) of its own: parsing request bodies,
// rendering chat templates, tokenizing (POST /v1/completions, /v1/chat/completions, /tokenize,
// /detokenize), compiling grammars. Never CAF's pooled workers: those relay every running
// request's tokens to its stream, and a flood of large bodies must not hold them
// (bench/victim-stream.sh). The composition root lowers these threads' CPU priority (their
// on_thread_start), so on a loaded machine the generation loop gets the CPU first. Each job
// ends its request: a response, or an actor that will send one.
#include "base/job_lane.hpp"

namespace courier::admission {

using text_pool = base::job_lane;

// server.admission_threads as configured (0: automatic) to a thread count: a quarter of the
// machine's hardware threads, at least 1.
int text_pool_threads(int configured);

}  // namespace courier::admission
