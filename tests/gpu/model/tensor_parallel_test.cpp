// Tensor parallelism's split (Megatron's): for every split the layout allows, the ranks' query
// heads, MLP columns and vocabulary rows partition the model's exactly, each rank holds the
// key/value heads its query heads read (split, or replicated on size / num_kv_heads ranks), and
// a split that cannot be even is refused with its reason; the bundled models' splits.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "gpu/model/tensor_parallel.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_gpu_model_tensor_parallel {

using namespace courier::model;

namespace {

const std::string models_dir = COURIER_TEST_DATA "/models";

model_config config(std::int32_t heads, std::int32_t kv, std::int32_t ffn, std::int32_t vocab) {
  model_config c;
  c.architecture_name = "LlamaForCausalLM";
  c.num_heads = heads;
  c.num_kv_heads = kv;
  c.head_dim = 64;
  c.hidden_size = heads * 64;
  c.intermediate_size = ffn;
  c.vocab_size = vocab;
  return c;
}

// Checks the layouts of every rank against the model; returns the ranks' layouts.
void check_split(const model_config& c, std::int32_t size) {
  std::vector<int> q_owner(static_cast<std::size_t>(c.num_heads), 0);
  std::vector<int> kv_holders(static_cast<std::size_t>(c.num_kv_heads), 0);
  std::vector<int> ffn_owner(static_cast<std::size_t>(c.intermediate_size), 0);
  std::vector<int> vocab_owner(static_cast<std::size_t>(c.vocab_size), 0);
  const std::int32_t group = c.num_heads / c.num_kv_heads;  // query heads per KV head
  for (std::int32_t r = 0; r < size; ++r) {
    const tp_layout l = tp_layout_for(c, r, size);
    CHECK(l.rank == r);
    CHECK(l.size == size);
    for (std::int64_t h = l.q_heads.begin; h < l.q_heads.end(); ++h) {
      ++q_owner.at(static_cast<std::size_t>(h));
      const std::int64_t reads = h / group;  // GQA: the KV head this query head reads
      CHECK(reads >= l.kv_heads.begin);
      CHECK(reads < l.kv_heads.end());
    }
    for (std::int64_t h = l.kv_heads.begin; h < l.kv_heads.end(); ++h) {
      ++kv_holders.at(static_cast<std::size_t>(h));
    }
    for (std::int64_t i = l.ffn.begin; i < l.ffn.end(); ++i) {
      ++ffn_owner.at(static_cast<std::size_t>(i));
    }
    for (std::int64_t i = l.vocab.begin; i < l.vocab.end(); ++i) {
      ++vocab_owner.at(static_cast<std::size_t>(i));
    }
    CHECK(l.q_heads.count == c.num_heads / size);  // even: every rank the same work
    CHECK(l.ffn.count == c.intermediate_size / size);
  }
  const int replicas = c.num_kv_heads >= size ? 1 : size / c.num_kv_heads;
  for (const int n : q_owner) CHECK(n == 1);
  for (const int n : kv_holders) CHECK(n == replicas);
  for (const int n : ffn_owner) CHECK(n == 1);
  for (const int n : vocab_owner) CHECK(n == 1);
}

}  // namespace

TEST_CASE("tensor parallel: every split allowed partitions the model, with each query head's "
          "KV head on its rank; the others are refused with a reason",
          "[model]") {
  int allowed = 0, refused = 0;
  for (const std::int32_t heads : {2, 4, 6, 8, 32, 64}) {
    for (const std::int32_t kv : {1, 2, 3, 4, 8, 32}) {
      if (kv > heads || heads % kv != 0) continue;
      for (const std::int32_t size : {1, 2, 3, 4, 8, 16}) {
        const model_config c = config(heads, kv, 96 * 16, 96 * 16);
        INFO(heads << " heads, " << kv << " KV heads, " << size << " ranks");
        const std::string why = tp_refusal(c, size);
        const bool even = heads % size == 0 && (kv >= size ? kv % size == 0 : size % kv == 0);
        CHECK(why.empty() == even);
        if (why.empty()) {
          ++allowed;
          check_split(c, size);
        } else {
          ++refused;
          CHECK_THROWS_WITH(tp_layout_for(c, 0, size), Catch::Contains(why));
        }
      }
    }
  }
  CHECK(allowed > 20);
  CHECK(refused > 20);
  const model_config llama70b = config(64, 8, 28672, 128256);
  CHECK(tp_layout_for(llama70b, 3, 8).kv_heads.begin == 3);  // one KV head per rank
  CHECK(tp_layout_for(llama70b, 3, 16).kv_heads.begin == 1);  // each on two ranks
  CHECK(tp_layout_for(llama70b, 3, 16).kv_replicas == 2);
  CHECK(tp_layout_for(llama70b, 7, 8).vocab.count == 128256 / 8);
  CHECK_THAT(tp_refusal(config(8, 8, 64, 1001), 4), Catch::Contains("vocabulary of 1001"));
  CHECK_FALSE(tp_refusal(config(8, 8, 100, 1000), 8).empty());  // 100 MLP columns
  CHECK_FALSE(tp_refusal(llama70b, 0).empty());
  CHECK_THROWS_AS(tp_layout_for(llama70b, 8, 8), std::invalid_argument);
}

TEST_CASE("tensor parallel: the bundled models' splits", "[model]") {
  const model_config llama = load_model_config(models_dir + "/tiny-llama3");  // 2 heads, 1 KV
  CHECK(tp_refusal(llama, 2).empty());
  CHECK(tp_layout_for(llama, 1, 2).kv_replicas == 2);
  CHECK_THAT(tp_refusal(llama, 4), Catch::Contains("2 attention heads"));
  const model_config qwen = load_model_config(models_dir + "/tiny-qwen2");  // 4 heads, 2 KV
  CHECK(tp_refusal(qwen, 2).empty());
  CHECK(tp_refusal(qwen, 4).empty());
  CHECK(tp_layout_for(qwen, 3, 4).kv_heads.begin == 1);
  const model_config hybrid = load_model_config(models_dir + "/tiny-hybrid");
  CHECK(tp_refusal(hybrid, 1).empty());
  CHECK(tp_refusal(hybrid, 2).empty());  // 8 Mamba-2 heads in 2 groups: a group per rank
  const tp_layout h1 = tp_layout_for(hybrid, 1, 2);
  CHECK(h1.mamba_heads.begin == 4);
  CHECK(h1.mamba_heads.count == 4);
  CHECK(h1.mamba_groups.begin == 1);
  CHECK(h1.mamba_groups.count == 1);
  // Over 4 ranks each rank's 2 heads read one group, which it shares with the next rank.
  CHECK(tp_refusal(hybrid, 4).empty());
  const tp_layout h3 = tp_layout_for(hybrid, 3, 4);
  CHECK(h3.mamba_heads.begin == 6);
  CHECK(h3.mamba_groups.begin == 1);
  CHECK(h3.mamba_groups.count == 1);
  CHECK(h3.mamba_group_ranks == 2);
  CHECK(h1.mamba_group_ranks == 1);
  // Groups that neither divide the ranks nor are divided by them (24 heads in 6 groups over 4
  // ranks: a rank's 6 heads would read two groups, one of them in part).
  model_config odd = hybrid;
  odd.mamba.num_heads = 24;
  odd.mamba.n_groups = 6;
  CHECK_THAT(tp_refusal(odd, 4), Catch::Contains("6 Mamba-2 groups (n_groups) neither split evenly "
                                                 "across 4 ranks nor replicate evenly on them"));
  odd.mamba.n_groups = 1;  // one group: on every rank, as vLLM replicates it
  CHECK(tp_refusal(odd, 4).empty());
  CHECK(tp_layout_for(odd, 3, 4).mamba_group_ranks == 4);
}

}  // namespace courier_test_gpu_model_tensor_parallel
