// The sim backend's fused ops against straightforward references written here in double:
// qkv_rope_kv_write (q/k head norm, HF rotate_half with the f32 angle, k and v into their slots,
// padding tokens skipped) and silu_mul on the [gate | up] layout; attention's plan contract.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "gpu/device.hpp"
#include "tests/support/count_penalties_check.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_sim_sim_device {

namespace {

namespace gpu = courier::gpu;

std::vector<float> random_floats(std::size_t n, float lo, float hi, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

template <class T>
gpu::device_buffer put(gpu::device& dev, const std::vector<T>& v) {
  gpu::device_buffer b = dev.allocate(std::max<std::size_t>(1, v.size()) * sizeof(T));
  dev.upload(b.data(), v.data(), v.size() * sizeof(T));
  return b;
}

std::vector<float> get(gpu::device& dev, const gpu::device_buffer& b, std::size_t n) {
  std::vector<float> v(n);
  dev.download(v.data(), b.data(), n * sizeof(float));
  return v;
}

// One head as the op's contract reads: RMS-normed with w when w is not empty, then rotated.
std::vector<double> reference_head(const float* x, const std::vector<float>& w, float eps,
                                   float pos, const std::vector<float>& inv_freq) {
  const std::size_t hd = inv_freq.size() * 2, half = inv_freq.size();
  std::vector<double> v(x, x + hd);
  if (!w.empty()) {
    double ss = 0;
    for (double e : v) ss += e * e;
    const double scale = 1.0 / std::sqrt(ss / static_cast<double>(hd) + eps);
    for (std::size_t i = 0; i < hd; ++i) v[i] = w[i] * (v[i] * scale);
  }
  std::vector<double> out(hd);
  for (std::size_t i = 0; i < half; ++i) {
    const double angle = static_cast<float>(pos * inv_freq[i]);  // the f32 angle of the contract
    const double c = std::cos(angle), s = std::sin(angle);
    out[i] = v[i] * c - v[half + i] * s;  // rotate_half: [-x2, x1]
    out[half + i] = v[half + i] * c + v[i] * s;
  }
  return out;
}

void require_near(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::fabs(got[i] - want[i]) <= 1e-5 * std::max(1.0, std::fabs(want[i])));
  }
}

struct qkv_shape {
  std::int32_t nq, nk, hd;
  bool norm;
};

}  // namespace

TEST_CASE("sim qkv_rope_kv_write: q to its buffer, k and v to their slots, normed and rotated",
          "[sim][model]") {
  auto dev = gpu::make_sim_device(2, 64);
  const std::int32_t num_blocks = 4, block_size = 4, num_slots = num_blocks * block_size;
  const std::int64_t T = 9;
  const float eps = 1e-6f;
  for (const qkv_shape s : {qkv_shape{4, 2, 8, true}, qkv_shape{4, 2, 8, false},
                            qkv_shape{6, 1, 16, true}, qkv_shape{2, 2, 6, false}}) {
    INFO("nq=" << s.nq << " nk=" << s.nk << " head_dim=" << s.hd << (s.norm ? " norm" : ""));
    const std::int64_t row = (s.nq + 2 * s.nk) * s.hd, kv = s.nk * s.hd;
    const auto qkv = random_floats(T * row, -3, 3, 1);
    const auto q_norm = s.norm ? random_floats(s.hd, 0.5f, 1.5f, 2) : std::vector<float>{};
    const auto k_norm = s.norm ? random_floats(s.hd, 0.5f, 1.5f, 3) : std::vector<float>{};
    std::vector<float> inv_freq;
    for (std::int32_t i = 0; i < s.hd / 2; ++i) {
      inv_freq.push_back(static_cast<float>(std::pow(1e4, -2.0 * i / s.hd)));
    }
    std::vector<std::int32_t> positions(T), slots(num_slots);
    std::mt19937 rng(4);
    for (auto& p : positions) p = std::uniform_int_distribution<std::int32_t>(0, 40000)(rng);
    std::iota(slots.begin(), slots.end(), 0);
    std::shuffle(slots.begin(), slots.end(), rng);
    slots.resize(T);
    slots[2] = -1;         // padding tokens: no K or V
    slots[5] = num_slots;  // past the cache: the same
    const auto k_before = random_floats(num_slots * kv, -1, 1, 5);
    const auto v_before = random_floats(num_slots * kv, -1, 1, 6);

    auto b_qkv = put(*dev, qkv), b_qn = put(*dev, q_norm), b_kn = put(*dev, k_norm);
    auto b_freq = put(*dev, inv_freq), b_pos = put(*dev, positions), b_slots = put(*dev, slots);
    auto b_k = put(*dev, k_before), b_v = put(*dev, v_before);
    auto b_q = put(*dev, std::vector<float>(T * s.nq * s.hd));
    const gpu::kv_cache_view cache{b_k.data(), b_v.data(), gpu::dtype::f32, num_blocks, block_size,
                                   s.nk,       s.hd};
    const gpu::tensor_view none{};
    dev->qkv_rope_kv_write(b_qkv.view(gpu::dtype::f32, T, row), s.nq, s.nk, s.hd,
                           s.norm ? b_qn.view(gpu::dtype::f32, 1, s.hd) : none,
                           s.norm ? b_kn.view(gpu::dtype::f32, 1, s.hd) : none, eps,
                           static_cast<const std::int32_t*>(b_pos.data()),
                           static_cast<const float*>(b_freq.data()),
                           static_cast<const std::int32_t*>(b_slots.data()), cache,
                           b_q.view(gpu::dtype::f32, T, s.nq * s.hd));
    const auto q = get(*dev, b_q, T * s.nq * s.hd);
    const auto k = get(*dev, b_k, k_before.size()), v = get(*dev, b_v, v_before.size());

    std::vector<double> want_q;
    std::vector<double> want_k(k_before.begin(), k_before.end());
    std::vector<double> want_v(v_before.begin(), v_before.end());
    for (std::int64_t t = 0; t < T; ++t) {
      const float* r = qkv.data() + t * row;
      const auto pos = static_cast<float>(positions[t]);
      for (std::int32_t h = 0; h < s.nq; ++h) {
        const auto head = reference_head(r + h * s.hd, q_norm, eps, pos, inv_freq);
        want_q.insert(want_q.end(), head.begin(), head.end());
      }
      if (slots[t] < 0 || slots[t] >= num_slots) continue;
      for (std::int32_t h = 0; h < s.nk; ++h) {
        const auto head = reference_head(r + (s.nq + h) * s.hd, k_norm, eps, pos, inv_freq);
        std::copy(head.begin(), head.end(), want_k.begin() + slots[t] * kv + h * s.hd);
      }
      std::copy(r + (s.nq + s.nk) * s.hd, r + row, want_v.begin() + slots[t] * kv);
    }
    require_near(q, want_q);
    require_near(k, want_k);
    CHECK(std::equal(v.begin(), v.end(), want_v.begin()));  // copied, bit for bit

    // A token's results do not depend on the batch: the last token alone gives the same bits.
    auto b_q1 = put(*dev, std::vector<float>(s.nq * s.hd));
    dev->qkv_rope_kv_write(b_qkv.view(gpu::dtype::f32, T, row).row_slice(T - 1, 1), s.nq, s.nk,
                           s.hd, s.norm ? b_qn.view(gpu::dtype::f32, 1, s.hd) : none,
                           s.norm ? b_kn.view(gpu::dtype::f32, 1, s.hd) : none, eps,
                           static_cast<const std::int32_t*>(b_pos.data()) + T - 1,
                           static_cast<const float*>(b_freq.data()),
                           static_cast<const std::int32_t*>(b_slots.data()) + T - 1, cache,
                           b_q1.view(gpu::dtype::f32, 1, s.nq * s.hd));
    const auto q1 = get(*dev, b_q1, s.nq * s.hd);
    CHECK(std::equal(q1.begin(), q1.end(), q.end() - s.nq * s.hd));
  }
}

TEST_CASE("sim qkv_rope_kv_write: shapes that do not fit the heads are refused", "[sim][model]") {
  auto dev = gpu::make_sim_device(1, 64);
  auto b = dev->allocate(4096);
  const gpu::kv_cache_view cache{b.data(), b.data(), gpu::dtype::f32, 1, 4, 2, 8};
  const std::int32_t ints[1] = {0};
  const float freq[4] = {1, 1, 1, 1};
  auto run = [&](std::int64_t qkv_cols, std::int32_t hd, const gpu::kv_cache_view& kv) {
    dev->qkv_rope_kv_write(b.view(gpu::dtype::f32, 1, qkv_cols), 4, 2, hd, {}, {}, 1e-6f, ints,
                           freq, ints, kv, b.view(gpu::dtype::f32, 1, 4 * hd));
  };
  CHECK_NOTHROW(run(64, 8, cache));
  CHECK_THROWS_AS(run(63, 8, cache), std::invalid_argument);  // not (4 + 2 * 2) heads of 8
  gpu::kv_cache_view other = cache;
  other.num_kv_heads = 1;
  CHECK_THROWS_AS(run(64, 8, other), std::invalid_argument);
  CHECK_THROWS_AS(run(56, 7, cache), std::invalid_argument);  // odd head_dim
}

TEST_CASE("sim silu_mul: gate from the first half of each row, up from the second",
          "[sim][model]") {
  auto dev = gpu::make_sim_device(2, 64);
  for (const std::int64_t I : {1, 7, 64}) {
    const std::int64_t T = 5;
    const auto gate_up = random_floats(T * 2 * I, -8, 8, 7);
    auto b_in = put(*dev, gate_up), b_out = put(*dev, std::vector<float>(T * I));
    dev->silu_mul(b_in.view(gpu::dtype::f32, T, 2 * I), b_out.view(gpu::dtype::f32, T, I));
    const auto out = get(*dev, b_out, T * I);
    std::vector<double> want;
    for (std::int64_t t = 0; t < T; ++t) {
      for (std::int64_t i = 0; i < I; ++i) {
        const double g = gate_up[t * 2 * I + i], u = gate_up[t * 2 * I + I + i];
        want.push_back(g / (1.0 + std::exp(-g)) * u);
      }
    }
    require_near(out, want);
  }
  auto b = dev->allocate(1024);
  CHECK_THROWS_AS(dev->silu_mul(b.view(gpu::dtype::f32, 2, 10), b.view(gpu::dtype::f32, 2, 4)),
                  std::invalid_argument);
}

TEST_CASE("sim attention: runs only on the batch and heads plan_attention planned", "[sim][model]") {
  auto dev = gpu::make_sim_device(1, 64);
  constexpr std::int32_t nq = 4, nk = 2, hd = 8, block = 16;
  const std::vector<std::int32_t> token_seq{0, 0, 1}, other_seq{0, 0, 1}, positions{0, 1, 0},
      slots{0, 1, 16}, kv_len{2, 1}, tables{0, 1};
  auto q = put(*dev, random_floats(3 * nq * hd, -1, 1, 1));
  auto k = put(*dev, random_floats(2 * block * nk * hd, -1, 1, 2));
  auto v = put(*dev, random_floats(2 * block * nk * hd, -1, 1, 3));
  auto out = dev->allocate(3 * nq * hd * sizeof(float));
  gpu::kv_cache_view cache;
  cache.k = k.data();
  cache.v = v.data();
  cache.type = gpu::dtype::f32;
  cache.num_blocks = 2;
  cache.block_size = block;
  cache.num_kv_heads = nk;
  cache.head_dim = hd;
  // The sim's device memory is host memory: the index arrays are read in place.
  gpu::attention_batch batch;
  batch.token_seq = token_seq.data();
  batch.positions = positions.data();
  batch.slot_mapping = slots.data();
  batch.seq_kv_len = kv_len.data();
  batch.block_tables = tables.data();
  batch.num_tokens = 3;
  batch.num_seqs = 2;
  batch.max_blocks_per_seq = 1;
  batch.block_size = block;
  batch.max_kv_len = 2;
  const auto qv = q.view(gpu::dtype::f32, 3, nq * hd), ov = out.view(gpu::dtype::f32, 3, nq * hd);
  const float scale = 0.35f;

  CHECK_THROWS_AS(dev->attention(qv, cache, batch, scale, ov), std::logic_error);  // unplanned
  dev->plan_attention(batch, nq, nk, hd);
  dev->attention(qv, cache, batch, scale, ov);  // every layer's call on the one plan
  const std::vector<float> first = get(*dev, out, 3 * nq * hd);
  dev->attention(qv, cache, batch, scale, ov);
  CHECK(get(*dev, out, 3 * nq * hd) == first);

  gpu::attention_batch moved = batch;
  moved.token_seq = other_seq.data();  // equal contents, another array: not what was planned
  CHECK_THROWS_AS(dev->attention(qv, cache, moved, scale, ov), std::logic_error);
  gpu::attention_batch longer = batch;
  longer.max_kv_len = 3;
  CHECK_THROWS_AS(dev->attention(qv, cache, longer, scale, ov), std::logic_error);
  gpu::kv_cache_view one_kv_head = cache;
  one_kv_head.num_kv_heads = 1;
  CHECK_THROWS_AS(dev->attention(qv, one_kv_head, batch, scale, ov), std::logic_error);
  CHECK_THROWS_AS(dev->plan_attention(batch, 3, nk, hd), std::invalid_argument);  // 3 over 2
}

TEST_CASE("sim sample: a scoring row outside the vocabulary or with a mask, bias or penalties is "
          "refused", "[sim][sampling]") {
  auto dev = gpu::make_sim_device(1, 64);
  auto logits = put(*dev, random_floats(8, -1, 1, 4));
  const auto view = logits.view(gpu::dtype::f32, 1, 8);
  gpu::sampling_batch batch;
  batch.rows.resize(1);
  batch.rows[0].score_token = 7;
  CHECK(dev->sample(view, batch).at(0).token == 7);
  batch.rows[0].score_token = 8;  // the vocabulary is 8
  CHECK_THROWS_AS(dev->sample(view, batch), std::invalid_argument);
  batch.rows[0].score_token = 2;
  batch.bias_tokens.push_back({1, 5.0f});
  batch.rows[0].bias_count = 1;
  CHECK_THROWS_AS(dev->sample(view, batch), std::invalid_argument);
  batch.rows[0].bias_count = 0;
  batch.penalty_tokens.push_back({1, 1, false});
  batch.rows[0].penalty_count = 1;
  CHECK_THROWS_AS(dev->sample(view, batch), std::invalid_argument);
  batch.rows[0].penalty_count = 0;
  batch.mask_words.push_back(0xffu);
  batch.rows[0].mask_begin = 0;
  CHECK_THROWS_AS(dev->sample(view, batch), std::invalid_argument);
}

TEST_CASE("sim count_penalty_tokens: counts a listed token, appends a new one, leaves a full "
          "list as it is", "[sim][sampling]") {
  auto dev = gpu::make_sim_device(1, 64);
  courier::test::check_count_penalty_tokens(*dev);
}

TEST_CASE("sim sample: a row's penalty list in device memory samples as the same entries given "
          "as a slice, and a bad list is refused", "[sim][sampling]") {
  auto dev = gpu::make_sim_device(1, 64);
  constexpr std::int64_t vocab = 16;
  // Token i's logit is i / 10, but token 11's is 3 and token 3's 2.5: unpenalised greedy picks
  // 11; penalised (11: 3 / 1.7 - 4 * 0.6 - 0.9), 15 (1.5), unless token 15 were penalised too.
  std::vector<float> x(2 * vocab);
  for (std::int64_t i = 0; i < 2 * vocab; ++i) x[i] = static_cast<float>(i % vocab) / 10.0f;
  for (std::int64_t r = 0; r < 2; ++r) {
    x[r * vocab + 11] = 3.0f;
    x[r * vocab + 3] = 2.5f;
  }
  auto logits = put(*dev, x);
  const auto view = logits.view(gpu::dtype::f32, 2, vocab);
  const std::vector<gpu::penalty_token> entries = {{3, 2, 1}, {7, 0, 1}, {11, 4, 0}};
  gpu::sampling_row row;
  row.repetition_penalty = 1.7f;
  row.frequency_penalty = 0.6f;
  row.presence_penalty = 0.9f;
  row.num_logprobs = 3;
  gpu::sampling_batch sliced;
  sliced.rows = {row, row};
  sliced.rows[1].temperature = 0.9f;
  sliced.rows[1].seed = 5;
  for (auto& r : sliced.rows) r.penalty_count = 3;
  sliced.penalty_tokens = entries;
  // Two lists of stride 5: the rows' entries are list 1's first three; what follows them (and
  // list 0) would change the result if read.
  std::vector<gpu::penalty_token> lists(10, gpu::penalty_token{0, 30, 1});
  std::copy(entries.begin(), entries.end(), lists.begin() + 5);
  lists[8] = {static_cast<std::uint32_t>(view.cols - 1), 50, 1};
  gpu::device_buffer l = put(*dev, lists), n = put(*dev, std::vector<std::int32_t>{5, 3});
  gpu::sampling_batch listed;
  listed.rows = {row, row};
  listed.rows[1].temperature = 0.9f;
  listed.rows[1].seed = 5;
  for (auto& r : listed.rows) r.penalty_list = 1;
  listed.penalty_lists = static_cast<const gpu::penalty_token*>(l.data());
  listed.penalty_list_lens = static_cast<const std::int32_t*>(n.data());
  listed.penalty_list_stride = 5;
  listed.num_penalty_lists = 2;
  const auto want = dev->sample(view, sliced);
  const auto got = dev->sample(view, listed);
  gpu::sampling_batch plain;
  plain.rows = {row, row};
  const auto unpenalised = dev->sample(view, plain);
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(got[r].token == want[r].token);
    CHECK(got[r].logprob == want[r].logprob);
    CHECK(got[r].top_ids == want[r].top_ids);
  }
  // The penalties matter here, and only the list's first three entries were read.
  CHECK(unpenalised[0].token == 11);
  CHECK(want[0].token == 15);
  gpu::sampling_batch bad = listed;
  bad.rows[0].penalty_list = 2;  // there are 2 lists
  CHECK_THROWS_AS(dev->sample(view, bad), std::invalid_argument);
  bad = listed;
  bad.rows[0].penalty_count = 1;  // a list and a slice
  bad.penalty_tokens = entries;
  CHECK_THROWS_AS(dev->sample(view, bad), std::invalid_argument);
  bad = listed;
  bad.penalty_lists = nullptr;
  CHECK_THROWS_AS(dev->sample(view, bad), std::invalid_argument);
}

TEST_CASE("sim sample: a row's bias list in device memory biases as the same entries given as "
          "a slice", "[sim][sampling]") {
  auto dev = gpu::make_sim_device(1, 64);
  constexpr std::int64_t vocab = 16;
  std::vector<float> x(vocab);
  for (std::int64_t i = 0; i < vocab; ++i) x[i] = static_cast<float>(i) / 10.0f;
  auto logits = put(*dev, x);
  const auto view = logits.view(gpu::dtype::f32, 1, vocab);
  const std::vector<gpu::bias_token> entries = {{15, -100.0f}, {2, 1.3f}};
  gpu::sampling_batch sliced;
  sliced.rows.resize(1);
  sliced.rows[0].bias_count = 2;
  sliced.bias_tokens = entries;
  // Two lists: the row's is list 1; the entry after its two would force token 9 if read.
  std::vector<gpu::bias_token> lists(2 * gpu::max_bias_tokens, gpu::bias_token{9, 100.0f});
  std::copy(entries.begin(), entries.end(), lists.begin() + gpu::max_bias_tokens);
  gpu::device_buffer l = put(*dev, lists);
  gpu::sampling_batch listed;
  listed.rows.resize(1);
  listed.rows[0].bias_count = 2;
  listed.rows[0].bias_list = 1;
  listed.bias_lists = static_cast<const gpu::bias_token*>(l.data());
  listed.num_bias_lists = 2;
  CHECK(dev->sample(view, sliced)[0].token == 2);  // 0.2 + 1.3 beats 1.4 (15 banned)
  CHECK(dev->sample(view, listed)[0].token == 2);
  gpu::sampling_batch bad = listed;
  bad.rows[0].bias_list = 2;
  CHECK_THROWS_AS(dev->sample(view, bad), std::invalid_argument);
  bad = listed;
  bad.bias_lists = nullptr;
  CHECK_THROWS_AS(dev->sample(view, bad), std::invalid_argument);
}

}  // namespace courier_test_gpu_sim_sim_device
