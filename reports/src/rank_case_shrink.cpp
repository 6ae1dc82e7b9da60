#include "rank_case_shrink.hpp"

#include <memory>

#include "bitparity/fixtures/atomic_file.hpp"
#include "bitparity/reports/interrupt.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/gathered_case.hpp"
#include "bitparity/distributed/sharded_case.hpp"
#include "bitparity/distributed/storage_case.hpp"
#endif

namespace bitparity::reports {

#if BITPARITY_HAS_MPI
namespace {

// The size of a case as people read it: ranks, steps, microbatches, groups, parameters, elements
// (P10: storage elements and bytes, adapter elements).
nlohmann::json size_of(const RankCase& saved) {
  if (saved.storage_inputs) {
    const distributed::StorageCase& c = *saved.storage_inputs;
    return {{"world_size", saved.world_size}, {"storage_elements", c.weight.rows * c.weight.columns},
            {"columns", c.weight.columns}, {"codes", c.weight.numel}, {"adapter_elements", c.adapter.adapter.size()}};
  }
  if (saved.gathered_inputs) {
    const distributed::GatheredCase& c = *saved.gathered_inputs;
    return {{"world_size", saved.world_size}, {"steps", c.steps()}, {"dimensions", c.sizes.size()}, {"elements", c.numel()},
            {"pieces", c.pieces}, {"blocksize", c.blocksize}};
  }
  const distributed::ShardedCase& c = *saved.inputs;
  std::int64_t parameters = 0, elements = 0;
  for (const auto& group : c.config.groups) {
    for (const auto& p : group.parameters) ++parameters, elements += p.numel;
  }
  return {{"world_size", saved.world_size}, {"steps", c.total_steps()},
          {"microbatches", c.config.microbatches}, {"groups", c.config.groups.size()},
          {"parameters", parameters}, {"elements", elements}, {"regrouped", c.config.regroup_step != 0}};
}

bool allowance_left(int runs, const ShrinkAllowance& allowance) {
  return runs < allowance.runs && std::chrono::steady_clock::now() < allowance.deadline && !interrupted();
}

// Runs `trial` from its own file; whether its row failed, and its finding.
RankReplay run_trial(RankCase& trial, const std::string& launcher, const std::string& folder, const ShrinkAllowance& allowance) {
  trial.file = folder + "/candidate-case.json";
  fixtures::write_file_atomically(trial.file, rank_case_document(trial, nullptr).dump() + "\n");
  return replay_rank_case(trial, trial.implementation, launcher, folder, allowance.deadline);
}

struct Candidate {
  RankCase trial;
  std::string change;
  bool simplifies_values = false;
};

// The cases one step smaller than `current`.
std::vector<Candidate> smaller_rank_cases(const RankCase& current) {
  std::vector<Candidate> out;
  if (current.storage_inputs) {
    for (auto& smaller : distributed::smaller_storage_cases(*current.storage_inputs, current.world_size)) {
      RankCase trial = current;
      trial.storage_inputs = std::make_shared<const distributed::StorageCase>(std::move(smaller.smaller));
      trial.world_size = smaller.world;
      out.push_back({std::move(trial), std::move(smaller.change), smaller.simplifies_values});
    }
    return out;
  }
  if (current.gathered_inputs) {
    for (auto& smaller : distributed::smaller_gathered_cases(*current.gathered_inputs, current.world_size)) {
      RankCase trial = current;
      trial.gathered_inputs = std::make_shared<const distributed::GatheredCase>(std::move(smaller.smaller));
      trial.world_size = smaller.world;
      out.push_back({std::move(trial), std::move(smaller.change), smaller.simplifies_values});
    }
    return out;
  }
  for (auto& smaller : distributed::smaller_cases(*current.inputs, current.world_size)) {
    RankCase trial = current;
    trial.inputs = std::make_shared<const distributed::ShardedCase>(std::move(smaller.smaller));
    trial.world_size = smaller.world;
    out.push_back({std::move(trial), std::move(smaller.change), smaller.simplifies_values});
  }
  return out;
}

}  // namespace

RankCase shrink_rank_case(const RankCase& found, const std::string& launcher, const std::string& folder, const ShrinkAllowance& allowance) {
  if (!found.carries_inputs()) return found;
  RankCase current = found;
  nlohmann::json record = {{"from", size_of(found)}};
  int runs = 1;
  const RankReplay first = run_trial(current, launcher, folder, allowance);
  if (!first.failed) {
    // Drawn again from its seed and recorded, the case should fail as the row did: when it does not,
    // it is kept in the form that reproduces it (its seeds), and the record says why.
    current.inputs = nullptr;
    current.storage_inputs = nullptr;
    current.gathered_inputs = nullptr;
    current.shrinking = {{"not_shrunk", first.broken.empty() ? "its recorded inputs passed when run again"
                                                             : "its recorded inputs did not run: " + first.broken}};
    return current;
  }
  current.violation = first.violation;
  std::vector<std::string> kept;
  // First the case is made smaller, then its values simpler, each until a whole pass over its
  // candidates finds none that still fails (or the allowance ends). Values come last: a run over
  // ranks each, they would otherwise be tried again after every cut.
  bool complete = false, values_complete = false;
  for (const bool values : {false, true}) {
    bool done = false;
    while (!done && allowance_left(runs, allowance)) {
      bool kept_one = false, cut_short = false;
      for (Candidate& candidate : smaller_rank_cases(current)) {
        if (candidate.simplifies_values != values) continue;
        if (!allowance_left(runs, allowance)) {
          cut_short = true;
          break;
        }
        RankCase& trial = candidate.trial;
        ++runs;
        const RankReplay replay = run_trial(trial, launcher, folder, allowance);
        if (!replay.failed) continue;
        trial.violation = replay.violation;
        current = std::move(trial);
        kept.push_back(candidate.change);
        kept_one = true;
        break;
      }
      done = !kept_one && !cut_short;
    }
    (values ? values_complete : complete) = done;
  }
  record["to"] = size_of(current);
  record["runs"] = runs;
  record["kept"] = kept;
  record["complete"] = complete;                // false: it ended before the case was smallest
  record["values_complete"] = values_complete;  // false: ... before its values were simplest
  // What ended an unfinished shrink: the allowance, or a signal that stops the whole run.
  if (!complete || !values_complete) record["ended_by"] = interrupted() ? std::string(interrupt_name()) : std::string("allowance");
  current.shrinking = record;
  current.file.clear();
  return current;
}

#else
RankCase shrink_rank_case(const RankCase& found, const std::string&, const std::string&, const ShrinkAllowance&) { return found; }
#endif

}  // namespace bitparity::reports
