#pragma once
// A model of the device's KV blocks and the host tier's, for the scheduler core's tests: each KV
// slot holds a hash of the tokens up to its position, a plan's block copies (swaps out, spills)
// move blocks as the engine does (first, in order), its async copies (promotions and swaps in,
// write-through out) are enqueued on a copy stream and land in order when the test finishes
// their batch, and every row must find in its table exactly the KV of the tokens before it.
// While a batch is in flight nothing may touch what it writes or change what it reads: no row
// may use a device block it writes or write one it reads, no copy out read or write its blocks,
// no disk read write its host blocks, no disk write read a host block it has yet to write
// (checked). Blocks of 16 tokens (fake_engine_ready).
#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/support/scheduler_core_driver.hpp"

namespace courier::test {

struct kv_device {
  static constexpr std::int32_t bs = 16;
  std::map<std::int32_t, std::vector<std::uint64_t>> blocks, host;
  std::map<msg::request_id, std::vector<msg::token_id>> prompts;
  test::engine_tables_check tables;
  int copies_out = 0, copies_in = 0;
  // Sequences with a row in a failed step (they fail: rows planned after it read garbage).
  std::set<msg::request_id> doomed;
  // The copy stream: batches enqueued by the plans run, not yet done; the device blocks they
  // write (copying_to) and read (copying_from_dev), the host blocks they read (copying_from) and
  // write (copying_to_host). Every fail_copy_batch_every-th batch fails (no copy of it lands).
  struct copy_batch {
    std::vector<msg::block_copy> copies;
  };
  std::map<std::uint64_t, copy_batch> copying;
  std::multiset<std::int32_t> copying_to, copying_from, copying_from_dev, copying_to_host;
  int fail_copy_batch_every = 0, copy_batches_done = 0;

  msg::token_id token_at(msg::request_id seq, std::int32_t pos) const {
    const auto& p = prompts.at(seq);
    return pos < static_cast<std::int32_t>(p.size()) ? p[static_cast<std::size_t>(pos)]
                                                     : test::next_token(seq, pos);
  }
  // The KV at `pos`: a hash of the tokens up to it (equal prefixes, equal KV); each sequence's
  // hashes are kept as they are extended.
  std::uint64_t kv_at(msg::request_id seq, std::int32_t pos) {
    std::vector<std::uint64_t>& h = kv_memo[seq];
    while (static_cast<std::int32_t>(h.size()) <= pos) {
      const std::uint64_t prev = h.empty() ? 0xcbf29ce484222325ULL : h.back();
      h.push_back((prev ^ (token_at(seq, static_cast<std::int32_t>(h.size())) + 1)) *
                  0x100000001b3ULL);
    }
    return h[static_cast<std::size_t>(pos)];
  }
  std::map<msg::request_id, std::vector<std::uint64_t>> kv_memo;

  // A plan as the engine takes it (its tables brought up to date, each row's copied), and as
  // the device later runs it: the copies first, in order, then the rows. A test may run it
  // late (the device is behind the scheduler), as long as plans run in order.
  struct accepted {
    msg::step_plan plan;
    std::vector<std::vector<std::int32_t>> tables;  // each row's
  };
  accepted accept(const msg::step_plan& p, const actors::scheduler_core& core) {
    tables.on_plan(p, core);
    accepted a{p, {}};
    for (const msg::plan_row& row : p.rows) a.tables.push_back(tables.seqs.find(row.seq)->table);
    return a;
  }
  void execute(const accepted& a) {
    const msg::step_plan& p = a.plan;
    for (const msg::block_copy& c : p.block_copies) {
      if (copying_to.count(c.block) || copying_from.count(c.host_block) ||
          copying_to_host.count(c.host_block)) {
        FAIL("step " << p.step << " copies block " << c.block << " or host block "
                     << c.host_block << " while the copy stream copies it");
      }
      if (c.to_host) {
        host[c.host_block] = blocks[c.block];
        ++copies_out;
      } else {
        REQUIRE(host.count(c.host_block));
        blocks[c.block] = host[c.host_block];
        ++copies_in;
      }
    }
    if (!p.async_copies.empty()) {
      REQUIRE(p.copy_batch != 0);
      REQUIRE(!copying.count(p.copy_batch));
      copy_batch& b = copying[p.copy_batch];
      for (const msg::block_copy& c : p.async_copies) {
        b.copies.push_back(c);
        if (c.to_host) {
          REQUIRE(blocks.count(c.block));
          copying_from_dev.insert(c.block);
          copying_to_host.insert(c.host_block);
        } else {
          copying_to.insert(c.block);
          copying_from.insert(c.host_block);
        }
      }
    }
    for (std::size_t r = 0; r < p.rows.size(); ++r) {
      const msg::plan_row& row = p.rows[r];
      INFO("step " << p.step << ", sequence " << row.seq << " from " << row.start_pos);
      const std::vector<std::int32_t>& table = a.tables[r];
      const auto used = static_cast<std::size_t>(row.start_pos) + row.tokens.size();
      for (std::size_t i = 0; i * bs < used && i < table.size(); ++i) {
        if (copying_to.count(table[i])) {
          FAIL("its block " << table[i] << " is still being copied in");
        }
        if ((i + 1) * bs > static_cast<std::size_t>(row.start_pos) &&
            copying_from_dev.count(table[i])) {
          FAIL("it writes block " << table[i] << " while it is being copied out");
        }
      }
      for (std::int32_t pos = 0; pos < row.start_pos && !doomed.count(row.seq); ++pos) {
        const auto& b = blocks[table[static_cast<std::size_t>(pos / bs)]];
        const bool right = b.size() == static_cast<std::size_t>(bs) &&
                           b[static_cast<std::size_t>(pos % bs)] == kv_at(row.seq, pos);
        if (!right) FAIL("position " << pos << " of its table holds another prefix's KV");
      }
      for (std::size_t i = 0; i < row.tokens.size(); ++i) {
        const auto pos = row.start_pos + static_cast<std::int32_t>(i);
        auto& b = blocks[table[static_cast<std::size_t>(pos / bs)]];
        b.resize(static_cast<std::size_t>(bs), 0);
        b[static_cast<std::size_t>(pos % bs)] = kv_at(row.seq, pos);
      }
    }
  }
  void run(const msg::step_plan& p, const actors::scheduler_core& core) {
    execute(accept(p, core));
  }
  // The copy stream finishes batch `id` (run by a plan already executed): its copies land in
  // order, or (a failing batch) none does. The engine's answer to copies_wait.
  msg::copies_done finish_copies(std::uint64_t id) {
    REQUIRE(copying.count(id));
    const copy_batch b = std::move(copying.at(id));
    copying.erase(id);
    ++copy_batches_done;
    const bool ok = fail_copy_batch_every == 0 || copy_batches_done % fail_copy_batch_every != 0;
    for (const msg::block_copy& c : b.copies) {
      INFO("copy between block " << c.block << " and host block " << c.host_block);
      if (c.to_host) {
        if (ok) {
          host[c.host_block] = blocks[c.block];
          ++copies_out;
        }
        copying_from_dev.erase(copying_from_dev.find(c.block));
        copying_to_host.erase(copying_to_host.find(c.host_block));
      } else {
        REQUIRE(host.count(c.host_block));
        if (ok) {
          blocks[c.block] = host[c.host_block];
          ++copies_in;
        }
        copying_to.erase(copying_to.find(c.block));
        copying_from.erase(copying_from.find(c.host_block));
      }
    }
    return {id, ok, ok ? std::string() : std::string("injected")};
  }
};

// A model of the disk tier's file: each slot holds the block a write put there under its key;
// a read serves it only under that key and intact (as the real file checks its header and
// CRC). Every `fail_write_every`-th write fails (a failing disk) and every `corrupt_every`-th
// is stored damaged (found at its read). The host blocks a batch names must not change between
// its sending and its answer (nothing else may touch them meanwhile): checked.
struct disk_model {
  struct slot {
    std::uint64_t hash = 0;
    std::vector<std::uint64_t> kv;
    bool damaged = false;
  };
  std::map<std::int64_t, slot> slots;
  std::map<std::int64_t, msg::disk_op> keys;  // what each slot's header says (for restores)
  int fail_write_every = 0, corrupt_every = 0;
  int writes = 0, reads = 0, failed = 0;
  // Sent, not yet answered: each with the named host blocks' contents when it was sent.
  std::deque<std::pair<msg::disk_batch, std::vector<std::vector<std::uint64_t>>>> pending;

  void take(actors::scheduler_core& core, kv_device& dev) {
    while (auto b = core.take_disk_batch()) {
      std::vector<std::vector<std::uint64_t>> at_send;
      for (const msg::disk_op& op : b->ops) {
        if (op.write && dev.copying_to_host.count(op.host_block)) {
          FAIL("a disk write reads host block " << op.host_block << " before its copy lands");
        }
        at_send.push_back(dev.host[op.host_block]);
      }
      pending.emplace_back(std::move(*b), std::move(at_send));
    }
  }
  // Runs and answers the oldest batch.
  msg::disk_done answer_one(kv_device& dev) {
    auto [b, at_send] = std::move(pending.front());
    pending.pop_front();
    msg::disk_done d;
    d.id = b.id;
    for (std::size_t i = 0; i < b.ops.size(); ++i) {
      const msg::disk_op& op = b.ops[i];
      INFO("disk op " << i << (op.write ? " write" : " read") << " of host block "
                      << op.host_block);
      REQUIRE(dev.host[op.host_block] == at_send[i]);  // untouched while the I/O ran
      bool ok = false;
      if (op.write) {
        ++writes;
        REQUIRE(dev.host[op.host_block].size() == static_cast<std::size_t>(kv_device::bs));
        if (fail_write_every == 0 || writes % fail_write_every != 0) {
          slots[op.slot] = {op.hash, dev.host[op.host_block],
                            corrupt_every > 0 && writes % corrupt_every == 0};
          keys[op.slot] = op;
          ok = true;
        }
      } else {
        ++reads;
        if (dev.copying_from.count(op.host_block) || dev.copying_to_host.count(op.host_block)) {
          FAIL("a disk read writes a block being copied");
        }
        const auto it = slots.find(op.slot);
        if (it != slots.end() && it->second.hash == op.hash && !it->second.damaged) {
          dev.host[op.host_block] = it->second.kv;
          ok = true;
        }
      }
      failed += ok ? 0 : 1;
      d.ok.push_back(ok ? 1 : 0);
    }
    return d;
  }
  // The entries a restart with persistence would find (the damaged ones too: only a read
  // finds those out).
  std::vector<actors::disk_entry> restored() const {
    std::vector<actors::disk_entry> out;
    for (const auto& [s, op] : keys) out.push_back({s, op.hash, op.parent, op.tokens});
    return out;
  }
};

// Plans and answers steps until the core is idle, running each plan on `dev` and checking the
// core's invariants after every plan and result (finishing the oldest copy batch after each
// step's result, and with a disk answering one disk batch; and any left when no step is in
// flight). The first plan with a copy to host memory (a block's, or a hybrid's state) is
// answered with an engine failure instead when `fail_copies_out` (nothing of it runs; the rows
// its sequences have in later plans read garbage and are not checked: they fail).
// after_result runs after each result (a client submitting more); also_run runs each plan
// that dev runs (another model of the device: a hybrid's state rows). Returns whether a step
// failed.
inline bool run_steps(actors::scheduler_core& core, kv_device& dev, core_events& ev,
                      bool fail_copies_out, const std::function<void()>& after_result = {},
                      disk_model* disk = nullptr,
                      const std::function<void(const msg::step_plan&)>& also_run = {}) {
  std::vector<actors::outgoing_event> out;
  std::deque<msg::step_result> flights;
  std::deque<std::uint64_t> copies;  // batches on the copy stream, oldest first
  bool failed = false;
  for (int steps = 0; steps < 20000; ++steps) {
    while (auto p = core.plan(out)) {
      ev.take(out);
      core.check_invariants();
      bool copies_out = false;
      for (const auto& c : p->block_copies) copies_out |= c.to_host;
      for (const auto& c : p->state_copies) copies_out |= c.to_host;  // a hybrid's state
      if (fail_copies_out && copies_out && !failed) {
        failed = true;
        dev.tables.on_plan(*p, core);
        for (const auto& row : p->rows) dev.doomed.insert(row.seq);
        msg::step_result r;
        r.step = p->step;
        r.error = msg::error_code::engine_failure;
        r.message = "injected";
        flights.push_back(r);
        // Its copy batch never launched: the engine answers copies_wait failed.
        if (p->copy_batch != 0) core.on_copies_done({p->copy_batch, false, "step failed"});
        core.check_invariants();
        continue;
      }
      dev.run(*p, core);
      if (also_run) also_run(*p);
      if (p->copy_batch != 0) copies.push_back(p->copy_batch);
      flights.push_back(fake_engine(*p));
    }
    if (disk) disk->take(core, dev);
    if (flights.empty() && copies.empty() && (!disk || disk->pending.empty())) break;
    if (!flights.empty()) {
      core.on_result(std::move(flights.front()), out);
      flights.pop_front();
      ev.take(out);
      core.check_invariants();
    }
    if (!copies.empty()) {
      core.on_copies_done(dev.finish_copies(copies.front()));
      copies.pop_front();
      core.check_invariants();
    }
    if (disk && !disk->pending.empty()) {
      core.on_disk_done(disk->answer_one(dev));
      core.check_invariants();
      disk->take(core, dev);
    }
    if (after_result) after_result();
  }
  return failed;
}

}  // namespace courier::test
