#include "bitparity/distributed/resume_parity.hpp"

#include <filesystem>
#include <random>

#include "bitparity/distributed/unsharded_optimizer.hpp"

namespace bitparity::distributed {

namespace {

// The groups in effect after `steps` steps (a regroup at or before them has happened).
ShardedConfig config_after(const ShardedConfig& config, int steps) {
  ShardedConfig after = config;
  if (config.regroup_step != 0 && config.regroup_step <= steps) {
    after.groups = config.regrouped;
    after.regroup_step = 0;
  }
  return after;
}

}  // namespace

ResumeCase draw_resume_case(std::uint64_t seed, int size, int steps_after) {
  std::mt19937_64 random(seed ^ 0xC2B2AE3D27D4EB4Full);
  ResumeCase c;
  c.save_world = 1 + static_cast<int>(random() % static_cast<std::uint64_t>(size));
  c.load_world = 1 + static_cast<int>(random() % static_cast<std::uint64_t>(size));
  c.steps_before = 1 + static_cast<int>(random() % 3);
  c.steps_after = steps_after;
  return c;
}

ResumeTally run_resume_parity(const ShardedConfig& config, const ResumeCase& resume, MpiWorld& world,
                              fixtures::Implementation& before, fixtures::Implementation& after, const std::string& folder,
                              CheckpointFault fault) {
  Communicator& everyone = world.mpi_communicator();
  const int rank = everyone.rank();
  ResumeTally tally;
  tally.from_rank_shards = resume.save_world == resume.load_world;
  std::string refusal, not_written;
  UnshardedOptimizer unsharded(config);
  for (std::int64_t step = 1; step <= resume.steps_before; ++step) unsharded.step(step);
  set_activity("P11: saving on " + std::to_string(resume.save_world) + " ranks");
  if (auto saving = world.first_ranks(resume.save_world)) {
    try {
      ShardedOptimizer sharded(config, *saving, before);
      for (std::int64_t step = 1; step <= resume.steps_before; ++step) sharded.step(step);
      save_checkpoint(sharded, folder, fault);
    } catch (const fixtures::WriteFailure& e) {
      not_written = e.what();
    } catch (const std::exception& e) {
      refusal = std::string("saving on ") + std::to_string(resume.save_world) + " ranks: " + e.what();
    }
  }
  if (everyone.all_reduce_any(!not_written.empty())) throw CheckpointNotWritten(not_written, !not_written.empty());
  if (everyone.all_reduce_any(!refusal.empty())) {  // nothing to load: the case counts as refused
    tally.refused = everyone.all_reduce_sum(refusal.empty() ? 0 : 1);
    tally.parity.first_wrong = refusal;
    return tally;
  }
  set_activity("P11: resuming on " + std::to_string(resume.load_world) + " ranks");
  if (auto loading = world.first_ranks(resume.load_world)) {
    try {
      // A fresh optimizer knows only its own maps: the checkpoint's come with the states it loads.
      ShardedConfig fresh = config_after(config, resume.steps_before);
      fresh.maps = {};
      ShardedOptimizer sharded(fresh, *loading, after);
      if (tally.from_rank_shards) {
        load_rank_checkpoint(sharded, folder, fault);
      } else {
        load_universal_checkpoint(sharded, folder, fault);
      }
      for (std::int64_t step = resume.steps_before + 1; step <= resume.steps_before + resume.steps_after; ++step) {
        sharded.step(step);
        unsharded.step(step);
        compare_gathered(sharded, unsharded, rank, step, tally.parity);
        for (const auto& group : sharded.groups()) compare_owned(sharded.config(), group, unsharded, rank, step, tally.parity);
      }
    } catch (const std::exception& e) {
      refusal = std::string("resuming on ") + std::to_string(resume.load_world) + " ranks: " + e.what();
    }
  }
  set_activity("P11: summing the wrong elements of every rank");
  ResumeTally total = tally;
  total.refused = everyone.all_reduce_sum(refusal.empty() ? 0 : 1);
  if (!refusal.empty()) total.parity.first_wrong = refusal;
  total.parity.wrong_parameters = everyone.all_reduce_sum(tally.parity.wrong_parameters);
  total.parity.wrong_gradients = everyone.all_reduce_sum(tally.parity.wrong_gradients);
  total.parity.wrong_states = everyone.all_reduce_sum(tally.parity.wrong_states);
  total.parity.checked = everyone.all_reduce_sum(tally.parity.checked);
  return total;
}

}  // namespace bitparity::distributed
