// `bitparity sharded --benchmark`: per P6 row, the sharded step's phases on the slowest rank against
// the unsharded step of the same parameters, both measured in this run on these ranks. The figure
// that matters is the ratio; absolute times depend on the machine and on W against its cores.
#include <csignal>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "bitparity/distributed/sharded_benchmark.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"
#include "rank_signal.hpp"
#include "sharded_plan.hpp"

namespace bitparity::reports {

namespace {

nlohmann::json phases_json(const distributed::StepPhaseSeconds& phases) {
  return {{"reduce_ms", phases.reduce * 1e3}, {"step_ms", phases.step * 1e3}, {"gather_ms", phases.gather * 1e3},
          {"total_ms", phases.total() * 1e3}};
}

}  // namespace

int run_sharded_benchmark_rows(const ShardedCommand& command, const ShardedPlan& plan, distributed::MpiWorld& world) {
  std::unique_ptr<fixtures::Implementation> implementation;
  if (const int code = prepare_rank(plan, world, implementation); code != exit_passed) return code;
  const int size = world.size();
  const std::vector<std::string> ranks = rank_implementations(plan, size);
  const bool lead = world.rank() == 0;
  if (lead) {
    std::printf("bitparity sharded --benchmark: world of %d rank%s (%s) over %s, %d timed step%s per row after one warm-up; "
                "medians of the slowest rank, in ms\n",
                size, size == 1 ? "" : "s", ranks_summary(ranks).c_str(), communicator_name(plan.communicator), command.steps,
                command.steps == 1 ? "" : "s");
    std::printf("%-9s %-6s %-5s %-14s %9s | %-21s | %-29s | %6s\n", "optimizer", "states", "dtype", "layout", "elements",
                "unsharded reduce step", "sharded reduce  step gather", "ratio");
    std::fflush(stdout);
  }
  nlohmann::json results = nlohmann::json::array();
  std::size_t rows_run = 0;
  bool stopped = false;  // by SIGINT or SIGTERM, on this rank or another
  for (const ShardedRowPlan& p : plan.rows) {
    // Every rank stops before the same row, as `sharded` does: a signal may reach one rank only.
    if (signal_on_any_rank(world.communicator()) != 0) {
      stopped = true;
      break;
    }
    ++rows_run;
    const bool eight_bit = p.family == fixtures::OperationFamily::optimizer8_step;
    distributed::set_activity("benchmark " + p.target() + " " + p.layout_name());
    const auto result = distributed::run_sharded_benchmark(p.kind, eight_bit, p.dtype, p.layout, command.elements,
                                                           command.steps, world.communicator(), *implementation);
    if (lead) {
      std::printf("%-9s %-6s %-5s %-14s %9lld | %9.2f %11.2f | %7.2f %6.2f %6.2f %6s | %6.3f\n", p.target().c_str(),
                  eight_bit ? "8-bit" : "fp32", dtype_name(p.dtype), p.layout_name().c_str(),
                  static_cast<long long>(result.elements), result.unsharded.reduce * 1e3, result.unsharded.step * 1e3,
                  result.sharded.reduce * 1e3, result.sharded.step * 1e3, result.sharded.gather * 1e3, "",
                  result.ratio());
      std::fflush(stdout);
      results.push_back({{"optimizer", p.target()},
                         {"states", eight_bit ? "8-bit" : "fp32"},
                         {"dtype", dtype_name(p.dtype)},
                         {"layout", p.layout_name()},
                         {"elements", result.elements},
                         {"steps", result.steps},
                         {"unsharded", phases_json(result.unsharded)},
                         {"sharded", phases_json(result.sharded)},
                         {"ratio", result.ratio()}});
    }
  }
  world.communicator().barrier();
  const std::string stop_reason = stop_reason_over_ranks();
  if (lead) {
    // The file first: after its own signal mpirun ends the ranks about a second later.
    std::string written;
    if (!command.json.empty()) {
      nlohmann::json document = {{"schema", "bitparity.sharded-benchmark/1"},
                                 {"bitparity", version_string()},
                                 {"world_size", size},
                                 {"communicator", communicator_name(plan.communicator)},
                                 {"ranks", ranks},
                                 {"complete", !stopped},
                                 {"results", results}};
      if (stopped) document["interrupted"] = stop_reason;
      written = write_results_document(command.json, document);
    }
    std::printf("ratio: sharded step (slowest rank) / unsharded step of the same parameters; the unsharded step reduces "
                "all %d microbatches on one rank\n", size);
    if (stopped) {
      std::printf("interrupted by %s: %zu rows not run\n", stop_reason.c_str(), plan.rows.size() - rows_run);
    }
    if (!written.empty()) std::printf("results: %s\n", printable_text(written).c_str());
    std::fflush(stdout);
  }
  // Interrupted: 128 + the signal, on every rank, wherever it arrived.
  if (stopped) return stopped_exit_code_over_ranks();
  return exit_passed;
}

}  // namespace bitparity::reports
