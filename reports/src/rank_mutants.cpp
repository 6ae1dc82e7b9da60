#include "rank_mutants.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"
#include "rank_runs.hpp"
#include "shell_words.hpp"

#if BITPARITY_HAS_MPI
#include "bitparity/distributed/checkpoint.hpp"
#include "bitparity/distributed/quant_storage.hpp"
#include "bitparity/distributed/sharded_optimizer.hpp"
#endif

namespace bitparity::reports {

namespace {

#if BITPARITY_HAS_MPI
std::vector<RankMutant> build_catalogue() {
  std::vector<RankMutant> catalogue;
  // A driver fault reaches P6 and P11 (which steps through the driver before and after resuming).
  for (auto fault : distributed::kDriverFaults) {
    catalogue.push_back({std::string(distributed::fault_name(fault)), std::string(distributed::fault_description(fault)), "P6",
                         {"P6", "P11"}, {}, ""});
  }
  for (auto fault : distributed::kStorageFaults) {
    catalogue.push_back({std::string(distributed::storage_fault_name(fault)),
                         std::string(distributed::storage_fault_description(fault)), "P10", {"P10"}, {}, ""});
  }
  for (auto fault : distributed::kCheckpointFaults) {
    RankMutant mutant{std::string(distributed::checkpoint_fault_name(fault)),
                      std::string(distributed::checkpoint_fault_description(fault)), "P11", {"P11"}, {}, ""};
    // With the optimizers' own maps the loader's maps are the checkpoint's: other maps show it.
    if (fault == distributed::kMapsFault) mutant.options = {"--map", "dynamic8-signed-fused", "--map", "dynamic8-unsigned-fused"};
    catalogue.push_back(mutant);
  }
  const auto placement = distributed::kDevicePlacementFault;
  catalogue.push_back({std::string(distributed::checkpoint_fault_name(placement)),
                       std::string(distributed::checkpoint_fault_description(placement)), "P11", {"P11"}, {},
                       "its states stay on the host in the sharded driver; the device-placement test kills it on a GPU "
                       "(ctest -R DevicePlacement)"});
  return catalogue;
}
#else
std::vector<RankMutant> build_catalogue() { return {}; }
#endif


}  // namespace

const std::vector<RankMutant>& rank_mutant_catalogue() {
  static const std::vector<RankMutant> catalogue = build_catalogue();
  return catalogue;
}

const RankMutant* find_rank_mutant(const std::string& name) {
  const auto& catalogue = rank_mutant_catalogue();
  const auto found = std::find_if(catalogue.begin(), catalogue.end(), [&](const RankMutant& m) { return m.name == name; });
  return found == catalogue.end() ? nullptr : &*found;
}

RankHunt hunt_over_ranks(const RankMutant& mutant, const std::string& launcher, const std::string& folder,
                         double budget_seconds, std::uint64_t seed) {
  RankHunt hunt;
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(budget_seconds));
  // The first round is the least evidence a hunt can give, so a budget shorter than it (a loaded
  // machine, 3 ranks on 2 cores) does not cut it: it may run ten budgets, up to kFirstRoundLimit
  // (never less than the budget), and the ranks' own watchdog (sharded --stuck-seconds) ends a hang.
  const double first_round_seconds =
      std::max(budget_seconds, std::min(10 * budget_seconds, std::chrono::duration<double>(kFirstRoundLimit).count()));
  const auto first_round_deadline =
      start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(first_round_seconds));
  const std::string rows_file = folder + "/rows.json", output = folder + "/output.txt";
  auto finish = [&]() -> RankHunt {
    hunt.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return hunt;
  };
  // The first failing row names the kill; a failing row of a property the fault cannot reach makes
  // it a harness error.
  auto judge = [&](const nlohmann::json& results) {
    for (const auto& row : results) {
      if (row.at("wrong_elements").get<std::int64_t>() == 0) continue;
      const std::string property = row.at("property").get<std::string>();
      const bool reached = std::find(mutant.alters.begin(), mutant.alters.end(), property) != mutant.alters.end();
      if (hunt.property.empty() || (!reached && !hunt.harness_error)) {
        hunt.property = property;
        hunt.target = row.at("entry").get<std::string>() + " " + row.at("target").get<std::string>() + "/" +
                      row.at("dtype").get<std::string>() + " " + row.at("layout").get<std::string>() + " on " +
                      std::to_string(row.at("world_size").get<int>()) + " ranks";
        hunt.counterexample = row.value("counterexample", std::string());
        hunt.harness_error = !reached;
      }
    }
    hunt.killed = !hunt.harness_error && !hunt.property.empty();
  };
  for (std::uint64_t round_seed = seed;; ++round_seed) {
    if (hunt.rounds > 0 && std::chrono::steady_clock::now() >= deadline) return finish();
    std::vector<std::string> hunt_options = {"sharded", "--mutant", mutant.name, "--seed", std::to_string(round_seed)};
    hunt_options.insert(hunt_options.end(), mutant.options.begin(), mutant.options.end());
    hunt.replay = "mpirun -np " + std::to_string(kRankMutantWorld) + " " + shell_word(program_name()) + " " + shell_words(hunt_options);
    std::vector<std::string> args = hunt_options;
    args.insert(args.end(), {"--json", rows_file});
    std::filesystem::remove(rows_file);
    ++hunt.rounds;
    const RankRun round = run_over_ranks(launcher, kRankMutantWorld, args, output, hunt.rounds == 1 ? first_round_deadline : deadline);
    if (round.exit_code < 0) {
      if (interrupted()) {
        hunt.stopped = true;
      } else if (!round.failure.empty()) {
        hunt.harness_error = true;
        hunt.counterexample = round.failure;
      } else {
        // Stopped at its deadline: the rows it finished before the stop still count.
        const RankRows rows = read_rank_rows(rows_file, round, output);
        if (rows.broken.empty()) judge(rows.results);
        if (!hunt.killed && !hunt.harness_error && hunt.rounds == 1) {
          hunt.harness_error = true;
          hunt.counterexample = "the first run over ranks was stopped after " + format_duration(first_round_seconds) +
                                " without a failing row (hung, or slower than ten budgets): nothing was proven; raise --seconds, "
                                "or see why it stalls with `" + hunt.replay + "`";
        }
      }
      return finish();
    }
    const RankRows rows = read_rank_rows(rows_file, round, output);
    if (!rows.broken.empty()) {
      hunt.harness_error = true;
      hunt.counterexample = rows.broken;
      return finish();
    }
    judge(rows.results);
    if (hunt.harness_error || hunt.killed) return finish();
    if (round.exit_code != 1) {  // a survived round exits 1; anything else broke
      hunt.harness_error = true;
      hunt.counterexample = "the run over ranks ended with exit " + std::to_string(round.exit_code) + ": " + what_the_run_said(output);
      return finish();
    }
  }
}

}  // namespace bitparity::reports
