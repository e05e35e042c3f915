#include "gpu/sim/sim_collectives.hpp"

#include <algorithm>
#include <stdexcept>

#include "gpu/sim/host_collectives.hpp"

namespace courier::gpu::sim {

namespace {

void require_f32_operand(const tensor_view& t, const char* what) {
  if (t.type != dtype::f32) {
    throw std::invalid_argument(std::string("sim collectives: ") + what + " must be f32");
  }
}

class thread_rank final : public collectives {
 public:
  thread_rank(std::shared_ptr<host_collectives> group, std::int32_t rank)
      : group_(std::move(group)), rank_(rank) {}

  std::int32_t rank() const override { return rank_; }
  std::int32_t size() const override { return group_->size(); }

  void all_reduce_sum(tensor_view x) override {
    require_f32_operand(x, "all_reduce_sum's tensor");
    group_->all_reduce_sum(rank_, x.as<float>(), static_cast<std::size_t>(x.rows * x.cols));
  }

  void all_gather_cols(tensor_view in, tensor_view out) override {
    require_f32_operand(in, "all_gather_cols' input");
    require_f32_operand(out, "all_gather_cols' output");
    const std::int64_t n = group_->size(), R = in.rows, C = in.cols;
    if (out.rows != R || out.cols != n * C) {
      throw std::invalid_argument("sim collectives: all_gather_cols' output is not [R, ranks * C]");
    }
    gathered_.resize(static_cast<std::size_t>(n * R * C));  // [rank, R, C]
    group_->all_gather(rank_, in.as<const float>(), static_cast<std::size_t>(R * C),
                       gathered_.data());
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::int64_t row = 0; row < R; ++row) {
        const float* src = gathered_.data() + (r * R + row) * C;
        std::copy(src, src + C, out.as<float>() + row * n * C + r * C);
      }
    }
  }

  void abort(const std::string& why) override { group_->abort(why); }

 private:
  std::shared_ptr<host_collectives> group_;
  std::int32_t rank_;
  std::vector<float> gathered_;  // all_gather_cols' staging, kept between calls
};

}  // namespace

std::vector<std::shared_ptr<collectives>> make_thread_group(std::int32_t size) {
  auto group = std::make_shared<host_collectives>(size);  // throws for size < 1
  std::vector<std::shared_ptr<collectives>> ranks;
  for (std::int32_t r = 0; r < size; ++r) ranks.push_back(std::make_shared<thread_rank>(group, r));
  return ranks;
}

}  // namespace courier::gpu::sim
