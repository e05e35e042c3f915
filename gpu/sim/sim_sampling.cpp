// The sim backend's sampling op. It is the reference the CUDA sampler is tested against, so what
// follows is the contract, not a description of this implementation.
//
// Per row of logits:
// - Logprobs come from the RAW logits: logprob = logit - logsumexp(row), the sum taken in double,
//   stored as float. `logprob` is the chosen token's; top_ids/top_logprobs are the num_logprobs
//   (clamped to [0, max_logprobs]) highest raw logprobs, best first, ties to the lower id.
// - The token, on a working copy of the logits, in this order:
//   -1. The mask, when mask_begin >= 0: every token whose bit in batch.mask_words[mask_begin..]
//      is clear gets -inf (so no bias, penalty or draw can bring it back).
//   0. Logit bias, over the row's entries batch.bias_tokens[bias_begin, +bias_count):
//      logit += bias (one float add), before everything else (vLLM's order: OpenAI's logit_bias
//      is applied to the raw logits before penalties).
//   0'. min_tokens: while draw_index < end_until, the row's end tokens
//      batch.end_tokens[end_begin, +end_count) get -inf (no EOS or stop token id is drawn).
//   1. Penalties, over the row's entries batch.penalty_tokens[penalty_begin, +penalty_count),
//      on the biased logits:
//      repetition r != 1 on tokens with in_prompt || output_count > 0:
//      logit > 0 ? logit / r : logit * r (HF, vLLM); then logit -= frequency * output_count;
//      then logit -= presence * (output_count > 0) (OpenAI).
//   2. temperature <= 0 (or NaN): greedy, the argmax of the biased, penalised logits, ties to
//      the lowest id; done.
//   3. Divide by the temperature.
//   4. top_k > 0: keep the k largest; ties at the boundary go to the lower ids, so exactly k stay.
//   5. top_p < 1: over the kept tokens by probability descending (ties: lower id first), keep the
//      smallest prefix whose cumulative probability >= top_p; always at least one.
//   6. min_p > 0: drop tokens whose probability < min_p * the largest one (probabilities
//      renormalised over the kept set; min_p > 1 acts as 1).
//   7. u in [0, 1) = top 53 bits of splitmix64(splitmix64(seed ^ draw_index * 0x9E3779B97F4A7C15))
//      / 2^53; the token is the inverse CDF of u over the kept tokens by probability descending
//      (ties: lower id first), with the renormalised probabilities in double.
// - "By probability descending" means by biased, penalised logit descending: a positive
//   temperature keeps that order, and comparing the float quotients would let rounding invent ties.
// - NaN logits count as -inf, and -inf logits are never drawn (a bias does not unmask them).
//   Logits must not be +inf. A masked row none of whose tokens may be drawn (all -inf after the
//   steps above) gets token no_allowed_token and logprob -inf (its top logprobs as usual).
// - A scoring row (score_token >= 0; no mask, bias or penalties) skips the token's steps: its
//   token is score_token, with that token's raw logprob (-inf for a -inf or NaN logit).
// - Precision: each exp(logit - max) (over the temperature) is evaluated in float, within 2 ulp;
//   sums and renormalisation are in double. A probability under ~1e-38 of the largest counts as 0.
//   Cumulative sums are accumulated in an order that is deterministic but not the sorted one (see
//   find_by_mass). So another implementation may pick the neighbouring token when u falls within
//   rounding (~1e-7 relative, the float exp's) of a boundary; the same one always picks the same.
#include "gpu/sim/sim_sampling.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>

namespace courier::gpu::sim {
namespace {

constexpr float neg_inf = -std::numeric_limits<float>::infinity();
constexpr std::uint64_t golden_gamma = 0x9E3779B97F4A7C15ULL;

std::uint64_t splitmix64(std::uint64_t x) {
  x += golden_gamma;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Four float lanes in GCC/Clang vector extensions, which compile to SSE or NEON. exp is most of a
// 150k-token row's time, libm's is a scalar call, and with -ftrapping-math (the default) GCC will
// not vectorise the selects a scalar exp needs; written this way it runs about five times faster.
using f32x4 = float __attribute__((vector_size(16)));
using i32x4 = std::int32_t __attribute__((vector_size(16)));

// exp(x) lane-wise for x <= 0: Cephes' expf (reduction by ln 2, a degree-7 polynomial), within
// 2 ulp and monotone (checked exhaustively on [-87, 0]). Lanes below -87, -inf and NaN give 0.
f32x4 exp_nonpositive(f32x4 x) {
  const i32x4 live = x > -87.0f;  // all ones or zero per lane
  // Dead lanes compute exp(0) and are zeroed at the end, so no lane overflows the 2^n scale.
  const f32x4 xc = reinterpret_cast<f32x4>(reinterpret_cast<i32x4>(x) & live);
  const f32x4 n = (xc * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // round(x / ln 2)
  f32x4 r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  f32x4 y = 1.9875691500e-4f * r + 1.3981999507e-3f;
  y = y * r + 8.3334519073e-3f;
  y = y * r + 4.1665795894e-2f;
  y = y * r + 1.6666665459e-1f;
  y = y * r + 5.0000001201e-1f;
  y = y * (r * r) + r + 1.0f;
  const i32x4 two_to_n = (__builtin_convertvector(n, i32x4) + 127) << 23;  // n in [-126, 0]
  const f32x4 e = y * reinterpret_cast<f32x4>(two_to_n);
  return reinterpret_cast<f32x4>(reinterpret_cast<i32x4>(e) & live);
}

// out[i] = exp((x[i] - shift) / divisor), 0 for NaN and -inf; requires x[i] <= shift.
void exp_shifted(const float* x, std::size_t n, float shift, float divisor, float* out) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    f32x4 v;
    std::memcpy(&v, x + i, sizeof v);
    const f32x4 e = exp_nonpositive((v - shift) / divisor);
    std::memcpy(out + i, &e, sizeof e);
  }
  if (i == n) return;
  f32x4 v = {neg_inf, neg_inf, neg_inf, neg_inf};
  for (std::size_t j = 0; i + j < n; ++j) v[j] = x[i + j];
  const f32x4 e = exp_nonpositive((v - shift) / divisor);
  for (std::size_t j = 0; i + j < n; ++j) out[i + j] = e[j];
}

// In double, in four interleaved partial sums: a fixed order, so deterministic, and independent
// chains, so it does not wait on each add.
double sum_in_double(const float* w, std::size_t n) {
  double acc[4] = {0.0, 0.0, 0.0, 0.0};
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (std::size_t j = 0; j < 4; ++j) acc[j] += w[i + j];
  }
  for (std::size_t j = 0; i + j < n; ++j) acc[j] += w[i + j];
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

// A token still in the running.
struct candidate {
  float key;  // penalised logit, before temperature
  std::uint32_t id;
  double weight;  // exp((key - best key) / temperature): the unnormalised probability
};

// The order every step uses (see the contract): key descending, ties to the lower id. A strict
// total order, so partitions and sorts by it are deterministic. A lambda rather than a function,
// so that the std algorithms taking it inline it.
constexpr auto goes_before = [](const candidate& a, const candidate& b) {
  return a.key > b.key || (a.key == b.key && a.id < b.id);
};

struct scored {
  float logit;
  std::uint32_t id;
};

// Buffers kept per thread: rows sampled concurrently by the sim device's pool share nothing, and a
// 150k-token row does not page-fault fresh megabytes on every call.
struct scratch {
  std::vector<float> work;  // biased, penalised logits
  std::vector<float> exps;  // raw exp(logit - max)
  std::vector<candidate> candidates;
  std::vector<double> mass;  // find_by_mass's histograms
  std::vector<scored> top;
};

std::uint32_t argmax(const float* x, std::int64_t vocab) {
  std::int64_t best = 0;
  float best_logit = neg_inf;
  for (std::int64_t i = 0; i < vocab; ++i) {
    if (x[i] > best_logit) {  // strict: ties stay with the lower id; NaN never wins
      best_logit = x[i];
      best = i;
    }
  }
  return static_cast<std::uint32_t>(best);
}

void apply_bias(float* logits, std::int64_t vocab, const sampling_row& row,
                const sampling_batch& batch) {
  assert(row.bias_begin >= 0 && row.bias_count >= 0);
  assert(static_cast<std::size_t>(row.bias_begin) + row.bias_count <= batch.bias_tokens.size());
  for (std::int32_t j = 0; j < row.bias_count; ++j) {
    const bias_token& b = batch.bias_tokens[row.bias_begin + j];
    assert(b.token < vocab);
    if (b.token < vocab) logits[b.token] += b.bias;
  }
}

bool bans_ends(const sampling_row& row) {
  return row.end_count > 0 && row.draw_index < row.end_until;
}

void ban_ends(float* logits, std::int64_t vocab, const sampling_row& row,
              const sampling_batch& batch) {
  if (!bans_ends(row)) return;
  assert(row.end_begin >= 0 &&
         static_cast<std::size_t>(row.end_begin) + row.end_count <= batch.end_tokens.size());
  for (std::int32_t j = 0; j < row.end_count; ++j) {
    const std::uint32_t t = batch.end_tokens[static_cast<std::size_t>(row.end_begin + j)];
    if (t < vocab) logits[t] = neg_inf;
  }
}

void apply_penalties(float* logits, std::int64_t vocab, const sampling_row& row,
                     const sampling_batch& batch) {
  assert(row.penalty_begin >= 0 && row.penalty_count >= 0);
  assert(static_cast<std::size_t>(row.penalty_begin) + row.penalty_count <=
         batch.penalty_tokens.size());
  for (std::int32_t j = 0; j < row.penalty_count; ++j) {
    const penalty_token& p = batch.penalty_tokens[row.penalty_begin + j];
    assert(p.token < vocab);
    if (p.token >= vocab) continue;
    float& logit = logits[p.token];
    if (row.repetition_penalty != 1.0f && (p.in_prompt || p.output_count > 0)) {
      logit = logit > 0.0f ? logit / row.repetition_penalty : logit * row.repetition_penalty;
    }
    logit -= row.frequency_penalty * static_cast<float>(p.output_count);
    if (p.output_count > 0) logit -= row.presence_penalty;
  }
}

// The tokens that steps 3-4 keep, with their keys; weights are not set. With top-k, tokens are
// appended only when they beat the k-th best so far, and the buffer is cut back to k whenever it
// reaches 2k: O(vocab) with one comparison for most tokens (a heap measured four times slower).
void gather_candidates(const float* x, std::int64_t vocab, std::int32_t top_k,
                       std::vector<candidate>& c) {
  const std::size_t k = top_k > 0 ? static_cast<std::size_t>(top_k) : 0;
  const auto cut_to_k = [&c, k] {
    std::nth_element(c.begin(), c.begin() + (k - 1), c.end(), goes_before);
    c.resize(k);
  };
  c.clear();
  c.reserve(static_cast<std::size_t>(vocab));
  float bar = neg_inf;  // -inf and NaN never pass: they can never be drawn
  for (std::int64_t i = 0; i < vocab; ++i) {
    if (!(x[i] > bar)) continue;  // a tie at the bar loses: this token has the higher id
    c.push_back({x[i], static_cast<std::uint32_t>(i), 0.0});
    if (c.size() == 2 * k) {
      cut_to_k();
      bar = c.back().key;
    }
  }
  if (k > 0 && c.size() > k) cut_to_k();
}

bool passes(double target, double cumulative, bool inclusive) {
  return inclusive ? target <= cumulative : target < cumulative;
}

// find_by_mass within one band: quickselect on mass, expected O(n). Returns n when rounding left
// the target beyond the total. Pivots come from a fixed-seed stream, so the result is
// deterministic whatever the input.
std::size_t quickselect_by_mass(candidate* c, std::size_t n, double target, bool inclusive) {
  std::uint64_t pivot_stream = 0;
  std::size_t lo = 0;
  std::size_t hi = n;
  while (hi - lo > 32) {
    const std::size_t p = lo + splitmix64(pivot_stream++) % (hi - lo);
    std::swap(c[p], c[hi - 1]);
    const candidate pivot = c[hi - 1];
    std::size_t mid = lo;
    double mass_before = 0.0;
    for (std::size_t i = lo; i < hi - 1; ++i) {
      if (goes_before(c[i], pivot)) {
        mass_before += c[i].weight;
        std::swap(c[i], c[mid++]);
      }
    }
    std::swap(c[mid], c[hi - 1]);
    const double mass_through = mass_before + pivot.weight;
    if (passes(target, mass_before, inclusive)) {
      hi = mid;
    } else if (passes(target, mass_through, inclusive)) {
      return mid;
    } else {
      target -= mass_through;
      lo = mid + 1;
    }
  }
  std::sort(c + lo, c + hi, goes_before);
  double cumulative = 0.0;
  for (std::size_t i = lo; i < hi; ++i) {
    cumulative += c[i].weight;
    if (passes(target, cumulative, inclusive)) return i;
  }
  return n;
}

// Weights in (0, 1] by sixteenths of an octave: 0 for 1, 1 for [1 - 1/32, 1), and on down; the
// top bits of a positive double's pattern are monotone in its value. The weights come from a
// float exp, so they are normal floats and the band stays below num_bands. Weights are monotone in
// the key, so each band is a run of the goes_before order.
constexpr std::size_t num_bands = 2048;
std::size_t band_of(double weight) {
  std::uint64_t bits;
  std::memcpy(&bits, &weight, sizeof bits);
  constexpr std::uint64_t one = 0x3FF0;  // 1.0's top 16 bits
  return std::min<std::size_t>(static_cast<std::size_t>(one - (bits >> 48)), num_bands - 1);
}

// Finds, among c[0, n) taken in goes_before order (all weights in (0, 1]), the first candidate
// whose cumulative weight (its own included) passes `target`: exceeds it, or reaches it when
// `inclusive`. Returns its index after reordering c so that everything before it in the order
// sits before it in c (as nth_element does), or n when the target is beyond the total. No full
// sort: the mass per band says which band holds the answer, and only that band, usually a small
// part of a 150k vocabulary, is searched. `mass` is scratch.
std::size_t find_by_mass(candidate* c, std::size_t n, double target, bool inclusive,
                         std::vector<double>& mass) {
  // Four interleaved histograms, so neighbours in the same band do not wait on each other.
  mass.assign(4 * num_bands, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    mass[(i % 4) * num_bands + band_of(c[i].weight)] += c[i].weight;
  }
  double before = 0.0;
  std::size_t b = 0;
  for (; b < num_bands; ++b) {
    const double in_band =
        (mass[b] + mass[num_bands + b]) + (mass[2 * num_bands + b] + mass[3 * num_bands + b]);
    if (passes(target, before + in_band, inclusive)) break;
    before += in_band;
  }
  if (b == num_bands) return n;
  candidate* const first =
      std::partition(c, c + n, [b](const candidate& e) { return band_of(e.weight) < b; });
  candidate* const last =
      std::partition(first, c + n, [b](const candidate& e) { return band_of(e.weight) == b; });
  const std::size_t size = static_cast<std::size_t>(last - first);
  assert(size > 0);  // an empty band adds nothing, so it cannot be where the target is passed
  const std::size_t i = quickselect_by_mass(first, size, target - before, inclusive);
  // Past the band only by rounding (the masses were summed in another order): its last token.
  return static_cast<std::size_t>(first - c) + (i < size ? i : size - 1);
}

// Steps 3-7 of the contract on biased, penalised logits x; temperature > 0.
std::uint32_t draw(const float* x, std::int64_t vocab, const sampling_row& row, scratch& s) {
  std::vector<candidate>& c = s.candidates;
  gather_candidates(x, vocab, row.top_k, c);
  float best_key = neg_inf;
  for (const candidate& e : c) best_key = std::max(best_key, e.key);
  if (c.empty() || std::isinf(best_key)) return argmax(x, vocab);

  // Weights relative to the best key, which every filter keeps: its weight is exactly 1. Tokens
  // whose weight is 0 can neither be drawn nor move a cumulative sum, so they go. Four at a time
  // for exp_nonpositive.
  double total = 0.0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < c.size(); i += 4) {
    f32x4 keys = {neg_inf, neg_inf, neg_inf, neg_inf};
    for (std::size_t j = 0; j < 4 && i + j < c.size(); ++j) keys[j] = c[i + j].key;
    const f32x4 w = exp_nonpositive((keys - best_key) / row.temperature);
    for (std::size_t j = 0; j < 4 && i + j < c.size(); ++j) {
      if (w[j] > 0.0f) {
        c[n] = c[i + j];
        c[n++].weight = w[j];
        total += w[j];
      }
    }
  }
  c.resize(n);

  // min-p before top-p gives the same set: both keep a prefix of the same order (weights are
  // monotone in the key), so the result is the shorter prefix, and top-p's target still uses the
  // total from before min-p. Pruning first makes the top-p search smaller. probability < min_p *
  // max is weight < min_p, as the best weight is 1.
  if (row.min_p > 0.0f) {
    const double floor = std::min(static_cast<double>(row.min_p), 1.0);
    c.erase(std::remove_if(c.begin(), c.end(),
                           [floor](const candidate& e) { return e.weight < floor; }),
            c.end());
  }
  if (row.top_p < 1.0f) {
    if (row.top_p > 0.0f) {
      const std::size_t cut =
          find_by_mass(c.data(), c.size(), static_cast<double>(row.top_p) * total, true, s.mass);
      if (cut < c.size()) c.resize(cut + 1);
    } else {
      std::iter_swap(c.begin(), std::min_element(c.begin(), c.end(), goes_before));
      c.resize(1);
    }
  }

  double kept = 0.0;
  for (const candidate& e : c) kept += e.weight;
  const double u = sampling_uniform(row.seed, row.draw_index);
  std::size_t pick = find_by_mass(c.data(), c.size(), u * kept, false, s.mass);
  if (pick == c.size()) {
    // u * kept rounded up to the total: the last token in the order (all weights are > 0).
    pick = static_cast<std::size_t>(std::max_element(c.begin(), c.end(), goes_before) - c.begin());
  }
  return c[pick].id;
}

// The num_top best raw logits into `top`, best first, ties to the lower id; NaN counts as -inf.
// Returns the row's max. One comparison per token once `top` is full.
float raw_max_and_top(const float* x, std::int64_t vocab, std::size_t num_top,
                      std::vector<scored>& top) {
  // Four lanes, so the maximum does not wait on one compare per token.
  f32x4 lanes = {neg_inf, neg_inf, neg_inf, neg_inf};
  std::int64_t i = 0;
  for (; i + 4 <= vocab; i += 4) {
    f32x4 v;
    std::memcpy(&v, x + i, sizeof v);
    lanes = v > lanes ? v : lanes;  // NaN never wins
  }
  float max_logit = std::max(std::max(lanes[0], lanes[1]), std::max(lanes[2], lanes[3]));
  for (; i < vocab; ++i) max_logit = x[i] > max_logit ? x[i] : max_logit;

  top.clear();
  if (num_top == 0) return max_logit;
  float bar = neg_inf;  // to enter `top`
  for (i = 0; i < vocab; ++i) {
    const float v = x[i];
    if (!(v > bar)) continue;  // a tie loses: v has the higher id
    // After every equal logit: those have lower ids.
    top.insert(std::upper_bound(top.begin(), top.end(), v,
                                [](float l, const scored& s) { return l > s.logit; }),
               {v, static_cast<std::uint32_t>(i)});
    if (top.size() > num_top) top.pop_back();
    if (top.size() == num_top) bar = top.back().logit;
  }
  // Fewer live tokens than asked for: the masked ones tie at -inf, lowest ids first.
  for (i = 0; i < vocab && top.size() < num_top; ++i) {
    if (!(x[i] > neg_inf)) top.push_back({neg_inf, static_cast<std::uint32_t>(i)});
  }
  return max_logit;
}

float raw_logprob(float logit, double log_sum_exp) {
  if (!(logit > neg_inf)) return neg_inf;  // also when the whole row is masked
  return static_cast<float>(static_cast<double>(logit) - log_sum_exp);
}

void apply_mask(float* logits, std::int64_t vocab, const sampling_row& row,
                const sampling_batch& batch) {
  assert(row.mask_begin >= 0 && static_cast<std::size_t>(row.mask_begin + mask_words_per_row(vocab)) <=
                                    batch.mask_words.size());
  const std::uint32_t* words = batch.mask_words.data() + row.mask_begin;
  for (std::int64_t t = 0; t < vocab; ++t) {
    if (!((words[t / 32] >> (t % 32)) & 1u)) logits[t] = neg_inf;
  }
}

sample_result sample_row(const float* logits, std::int64_t vocab, const sampling_row& row,
                         const sampling_batch& batch, scratch& s) {
  const float* x = logits;
  const bool masked = row.mask_begin >= 0;
  if (row.penalty_count > 0 || row.bias_count > 0 || masked || bans_ends(row)) {
    s.work.assign(logits, logits + vocab);
    if (masked) apply_mask(s.work.data(), vocab, row, batch);
    apply_bias(s.work.data(), vocab, row, batch);
    ban_ends(s.work.data(), vocab, row, batch);
    apply_penalties(s.work.data(), vocab, row, batch);
    x = s.work.data();
  }
  sample_result out;
  if (row.score_token >= 0) {
    out.token = static_cast<std::uint32_t>(row.score_token);
  } else {
    out.token = row.temperature > 0.0f ? draw(x, vocab, row, s) : argmax(x, vocab);
    if (masked && !(x[out.token] > neg_inf)) out.token = no_allowed_token;
  }

  const std::size_t num_top =
      static_cast<std::size_t>(std::clamp(row.num_logprobs, std::int32_t{0}, max_logprobs));
  const float max_logit = raw_max_and_top(logits, vocab, num_top, s.top);
  double log_sum_exp = max_logit;  // -inf when the whole row is masked
  if (max_logit > neg_inf) {
    s.exps.resize(static_cast<std::size_t>(vocab));
    exp_shifted(logits, s.exps.size(), max_logit, 1.0f, s.exps.data());
    log_sum_exp += std::log(sum_in_double(s.exps.data(), s.exps.size()));
  }
  out.logprob = out.token == no_allowed_token ? neg_inf
                                              : raw_logprob(logits[out.token], log_sum_exp);
  out.top_ids.reserve(s.top.size());
  out.top_logprobs.reserve(s.top.size());
  for (const scored& t : s.top) {
    out.top_ids.push_back(t.id);
    out.top_logprobs.push_back(raw_logprob(t.logit, log_sum_exp));
  }
  return out;
}

}  // namespace

double sampling_uniform(std::uint64_t seed, std::uint64_t draw_index) {
  const std::uint64_t h = splitmix64(splitmix64(seed ^ (draw_index * golden_gamma)));
  return static_cast<double>(h >> 11) * 0x1.0p-53;
}

std::vector<sample_result> sample_rows(const float* logits, std::int64_t num_rows,
                                       std::int64_t vocab, const sampling_batch& batch) {
  assert(batch.rows.size() == static_cast<std::size_t>(num_rows));
  assert(vocab > 0 && vocab <= std::int64_t{1} << 32);
  thread_local scratch s;
  std::vector<sample_result> out;
  out.reserve(static_cast<std::size_t>(num_rows));
  for (std::int64_t r = 0; r < num_rows; ++r) {
    out.push_back(sample_row(logits + r * vocab, vocab, batch.rows[r], batch, s));
  }
  return out;
}

}  // namespace courier::gpu::sim
