// The sim's Mamba-2 arithmetic (gpu/sim/sim_mamba) against references written here in double:
// the causal conv1d as torch's padded nn.Conv1d computes it, and the selective scan in its
// chunked SSD form (intra-chunk "attention" plus states passed between chunks, as transformers'
// torch path and the Mamba-2 paper factor it), a different algorithm from the sim's token by
// token recurrence. And the property the engine relies on: a sequence split into steps of any
// size, or batched with another, gives the same outputs and state bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "gpu/sim/sim_mamba.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_sim_mamba {

namespace sim = courier::gpu::sim;

namespace {

std::vector<float> normal(std::size_t n, float mean, float sd, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(mean, sd);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

double silu(double x) { return x / (1.0 + std::exp(-x)); }

double softplus(double x) { return x > 20.0 ? x : std::log1p(std::exp(x)); }

// Runs the conv over `splits` (the token counts of consecutive steps of one sequence, state row 0).
std::vector<float> conv_in_steps(const std::vector<float>& in, std::int64_t C, std::int32_t K,
                                 const std::vector<float>& w, const std::vector<float>& b,
                                 const std::vector<std::int64_t>& splits,
                                 std::vector<float>& state) {
  const std::int64_t T = static_cast<std::int64_t>(in.size()) / C;
  std::vector<float> out(static_cast<std::size_t>(T * C));
  state.assign(static_cast<std::size_t>(C * (K - 1)), 123.0f);  // garbage: fresh ignores it
  std::int64_t first = 0;
  for (const std::int64_t n : splits) {
    const std::vector<sim::mamba_span> spans = {{first, n, 0, first == 0}};
    sim::mamba_conv1d(in.data(), C, C, K, w.data(), b.data(), state.data(), spans, out.data(), 0,
                      C);
    first += n;
  }
  REQUIRE(first == T);
  return out;
}

struct scan_case {
  sim::mamba_scan_shape s;
  std::int64_t T = 0;
  std::vector<float> xbc, dt, A_log, dt_bias, D;
  std::int64_t inter() const { return std::int64_t{s.num_heads} * s.head_dim; }
  std::int64_t ld() const { return inter() + 2 * std::int64_t{s.n_groups} * s.state_size; }
};

scan_case make_scan_case(std::int64_t T, unsigned seed) {
  scan_case c;
  c.s.num_heads = 6;
  c.s.head_dim = 4;
  c.s.state_size = 8;
  c.s.n_groups = 3;
  c.s.dt_min = 0.001f;
  c.T = T;
  c.xbc = normal(static_cast<std::size_t>(T * c.ld()), 0.0f, 1.0f, seed);
  c.dt = normal(static_cast<std::size_t>(T * c.s.num_heads), -2.0f, 1.0f, seed + 1);
  c.dt[3] = 30.0f;   // softplus's linear region (> 20)
  c.dt[4] = -40.0f;  // softplus below dt_min: clamped
  for (std::int32_t h = 0; h < c.s.num_heads; ++h) {
    c.A_log.push_back(std::log(static_cast<float>(h + 1)));
    c.dt_bias.push_back(0.1f * static_cast<float>(h) - 0.3f);
    c.D.push_back(1.0f + 0.25f * static_cast<float>(h));
  }
  return c;
}

// The sim's scan over one sequence in steps (state row `row` of `states`).
std::vector<float> scan_in_steps(const scan_case& c, const std::vector<std::int64_t>& splits,
                                 std::vector<float>& states) {
  const std::int64_t state_floats =
      std::int64_t{c.s.num_heads} * c.s.head_dim * c.s.state_size;
  states.assign(static_cast<std::size_t>(state_floats), -7.0f);  // garbage: fresh ignores it
  std::vector<float> y(static_cast<std::size_t>(c.T * c.inter()));
  std::int64_t first = 0;
  for (const std::int64_t n : splits) {
    const std::vector<sim::mamba_span> spans = {{first, n, 0, first == 0}};
    sim::mamba_scan(c.xbc.data(), c.ld(), c.dt.data(), c.s.num_heads, c.A_log.data(),
                    c.dt_bias.data(), c.D.data(), c.s, states.data(), spans, y.data(), 0,
                    c.s.num_heads);
    first += n;
  }
  REQUIRE(first == c.T);
  return y;
}

// The chunked SSD form in double, from a zero state: y [T, inter] and the final state
// [heads, head_dim, state].
void ssd_reference(const scan_case& c, std::int64_t chunk, std::vector<double>& y,
                   std::vector<double>& final_state) {
  const std::int64_t H = c.s.num_heads, P = c.s.head_dim, N = c.s.state_size;
  const std::int64_t per_group = H / c.s.n_groups;
  y.assign(static_cast<std::size_t>(c.T * H * P), 0.0);
  final_state.assign(static_cast<std::size_t>(H * P * N), 0.0);
  for (std::int64_t h = 0; h < H; ++h) {
    const std::int64_t g = h / per_group;
    const double A = -std::exp(static_cast<double>(c.A_log[h]));
    auto x = [&](std::int64_t t, std::int64_t p) { return double{c.xbc[t * c.ld() + h * P + p]}; };
    auto B = [&](std::int64_t t, std::int64_t n) {
      return double{c.xbc[t * c.ld() + H * P + g * N + n]};
    };
    auto Cm = [&](std::int64_t t, std::int64_t n) {
      return double{c.xbc[t * c.ld() + H * P + c.s.n_groups * N + g * N + n]};
    };
    std::vector<double> dt(static_cast<std::size_t>(c.T));
    for (std::int64_t t = 0; t < c.T; ++t) {
      dt[t] = std::max(softplus(double{c.dt[t * H + h]} + c.dt_bias[h]), double{c.s.dt_min});
    }
    std::vector<double> S(static_cast<std::size_t>(P * N), 0.0);  // entering the chunk
    for (std::int64_t c0 = 0; c0 < c.T; c0 += chunk) {
      const std::int64_t L = std::min(chunk, c.T - c0);
      std::vector<double> cs(static_cast<std::size_t>(L));  // cumulative A * dt in the chunk
      double run = 0.0;
      for (std::int64_t l = 0; l < L; ++l) cs[l] = run += A * dt[c0 + l];
      for (std::int64_t l = 0; l < L; ++l) {
        const std::int64_t t = c0 + l;
        for (std::int64_t p = 0; p < P; ++p) {
          double diag = 0.0;  // intra-chunk: C_l . B_s decayed from s to l, times dt_s x_s
          for (std::int64_t s = 0; s <= l; ++s) {
            double cb = 0.0;
            for (std::int64_t n = 0; n < N; ++n) cb += Cm(t, n) * B(c0 + s, n);
            diag += cb * std::exp(cs[l] - cs[s]) * dt[c0 + s] * x(c0 + s, p);
          }
          double off = 0.0;  // the state entering the chunk, decayed to l, read by C_l
          for (std::int64_t n = 0; n < N; ++n) off += Cm(t, n) * S[p * N + n];
          y[(t * H + h) * P + p] = diag + std::exp(cs[l]) * off + c.D[h] * x(t, p);
        }
      }
      // The state leaving the chunk: the entering one decayed over it, plus the chunk's inputs.
      for (std::int64_t p = 0; p < P; ++p) {
        for (std::int64_t n = 0; n < N; ++n) {
          double add = 0.0;
          for (std::int64_t s = 0; s < L; ++s) {
            add += std::exp(cs[L - 1] - cs[s]) * dt[c0 + s] * x(c0 + s, p) * B(c0 + s, n);
          }
          S[p * N + n] = std::exp(cs[L - 1]) * S[p * N + n] + add;
        }
      }
    }
    std::copy(S.begin(), S.end(), final_state.begin() + h * P * N);
  }
}

void check_close(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}

}  // namespace

TEST_CASE("sim mamba conv1d: torch's causal depthwise conv with SiLU, carried across steps",
          "[sim][model]") {
  constexpr std::int64_t T = 23, C = 5;
  constexpr std::int32_t K = 4;
  const auto in = normal(T * C, 0.0f, 1.0f, 1), w = normal(C * K, 0.0f, 0.5f, 2),
             b = normal(C, 0.0f, 0.1f, 3);
  std::vector<float> state;
  const auto whole = conv_in_steps(in, C, K, w, b, {T}, state);
  // nn.Conv1d(padding = K - 1)[..., :T]: output t reads inputs t - K + 1 .. t, zeros before 0.
  std::vector<double> want(T * C);
  for (std::int64_t t = 0; t < T; ++t) {
    for (std::int64_t ch = 0; ch < C; ++ch) {
      double acc = b[ch];
      for (std::int32_t k = 0; k < K; ++k) {
        const std::int64_t src = t - (K - 1) + k;
        if (src >= 0) acc += double{w[ch * K + k]} * in[src * C + ch];
      }
      want[t * C + ch] = silu(acc);
    }
  }
  check_close(whole, want, 1e-5);
  // The state is the last K - 1 inputs, oldest first.
  for (std::int64_t ch = 0; ch < C; ++ch) {
    for (std::int64_t k = 0; k < K - 1; ++k) {
      CHECK(state[ch * (K - 1) + k] == in[(T - (K - 1) + k) * C + ch]);
    }
  }
  // Any split into steps gives the same bits, including steps shorter than the kernel.
  for (const std::vector<std::int64_t>& splits :
       {std::vector<std::int64_t>{1, 1, 1, 20}, {2, 9, 12}, std::vector<std::int64_t>(T, 1)}) {
    std::vector<float> s;
    CHECK(conv_in_steps(in, C, K, w, b, splits, s) == whole);
    CHECK(s == state);
  }
}

TEST_CASE("sim mamba scan: the recurrence equals the chunked SSD form, and steps of any size "
          "give the same bits",
          "[sim][model]") {
  const scan_case c = make_scan_case(37, 11);
  std::vector<float> state;
  const auto whole = scan_in_steps(c, {c.T}, state);
  for (const std::int64_t chunk : {8, 32}) {  // padding in the last chunk, or one partial chunk
    INFO("chunk " << chunk);
    std::vector<double> y, final_state;
    ssd_reference(c, chunk, y, final_state);
    check_close(whole, y, 2e-5);
    check_close(state, final_state, 2e-5);
  }
  for (const std::vector<std::int64_t>& splits :
       {std::vector<std::int64_t>{5, 1, 31}, {32, 5}, std::vector<std::int64_t>(37, 1)}) {
    std::vector<float> s;
    CHECK(scan_in_steps(c, splits, s) == whole);
    CHECK(s == state);
  }
}

TEST_CASE("sim mamba scan: sequences batched together each keep their own state", "[sim][model]") {
  // Two sequences in one call, in different state rows and a head range at a time, against each
  // run alone.
  const scan_case a = make_scan_case(9, 21), b = make_scan_case(14, 31);
  std::vector<float> sa, sb;
  const auto ya = scan_in_steps(a, {a.T}, sa), yb = scan_in_steps(b, {b.T}, sb);
  scan_case both = a;
  both.xbc.insert(both.xbc.end(), b.xbc.begin(), b.xbc.end());
  both.dt.insert(both.dt.end(), b.dt.begin(), b.dt.end());
  both.T = a.T + b.T;
  std::vector<float> states(2 * sa.size(), 5.0f), y(static_cast<std::size_t>(both.T * a.inter()));
  const std::vector<sim::mamba_span> spans = {{0, a.T, 1, true}, {a.T, b.T, 0, true}};
  for (std::int32_t h = 0; h < a.s.num_heads; h += 2) {
    sim::mamba_scan(both.xbc.data(), both.ld(), both.dt.data(), a.s.num_heads, a.A_log.data(),
                    a.dt_bias.data(), a.D.data(), a.s, states.data(), spans, y.data(), h, h + 2);
  }
  CHECK(std::vector<float>(y.begin(), y.begin() + ya.size()) == ya);
  CHECK(std::vector<float>(y.begin() + ya.size(), y.end()) == yb);
  CHECK(std::vector<float>(states.begin() + sa.size(), states.end()) == sa);
  CHECK(std::vector<float>(states.begin(), states.begin() + sb.size()) == sb);
}

// A row verifying drafts keeps the state after each of its positions (mamba_batch::save_row);
// each must be, bit for bit, the state of that prefix alone.
TEST_CASE("sim mamba: a row's saved states are the states of its prefixes, and "
          "select_draft_states puts back the one after the last standing draft",
          "[sim][model]") {
  const scan_case c = make_scan_case(7, 51);
  const auto state_floats = static_cast<std::size_t>(std::int64_t{c.s.num_heads} * c.s.head_dim *
                                                     c.s.state_size);
  std::vector<std::int32_t> save = {1, 2, 3, 4, 5, 6, -1};  // the last: the slot (row 0) only
  std::vector<float> states(7 * state_floats, 3.0f);
  std::vector<float> y(static_cast<std::size_t>(c.T * c.inter()));
  const std::vector<sim::mamba_span> spans = {{0, c.T, 0, true, save.data()}};
  sim::mamba_scan(c.xbc.data(), c.ld(), c.dt.data(), c.s.num_heads, c.A_log.data(),
                  c.dt_bias.data(), c.D.data(), c.s, states.data(), spans, y.data(), 0,
                  c.s.num_heads);
  for (std::int64_t n = 1; n < c.T; ++n) {
    INFO("the first " << n << " tokens");
    scan_case prefix = c;
    prefix.T = n;
    std::vector<float> alone;
    scan_in_steps(prefix, {n}, alone);
    CHECK(std::vector<float>(states.begin() + n * state_floats,
                             states.begin() + (n + 1) * state_floats) == alone);
  }

  constexpr std::int64_t C = 5;
  constexpr std::int32_t K = 4;
  const auto in = normal(7 * C, 0.0f, 1.0f, 52), w = normal(C * K, 0.0f, 0.5f, 53),
             b = normal(C, 0.0f, 0.1f, 54);
  std::vector<float> conv(7 * C * (K - 1), 9.0f), out(7 * C);
  sim::mamba_conv1d(in.data(), C, C, K, w.data(), b.data(), conv.data(),
                    {{0, 7, 0, true, save.data()}}, out.data(), 0, C);
  for (std::int64_t n = 1; n < 7; ++n) {
    std::vector<float> alone;
    conv_in_steps(std::vector<float>(in.begin(), in.begin() + n * C), C, K, w, b, {n}, alone);
    CHECK(std::vector<float>(conv.begin() + n * C * (K - 1),
                             conv.begin() + (n + 1) * C * (K - 1)) == alone);
  }

  // Two layers of 8 rows of 3 floats; two verified rows: 3 drafts of which 1 stands (slot 0
  // takes save row 2 + 1), and 2 drafts that both stand (slot 1 keeps its state).
  std::vector<float> buf(2 * 8 * 3);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i);
  const std::vector<float> before = buf;
  const std::vector<std::int32_t> sampled = {7, 8, 9, 9, 4, 5, 6};
  const std::vector<std::int32_t> ids = {0, 7, 3, 9, 0, 4, 5};
  const std::vector<courier::gpu::draft_states> rows = {{0, 1, 3, 2, 0}, {4, 5, 2, 5, 1}};
  sim::select_draft_states(sampled.data(), ids.data(), rows.data(), 2,
                           {{buf.data(), 3, 24, 2}});
  for (int l = 0; l < 2; ++l) {
    for (int e = 0; e < 3; ++e) {
      CHECK(buf[l * 24 + e] == before[l * 24 + 3 * 3 + e]);  // row 0 <- row 3
      CHECK(buf[l * 24 + 3 + e] == before[l * 24 + 3 + e]);  // row 1 unchanged
    }
  }
  buf[0] = before[0];
  buf[1] = before[1];
  buf[2] = before[2];
  buf[24] = before[24];
  buf[25] = before[25];
  buf[26] = before[26];
  CHECK(buf == before);  // nothing else written
}

TEST_CASE("sim mamba gated RMSNorm: the gate before the norm, one norm per group", "[sim][model]") {
  constexpr std::int64_t n = 12, group = 4;
  const auto y = normal(n, 0.0f, 1.0f, 41), z = normal(n, 0.0f, 1.0f, 42),
             w = normal(n, 1.0f, 0.1f, 43);
  std::vector<float> out(n);
  sim::gated_rms_norm_row(y.data(), z.data(), w.data(), n, group, 1e-5f, out.data());
  std::vector<double> want(n);
  for (std::int64_t g0 = 0; g0 < n; g0 += group) {
    double ss = 0.0;
    for (std::int64_t i = g0; i < g0 + group; ++i) ss += std::pow(y[i] * silu(z[i]), 2);
    const double inv = 1.0 / std::sqrt(ss / group + 1e-5);
    for (std::int64_t i = g0; i < g0 + group; ++i) want[i] = w[i] * y[i] * silu(z[i]) * inv;
  }
  check_close(out, want, 1e-5);
}

TEST_CASE("sim mamba gated RMSNorm in halves: a group's columns on two ranks, their sums of "
          "squares added, give the whole group's norm",
          "[sim][model]") {
  constexpr std::int64_t n = 16, half = 8;
  const auto y = normal(n, 0.0f, 1.0f, 44), z = normal(n, 0.0f, 1.0f, 45),
             w = normal(n, 1.0f, 0.1f, 46);
  double ss = 0.0;
  for (std::int64_t i = 0; i < n; ++i) ss += std::pow(y[i] * silu(z[i]), 2);
  const double inv = 1.0 / std::sqrt(ss / n + 1e-5);
  std::vector<double> want(n);
  for (std::int64_t i = 0; i < n; ++i) want[i] = w[i] * y[i] * silu(z[i]) * inv;
  const float sum = sim::gated_square_sum_row(y.data(), z.data(), half) +
                    sim::gated_square_sum_row(y.data() + half, z.data() + half, half);
  const float got_inv = 1.0f / std::sqrt(sum / static_cast<float>(n) + 1e-5f);
  std::vector<float> out(n);
  for (std::int64_t at : {std::int64_t{0}, half}) {
    sim::gated_scale_row(y.data() + at, z.data() + at, w.data() + at, half, got_inv,
                         out.data() + at);
  }
  check_close(out, want, 1e-5);
}

}  // namespace courier_test_gpu_sim_mamba
