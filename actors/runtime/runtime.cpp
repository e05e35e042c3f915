#include "actors/runtime/runtime.hpp"

#include "actors/runtime/worker_priority.hpp"

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>

#include "actors/engine/engine_actor.hpp"
#include "actors/runtime/device_setup.hpp"
#include "actors/runtime/disk_tier.hpp"
#include "actors/runtime/front_end.hpp"
#include "actors/scheduler/scheduler_actor.hpp"
#include "actors/telemetry/kv_event_publisher.hpp"
#include "actors/telemetry/telemetry_actor.hpp"
#include "storage/fingerprint.hpp"

namespace courier::actors {

namespace {

// The steps of the memory plan every peer takes as rank 0 does (the same shapes: the same
// sizes), before any step runs.
void on_peers(engine_resources& res, const std::function<void(model::tp_peers::rank&)>& f) {
  if (res.peers) res.peers->run(f, [] {});
}

// The devices and the model on each: rank 0's in res, the other ranks' as its peers.
void load_models(const config::server_config& cfg, engine_resources& res) {
  std::vector<std::shared_ptr<gpu::collectives>> group;
  std::vector<std::unique_ptr<gpu::device>> devs = make_devices(cfg, group);
  res.dev = std::move(devs[0]);
  if (cfg.model.path.empty()) {
    throw std::runtime_error("model.path: no model folder given (use --model DIR)");
  }
  std::fprintf(stderr, "courier: loading %s on %s%s\n", cfg.model.path.c_str(),
               res.dev->name().c_str(),
               devs.size() > 1 ? fmt::format(" (x{}, tensor parallel)", devs.size()).c_str() : "");
  res.model = model::llama_model::load(cfg.model.path, *res.dev);
  if (devs.size() == 1) return;
  std::vector<model::tp_peers::rank> peers;  // every other rank's shard, each on its device
  for (std::size_t r = 1; r < devs.size(); ++r) {
    devs[r]->bind_thread();  // its weights go to its GPU
    auto m = model::llama_model::load(cfg.model.path, *devs[r]);
    peers.push_back({std::move(devs[r]), std::move(m), nullptr});
  }
  res.dev->bind_thread();  // what this thread allocates below is rank 0's
  res.peers = std::make_unique<model::tp_peers>(std::move(peers), std::move(group));
}

// The LoRA adapters of the config, read and checked now (a bad adapter stops the server here,
// not at its first request; beyond lora.max_cpu_loras its copy goes: a request reads it again),
// and the slot pool on the device: as many slots as adapters at start (lora.max_loras at most),
// or all with runtime loading. Returns the pool's bytes.
std::size_t reserve_loras(const config::server_config& cfg, engine_resources& res) {
  if (cfg.lora.adapters.empty() && !cfg.lora.runtime_loading) return 0;
  const model::model_config& mc = res.model->config();
  for (const auto& [name, dir] : cfg.lora.adapters) {
    if (name == res.model_name) {
      throw model::model_error("lora.adapters." + name +
                               ": an adapter may not have the base model's name");
    }
    auto adapter = model::load_lora_adapter(name, dir, mc, cfg.lora.max_rank);
    res.adapter_dirs.emplace(name, engine_resources::registered_adapter{dir, adapter->fingerprint});
    if (cfg.lora.max_cpu_loras == 0 ||
        res.adapters.size() < static_cast<std::size_t>(cfg.lora.max_cpu_loras)) {
      res.adapters.emplace(name, std::move(adapter));
    }
  }
  res.lora_host_capacity = cfg.lora.max_cpu_loras;
  const auto slots = static_cast<std::int32_t>(
      cfg.lora.runtime_loading ? cfg.lora.max_loras
                               : std::min<std::size_t>(static_cast<std::size_t>(cfg.lora.max_loras),
                                                       res.adapter_dirs.size()));
  res.lora_max_rank = cfg.lora.max_rank;
  res.lora_load_timeout_s = cfg.lora.load_timeout_s;
  const std::size_t bytes = res.model->reserve_loras(slots, cfg.lora.max_rank);
  on_peers(res, [&](model::tp_peers::rank& r) { r.model->reserve_loras(slots, cfg.lora.max_rank); });
  std::fprintf(stderr,
               "courier: LoRA: %zu adapters (%zu in host memory), %d on the device at once "
               "(slots of rank %d, %zu MB)\n",
               res.adapter_dirs.size(), res.adapters.size(), slots, cfg.lora.max_rank,
               bytes >> 20);
  return bytes;
}

// A hybrid's recurrent-state pool, snapshot rows, draft rows and host state rows, before the KV
// blocks (`workspace_bytes` so far). Returns the device bytes.
std::size_t reserve_hybrid_states(const config::server_config& cfg, engine_resources& res,
                                  std::size_t workspace_bytes, std::int32_t graph_batch) {
  const std::size_t row_bytes = res.model->state_bytes_per_slot();
  const std::int32_t slots = state_slots_for(cfg, *res.dev, *res.model, workspace_bytes);
  const std::size_t state_bytes = static_cast<std::size_t>(slots) * row_bytes;
  const std::int32_t snaps =
      snapshot_slots_for(cfg, *res.dev, *res.model, workspace_bytes + state_bytes, slots);
  const std::int32_t drafts = draft_state_rows_for(
      cfg, *res.dev, *res.model,
      workspace_bytes + state_bytes + static_cast<std::size_t>(snaps) * row_bytes);
  const std::size_t bytes = res.model->reserve_states(slots + snaps, drafts);
  res.state_slots = slots;
  const std::int32_t host_rows =
      snaps > 0 ? static_cast<std::int32_t>(
                      (static_cast<std::size_t>(cfg.cache.ssm_host_tier_mb) << 20) / row_bytes)
                : 0;
  res.model->reserve_host_states(host_rows);
  on_peers(res, [&](model::tp_peers::rank& r) {  // each rank keeps its heads' share of every row
    r.model->reserve_states(slots + snaps, drafts);
    r.model->reserve_host_states(host_rows);
  });
  std::fprintf(stderr,
               "courier: Mamba-2 states: %d slots of %.2f MB (sequences running at once), "
               "%d snapshot rows (prefix cache), %d in host memory, %d draft rows (prompt "
               "lookup%s)%s\n",
               slots, static_cast<double>(row_bytes) / (1 << 20), snaps, host_rows, drafts,
               cfg.speculative.prompt_lookup.enabled && drafts == 0 ? ": off, no room" : "",
               graph_batch > 0 ? ", 1 padding row (decode graphs)" : "");
  return bytes;
}

// The KV cache from what is left after `workspace_bytes`, and its host tier. A hybrid's
// recurrent state goes with its KV into host state rows (cache.ssm_host_tier_mb): a swap's, an
// evicted snapshot's. cache.host_tier_mb is the host memory of every rank's tier together: each
// rank holds its KV heads' share of every host block. Returns the blocks.
std::int32_t reserve_kv(const config::server_config& cfg, engine_resources& res,
                        std::size_t workspace_bytes) {
  const model::model_config& mc = res.model->config();
  const std::int32_t bs = cfg.scheduler.block_size;
  const std::int32_t blocks = kv_blocks_for(cfg, *res.dev, *res.model, workspace_bytes);
  res.cache = std::make_unique<model::kv_cache>(*res.dev, res.model->shard_config(), blocks, bs);
  on_peers(res, [&](model::tp_peers::rank& r) {
    r.cache = std::make_unique<model::kv_cache>(*r.dev, r.model->shard_config(), blocks, bs);
  });
  const auto block_bytes = static_cast<std::int64_t>(std::max<std::size_t>(
      res.cache->host_block_bytes() * static_cast<std::size_t>(cfg.parallel.tensor_size), 1));
  const auto host_blocks = static_cast<std::int32_t>(
      std::min<std::int64_t>((cfg.cache.host_tier_mb << 20) / block_bytes,
                             std::numeric_limits<std::int32_t>::max()));
  if (host_blocks > 0 && mc.hybrid() && res.model->host_state_rows() == 0) {
    std::fprintf(stderr,
                 "courier: cache.host_tier_mb is not used for %s: a hybrid's KV goes to host "
                 "memory only with its state, which needs cache.ssm_host_tier_mb (and prefix "
                 "caching)\n",
                 mc.architecture_name.c_str());
  } else if (host_blocks > 0) {
    res.cache->reserve_host(host_blocks);
    on_peers(res, [&](model::tp_peers::rank& r) { r.cache->reserve_host(host_blocks); });
    std::fprintf(stderr, "courier: KV host tier: %d blocks (%lld MB)%s\n", host_blocks,
                 static_cast<long long>(cfg.cache.host_tier_mb),
                 mc.hybrid() ? " (with the snapshots detached to cache.ssm_host_tier_mb)" : "");
  }
  return blocks;
}

}  // namespace

std::shared_ptr<engine_resources> load_engine_resources(const config::server_config& cfg) {
  auto res = std::make_shared<engine_resources>();
  load_models(cfg, *res);
  const model::model_config& mc = res->model->config();
  const std::int32_t bs = cfg.scheduler.block_size;
  std::int64_t len = cfg.model.max_model_len > 0 ? cfg.model.max_model_len
                                                 : mc.max_position_embeddings;
  if (cfg.model.max_model_len > mc.max_position_embeddings) {
    throw std::runtime_error(fmt::format(
        "model.max_model_len: {} is more than the model's max_position_embeddings ({})",
        cfg.model.max_model_len, mc.max_position_embeddings));
  }
  // The memory plan: weights, then the workspaces of the largest step, then KV pages from what
  // is left; steps allocate nothing after this.
  const gpu::workspace_limits limits = step_limits_for(cfg, len);
  const std::int32_t graph_batch = std::min(cfg.engine.graph_max_batch, cfg.scheduler.max_num_seqs);
  std::size_t workspace_bytes =
      res->model->reserve(limits) + res->model->enable_graphs(graph_batch);
  on_peers(*res, [&](model::tp_peers::rank& r) {
    r.model->reserve(limits);
    r.model->enable_graphs(graph_batch);
  });
  res->model_name = !cfg.model.served_name.empty()
                        ? cfg.model.served_name
                        : std::filesystem::path(cfg.model.path).filename().string();
  res->weights_fingerprint = storage::weights_fingerprint(cfg.model.path);
  res->tokenizer_fingerprint = storage::tokenizer_fingerprint(cfg.model.path);
  workspace_bytes += reserve_loras(cfg, *res);  // the slot pool, before KV
  if (mc.hybrid()) workspace_bytes += reserve_hybrid_states(cfg, *res, workspace_bytes, graph_batch);
  const std::int32_t blocks = reserve_kv(cfg, *res, workspace_bytes);
  std::fprintf(stderr, "courier: weights %zu MB, workspaces %zu MB, KV %d blocks of %d tokens%s\n",
               res->model->weight_bytes() >> 20, workspace_bytes >> 20, blocks, bs,
               res->peers ? " (each rank's)" : "");
  const std::int64_t capacity = static_cast<std::int64_t>(blocks) * bs;
  if (len > capacity) {
    std::fprintf(stderr, "courier: max_model_len %lld capped to the KV capacity of %lld tokens\n",
                 static_cast<long long>(len), static_cast<long long>(capacity));
    len = capacity;
  }
  res->max_model_len = len;
  res->pipeline = cfg.engine.pipeline;
  return res;
}

scheduler_options scheduler_options_from(const config::server_config& cfg) {
  scheduler_options o;
  o.max_num_seqs = cfg.scheduler.max_num_seqs;
  o.max_batched_tokens = cfg.scheduler.max_batched_tokens;
  o.prefix_caching = cfg.scheduler.prefix_caching;
  o.overlap = cfg.scheduler.overlap;
  o.isolate_by_tenant = cfg.scheduler.cache_isolation == "tenant";
  o.max_waiting = cfg.server.max_waiting;
  const auto& pl = cfg.speculative.prompt_lookup;
  o.lookup.enabled = pl.enabled;
  o.lookup.num_draft = pl.num_draft;
  o.lookup.shared.capacity_bytes =
      static_cast<std::size_t>(cfg.speculative.shared_cache_mb) * 1024 * 1024;
  o.lookup.shared.max_scopes = static_cast<std::size_t>(cfg.speculative.shared_cache_scopes);
  o.lookup.shared.ngram.min_n = static_cast<std::size_t>(pl.min_ngram);
  o.lookup.shared.ngram.max_n = static_cast<std::size_t>(pl.max_ngram);
  o.ssm_checkpoint_tokens = cfg.cache.ssm_checkpoint_tokens;
  o.ssm_decode_snapshots = cfg.cache.ssm_decode_snapshots;
  o.disk_read_timeout_ms = cfg.cache.disk_tier_read_timeout_ms;
  o.host_write_through = cfg.cache.host_tier_write_through;
  using mode = scheduler_options::preemption_mode;
  o.preemption = cfg.cache.preemption == "swap"        ? mode::swap
                 : cfg.cache.preemption == "recompute" ? mode::recompute
                                                       : mode::automatic;
  return o;
}

runtime::runtime(const config::server_config& cfg) {
  scheduler_options sopts = scheduler_options_from(cfg);  // checked before anything loads
  const std::string lookup_error = cache::shared_lookup_config_error(sopts.lookup.shared);
  if (!lookup_error.empty()) throw config::config_error(lookup_error);
  const bool front = !cfg.cluster.replicas.empty();
  std::shared_ptr<engine_resources> res;
  if (!front) res = load_engine_resources(cfg);  // a front end holds no model
  start_actor_system(cfg, front);
  if (front) {
    front_end fe = start_front_end(*sys_, cfg);
    ready_ = std::move(fe.ready);
    scheduler_ = std::move(fe.router);
    telemetry_options topts;
    topts.model_name = ready_.model_name;
    topts.metrics = cfg.telemetry.metrics;
    telemetry_ = sys_->spawn(telemetry_fn, std::move(topts));
    return;
  }
  start_engine(res);
  telemetry_options topts;
  try {  // what may fail stops the engine first
    topts = telemetry_options_for(cfg);
    open_outlets(cfg, *res, sopts);
  } catch (...) {
    anon_send_exit(engine_, caf::exit_reason::user_shutdown);
    throw;
  }
  telemetry_ = sys_->spawn(telemetry_fn, std::move(topts));
  scheduler_ = spawn_scheduler(*sys_, engine_, std::move(sopts), ready_,
                               cfg.telemetry.metrics ? telemetry_ : telemetry_actor{}, disk_);
  if (!cfg.cluster.listen.empty()) {
    try {
      auto gate = spawn_replica_gate(*sys_, scheduler_, wire_grammars_,
                                     cfg.telemetry.metrics ? telemetry_ : telemetry_actor{});
      listen_port_ =
          publish_replica(*sys_, caf::actor_cast<scheduler_actor>(gate), cfg.cluster.listen);
    } catch (...) {
      anon_send_exit(scheduler_, caf::exit_reason::user_shutdown);
      anon_send_exit(engine_, caf::exit_reason::user_shutdown);
      anon_send_exit(telemetry_, caf::exit_reason::user_shutdown);
      throw;
    }
  }
}

void runtime::start_actor_system(const config::server_config& cfg, bool front) {
  caf_cfg_ = std::make_unique<caf::actor_system_config>();
  caf_cfg_->add_message_types<caf::id_block::courier_messages>();
  caf_cfg_->set("scheduler.max-threads", static_cast<int>(cfg.server.actor_threads));
  caf_cfg_->set("logger.verbosity", caf::atom("quiet"));
  if (front || !cfg.cluster.listen.empty()) caf_cfg_->load<caf::io::middleman>();
  if (cfg.server.admission_nice > 0) {
    caf_cfg_->add_thread_hook<worker_priority_hook>(cfg.server.admission_nice);
  }
  sys_ = std::make_unique<caf::actor_system>(*caf_cfg_);
}

void runtime::start_engine(std::shared_ptr<engine_resources> res) {
  engine_ = spawn_engine(*sys_, std::move(res));
  caf::scoped_actor self{*sys_};
  bool ok = false;
  self->request(engine_, caf::infinite, msg::ready_atom_v)
      .receive([&](msg::engine_ready& r) { ready_ = std::move(r); ok = true; },
               [&](caf::error&) {});
  if (!ok) {
    anon_send_exit(engine_, caf::exit_reason::user_shutdown);
    throw std::runtime_error("engine: did not report ready");
  }
}

telemetry_options runtime::telemetry_options_for(const config::server_config& cfg) const {
  telemetry_options topts;
  topts.model_name = ready_.model_name;
  topts.metrics = cfg.telemetry.metrics;
  topts.trace_sample = cfg.telemetry.trace.sample;
  topts.flush_interval = std::chrono::milliseconds(cfg.telemetry.trace.flush_ms);
  topts.max_buffered_spans = static_cast<std::size_t>(cfg.telemetry.trace.buffer_spans);
  if (!cfg.telemetry.trace.path.empty()) {
    topts.trace = std::make_shared<telemetry::trace_writer>(cfg.telemetry.trace.path,
                                                            topts.trace_sample, ready_.model_name);
  }
  return topts;
}

// Where the scheduler's cache events go (the KV-event publisher, bound now: a bad endpoint stops
// the start here; or recorded for routers' watchers only), and the KV disk tier.
void runtime::open_outlets(const config::server_config& cfg, engine_resources& res,
                           scheduler_options& sopts) {
  if (!cfg.kv_events.endpoint.empty()) {
    auto pub = std::make_shared<telemetry::kv_event_publisher>(
        telemetry::kv_event_options{cfg.kv_events.endpoint, cfg.kv_events.topic,
                                    cfg.kv_events.replay_endpoint,
                                    static_cast<std::size_t>(cfg.kv_events.buffer_steps)});
    sopts.cache_events = [pub](cache::cache_event_log e) { pub->publish(std::move(e)); };
  } else if (!cfg.cluster.listen.empty()) {
    sopts.cache_events = [](cache::cache_event_log) {};
  }
  if (std::optional<disk_tier> tier = open_disk_tier(cfg, res)) {
    sopts.disk = std::move(tier->slots);
    disk_ = spawn_disk(*sys_, std::move(tier->io));
  }
}

runtime::~runtime() {
  anon_send_exit(scheduler_, caf::exit_reason::user_shutdown);
  if (engine_) anon_send_exit(engine_, caf::exit_reason::user_shutdown);
  if (disk_) anon_send_exit(disk_, caf::exit_reason::user_shutdown);
  anon_send_exit(telemetry_, caf::exit_reason::user_shutdown);  // drains the trace last
  scheduler_ = nullptr;
  disk_ = nullptr;
  engine_ = nullptr;
  telemetry_ = nullptr;
  sys_.reset();  // waits for the actors to finish
}

}  // namespace courier::actors
