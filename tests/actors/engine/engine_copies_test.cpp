// The engine and the copy stream: a plan's async_copies run beside its rows (the step is
// answered while they are still in flight) and copies_wait is answered only once they are done,
// with the bytes in place; a batch that cannot run, or that no plan launched, is answered failed
// and the engine carries on.
#include <catch2/catch.hpp>

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "actors/engine/engine_actor.hpp"
#include "gpu/forwarding_device.hpp"
#include "tests/support/fixtures.hpp"

// This file's own namespace: the test binary may be built as a unity build.
namespace courier_test_actors_engine_engine_copies {

using namespace courier;

// A device whose copy stream does nothing until the test opens each batch's gate.
class gated_copies_device final : public gpu::forwarding_device {
 public:
  struct gate final : gpu::pending_copies {
    std::vector<gpu::copy_span> spans;
    std::mutex mu;
    std::condition_variable cv;
    bool open = false;
    bool ready() override {
      std::lock_guard<std::mutex> lock(mu);
      return open;
    }
    void wait() override {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [this] { return open; });
    }
    void release() {
      for (const gpu::copy_span& c : spans) std::memmove(c.dst, c.src, c.n);
      {
        std::lock_guard<std::mutex> lock(mu);
        open = true;
      }
      cv.notify_all();
    }
  };
  using forwarding_device::forwarding_device;
  std::shared_ptr<gpu::pending_copies> copy_async(std::vector<gpu::copy_span> spans) override {
    auto g = std::make_shared<gate>();
    g->spans = std::move(spans);
    std::lock_guard<std::mutex> lock(mu_);
    gates_.push_back(g);
    return g;
  }
  std::shared_ptr<gate> last() {
    std::lock_guard<std::mutex> lock(mu_);
    return gates_.empty() ? nullptr : gates_.back();
  }

 private:
  std::mutex mu_;
  std::vector<std::shared_ptr<gate>> gates_;
};

TEST_CASE("engine: copies back from the host tier run beside the step and are answered once done",
          "[engine]") {
  auto res = std::make_shared<actors::engine_resources>();
  auto owned = std::make_unique<gated_copies_device>(gpu::make_sim_device(2, 256));
  gated_copies_device* dev = owned.get();
  res->dev = std::move(owned);
  res->model = model::llama_model::load(test::model_dir("tiny-qwen2"), *res->dev);
  res->cache = std::make_unique<model::kv_cache>(*res->dev, res->model->config(), 8, 16);
  res->cache->reserve_host(2);
  res->model->reserve_slots(4, 128, 16);  // as reserve() makes them: the rows' device state
  res->max_model_len = 128;
  // Host block 1 holds a pattern; device block 5 holds something else.
  const std::size_t bytes = res->cache->host_block_bytes();
  auto* host = static_cast<unsigned char*>(res->cache->host_memory().get());
  for (std::size_t i = 0; i < bytes; ++i) host[bytes + i] = static_cast<unsigned char>(i * 7 + 1);
  // What device block 5 holds, as a host block would (every layer's K then V page).
  auto device_block_5 = [&] {
    std::vector<unsigned char> out(bytes);
    const std::size_t page = bytes / 2 / static_cast<std::size_t>(res->model->config().kv_layers());
    std::size_t at = 0;
    for (std::int32_t l = 0; l < res->model->config().kv_layers(); ++l) {
      const gpu::kv_cache_view v = res->cache->layer(l);
      for (void* base : {v.k, v.v}) {
        res->dev->download(out.data() + at, static_cast<unsigned char*>(base) + 5 * page, page);
        at += page;
      }
    }
    return out;
  };
  const std::vector<unsigned char> want(host + bytes, host + 2 * bytes);
  REQUIRE(device_block_5() != want);

  caf::actor_system_config cfg;
  cfg.add_message_types<caf::id_block::courier_messages>();
  cfg.set("scheduler.max-threads", 2);
  caf::actor_system sys{cfg};
  {
    auto engine = actors::spawn_engine(sys, res);
    caf::scoped_actor self{sys};
    auto run = [&](msg::step_plan p) {
      msg::step_result out;
      self->request(engine, caf::infinite, std::move(p))
          .receive([&](msg::step_result& r) { out = std::move(r); }, [](caf::error&) {});
      return out;
    };
    auto copies_wait = [&](std::uint64_t batch) {
      std::optional<msg::copies_done> out;
      self->request(engine, caf::infinite, msg::copies_wait{batch})
          .receive([&](msg::copies_done& d) { out = std::move(d); }, [](caf::error&) {});
      return out;
    };

    msg::plan_row row;  // another sequence's prefill, in the same step
    row.seq = 7;
    row.tokens = {1, 2, 3};
    row.new_blocks = {0};
    row.sample = true;
    msg::sequence_start start;
    start.seq = 7;
    start.sampling.temperature = 0;
    start.carries_sampling = true;
    msg::step_plan p{1, {row}, {start}};
    p.async_copies = {{false, 5, 1}};
    p.copy_batch = 1;
    const msg::step_result r = run(p);
    CHECK(r.error == msg::error_code::none);  // answered with its copies still in flight
    REQUIRE(dev->last());
    CHECK_FALSE(dev->last()->ready());
    // Asked now (by another actor), answered only once the copy stream has done them.
    using clock = std::chrono::steady_clock;
    clock::time_point answered, released;
    std::optional<msg::copies_done> done;
    std::thread asker([&] {
      caf::scoped_actor other{sys};
      other->request(engine, caf::infinite, msg::copies_wait{1})
          .receive([&](msg::copies_done& d) { done = std::move(d); }, [](caf::error&) {});
      answered = clock::now();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    CHECK(device_block_5() != want);
    released = clock::now();
    dev->last()->release();
    asker.join();
    REQUIRE(done);
    CHECK(answered >= released);
    CHECK(done->ok);
    CHECK(done->batch == 1);
    CHECK(device_block_5() == want);

    // A copy out of range: nothing is enqueued, the batch is answered failed, the step runs.
    const auto gates_before = dev->last();
    msg::step_plan bad{2, {}};
    bad.async_copies = {{false, 99, 1}};
    bad.copy_batch = 2;
    CHECK(run(bad).error == msg::error_code::none);
    CHECK(dev->last() == gates_before);
    const auto failed = copies_wait(2);
    REQUIRE(failed);
    CHECK_FALSE(failed->ok);
    CHECK_THAT(failed->error, Catch::Contains("out of range"));
    // A batch no plan carried.
    const auto unknown = copies_wait(9);
    REQUIRE(unknown);
    CHECK_FALSE(unknown->ok);
    caf::anon_send_exit(engine, caf::exit_reason::user_shutdown);
  }
}

}  // namespace courier_test_actors_engine_engine_copies
