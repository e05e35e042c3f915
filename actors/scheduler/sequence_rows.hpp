#pragma once
// What a plan tells the engine of one sequence (messages/step.hpp): a row of it, and the start
// that comes with its first row (and its first after each preemption). Each also marks in the
// sequence what the engine holds from then on: its block table synced, its sampling parameters
// and snapshot restore sent, it started. Which sequences get rows, and how many tokens, is the
// scheduler core's choice; this is only how they are written.
#include <cstdint>
#include <vector>

#include "actors/scheduler/sequence.hpp"
#include "messages/step.hpp"

namespace courier::actors {

// A row of n tokens from s.next_pos(); a following row (follows) feeds the one token a step in
// flight samples (a placeholder here) and samples the token after it. Its block table is a
// difference to the engine's copy: the entries synced before stand, the rest are new. A
// sampling row's draw index is the output index of the token it samples; a prompt-logprobs
// request's rows name, per position, the prompt token whose logprob is wanted there.
msg::plan_row make_row(sequence& s, std::int32_t n, bool follows = false);

// What the engine keeps for s until it ends or is preempted: its slots, how its first row's
// state begins, its sampling parameters (first start only) and, penalised, its penalty list.
msg::sequence_start make_start(sequence& s);

// Each distinct token of the sequence once, ascending: whether it is in the prompt, and how
// many times in the output. Built when a start carries it (once per admission), never per step.
std::vector<msg::penalty_entry> penalty_list(const sequence& s);

}  // namespace courier::actors
