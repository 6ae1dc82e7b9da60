// The rows of `bitparity sharded` over real ranks: P6 (rank parity and seed 002) and P2r (seed 000).
// Wrong elements are counted on each rank and summed across ranks; rank 0 prints the table and
// writes the JSON document.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "bitparity/distributed/gathered_layout.hpp"
#include "bitparity/distributed/rank_parity.hpp"
#include "bitparity/distributed/resume_parity.hpp"
#include "bitparity/distributed/storage_parity.hpp"
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/code_map_file.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"
#include "rank_signal.hpp"
#include "shell_words.hpp"
#include "sharded_plan.hpp"
#include "temporary_folder.hpp"

namespace bitparity::reports {

namespace {

struct ShardedRow {
  const ShardedRowPlan* plan = nullptr;
  int cases = 0;
  std::int64_t checked = 0, wrong_parameters = 0, wrong_gradients = 0, wrong_states = 0;  // P6
  std::int64_t wrong_elements = 0, refused = 0, disagreeing_ranks = 0;                  // P2r (P10: dequantized)
  std::int64_t wrong_adapter = 0;                                                       // P10 with a grad dtype
  std::int64_t wrong_bytes = 0;                                                          // P10: storage and absmax
  std::vector<distributed::ResumeCase> resumes;
  std::int64_t refused_resumes = 0;  // P11: a save or load of a correct checkpoint refused
  int steps = 0;               // P6: steps per case (P11: after resuming)
  std::string counterexample;  // the lowest rank's first finding
  nlohmann::json failing_case;  // the seed (P11: and resume) of the first case that failed
  bool cut = false;             // a signal stopped it before its last case
  std::int64_t wrong() const {
    return wrong_parameters + wrong_gradients + wrong_states + wrong_elements + wrong_adapter + disagreeing_ranks + wrong_bytes +
           refused_resumes;
  }
};

void fail_on_purpose(const Injected& injected) {
  distributed::set_activity(distributed::current_activity() + " (failure injected: " + injected.how + ")");
  if (injected.how == "throw") throw Error(ErrorCode::invalid_argument, "injected failure");
  std::fprintf(stderr, "rank %d: injected %s during %s\n", injected.rank, injected.how.c_str(),
               distributed::current_activity().c_str());
  std::fflush(stderr);
  if (injected.how == "abort") std::abort();
  if (injected.how == "kill") std::raise(SIGKILL);
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));  // hang: the watchdog of a peer reports it
}

// The first finding of the lowest rank that has one, on every rank.
std::string lowest_rank_finding(distributed::Communicator& communicator, const std::string& mine) {
  const int size = communicator.size();
  std::vector<std::int64_t> lengths(static_cast<std::size_t>(size));
  const std::int64_t length = static_cast<std::int64_t>(mine.size());
  communicator.all_gather(&length, sizeof length, lengths.data());
  for (int r = 0; r < size; ++r) {
    if (lengths[static_cast<std::size_t>(r)] == 0) continue;
    std::string text(static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]), '\0');
    if (r == communicator.rank()) text = mine;
    communicator.broadcast(text.data(), text.size(), r);
    return text;
  }
  return {};
}

// The options of `sharded` that run this row again alone: the same seed and cases give the same
// cases (case_seed does not depend on the selection) on the same build.
std::vector<std::string> replay_arguments(const ShardedRow& row, const ShardedCommand& command, const ShardedPlan& plan) {
  const ShardedRowPlan& p = *row.plan;
  std::vector<std::string> args = {"sharded"};
  const auto add = [&args](std::initializer_list<std::string> words) { args.insert(args.end(), words); };
  if (!plan.case_file.empty()) {
    add({"--case", plan.case_file});
  } else {
    add({"--property", p.property});
  }
  if (!plan.case_file.empty()) {
  } else if (p.property == "P10") {
    add({"--format", std::string(quant_format_info(p.format).name), "--storage", dtype_name(p.storage), "--grad-dtype",
         p.grad ? dtype_name(*p.grad) : "none"});
  } else if (p.family == fixtures::OperationFamily::quantize || p.family == fixtures::OperationFamily::dequantize) {
    add({"--format", p.target()});
  } else if (p.family != fixtures::OperationFamily::convert) {
    add({"--optimizer", p.target(), "--states", p.family == fixtures::OperationFamily::optimizer8_step ? "8" : "32"});
  }
  if (plan.case_file.empty()) {
    add({"--dtype", dtype_name(p.dtype), "--layout", p.layout_name()});
    if (p.property == "P6" || p.property == "P11") add({"--steps", std::to_string(command.steps)});
    if (p.property == "P11" && command.all_world_pairs) add({"--all-world-pairs"});
    add({"--cases", std::to_string(command.cases), "--seed", std::to_string(command.seed)});
  }
  if (p.property == "P11" && !plan.resume_implementation.empty()) add({"--resume-implementation", plan.resume_implementation});
  if (plan.implementation != "cpu") add({"--implementation", plan.implementation});
  if (plan.communicator != distributed::CommunicatorKind::mpi) add({"--communicator", communicator_name(plan.communicator)});
  for (const auto& [rank, name] : plan.rank_implementations) add({"--rank-implementation", std::to_string(rank) + "=" + name});
  if (p.family == fixtures::OperationFamily::optimizer8_step && (p.property == "P6" || p.property == "P11")) {
    for (const auto& spec : command.maps) add({"--map", spec});
  }
  if (!command.mutant.empty()) add({"--mutant", command.mutant});
  return args;
}

std::string replay_command(const ShardedRow& row, const ShardedCommand& command, const ShardedPlan& plan, int world) {
  return "mpirun -np " + std::to_string(world) + " " + shell_word(program_name()) + " " + shell_words(replay_arguments(row, command, plan));
}

}  // namespace

std::vector<std::string> rank_implementations(const ShardedPlan& plan, int world) {
  std::vector<std::string> names;
  for (int r = 0; r < world; ++r) names.push_back(plan.implementation_of(r));
  return names;
}

std::string ranks_summary(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size();) {
    std::size_t j = i;
    while (j < names.size() && names[j] == names[i]) ++j;
    text += (text.empty() ? "" : ", ") + names[i] + (j - i > 1 ? " x" + std::to_string(j - i) : "");
    i = j;
  }
  return text;
}

namespace {

nlohmann::json row_json(const ShardedRow& row, const ShardedCommand& command, const ShardedPlan& plan,
                        const std::vector<std::string>& ranks) {
  const ShardedRowPlan& p = *row.plan;
  nlohmann::json entry = {{"property", p.property},   {"entry", p.entry()},
                          {"target", p.target()},     {"dtype", dtype_name(p.dtype)},
                          {"layout", p.layout_name()}, {"world_size", ranks.size()},
                          {"ranks", ranks},           {"cases", row.cases},
                          {"elements", row.checked},  {"wrong_elements", row.wrong()}};
  if (row.cut) entry["incomplete"] = "stopped by a signal after " + std::to_string(row.cases) + " of " + std::to_string(command.cases) + " cases";
  if (p.property == "P6" || p.property == "P11") {
    entry["steps"] = row.steps;
    entry["wrong_parameters"] = row.wrong_parameters;
    entry["wrong_gradients"] = row.wrong_gradients;
    entry["wrong_states"] = row.wrong_states;
    if (p.family == fixtures::OperationFamily::optimizer8_step) {
      nlohmann::json maps = nlohmann::json::object();
      for (int k = 0; k < optimizer_info(p.kind).states; ++k) {
        maps[std::string(optimizer_info(p.kind).state_specs[static_cast<std::size_t>(k)].name)] =
            quant_format_info(state8_map(p.kind, k, plan.maps.of_state(p.kind, k))).name;
      }
      entry["state_maps"] = maps;
    }
  }
  if (p.property == "P11") {
    nlohmann::json resumes = nlohmann::json::array();
    for (const auto& c : row.resumes) {
      resumes.push_back({{"save_world", c.save_world}, {"load_world", c.load_world}, {"steps_before", c.steps_before},
                         {"steps_after", c.steps_after}, {"loaded_from", c.save_world == c.load_world ? "rank shards" : "universal"}});
    }
    entry["resumes"] = resumes;
    entry["refused_resumes"] = row.refused_resumes;
    entry["implementation_after_resume"] = plan.resume_implementation.empty() ? "same" : plan.resume_implementation;
  } else if (p.property == "P6") {
  } else if (p.property == "P10") {
    entry["storage"] = dtype_name(p.storage);
    entry["grad_dtype"] = p.grad ? dtype_name(*p.grad) : "none";
    entry["wrong_bytes"] = row.wrong_bytes;
    entry["wrong_dequantized"] = row.wrong_elements;
    entry["wrong_adapter"] = row.wrong_adapter;
  } else {
    entry["refused_views"] = row.refused;
    entry["disagreeing_ranks"] = row.disagreeing_ranks;
  }
  if (row.wrong() > 0) {
    entry["counterexample"] = row.counterexample;
    entry["replay"] = replay_command(row, command, plan, static_cast<int>(ranks.size()));
    entry["replay_arguments"] = replay_arguments(row, command, plan);
    if (!row.failing_case.is_null()) entry["failing_case"] = row.failing_case;
  }
  return entry;
}

struct Implementations {
  fixtures::Implementation* before = nullptr;  // every property's
  fixtures::Implementation* after = nullptr;   // P11 after loading
  std::string checkpoint_dir;                  // P11: each case uses a folder of its own below it
};

ShardedRow run_row(const ShardedRowPlan& p, const ShardedCommand& command, const ShardedPlan& plan,
                   distributed::MpiWorld& world, const Implementations& implementations, std::int64_t& case_number) {
  fixtures::Implementation& implementation = *implementations.before;
  ShardedRow row;
  row.plan = &p;
  const distributed::ShardedCase* saved = plan.saved_case.get();
  row.steps = saved ? (saved->resume ? saved->resume->steps_after : saved->steps) : command.steps;
  std::string first;
  for (int c = 0; c < command.cases; ++c, ++case_number) {
    // A row of many cases outlasts mpirun's patience after its SIGTERM (it kills the ranks about a
    // second later): every rank asks before each case, so they stop together with the cases done.
    if (c > 0 && signal_on_any_rank(world.communicator()) != 0) {
      row.cut = true;
      break;
    }
    const std::uint64_t seed = p.case_seed(command.seed, c);
    distributed::set_activity("case " + std::to_string(case_number) + " (" + p.property + " " + p.entry() + " " + p.target() + ")");
    if (plan.injected.rank == world.rank() && plan.injected.step == case_number) fail_on_purpose(plan.injected);
    if (p.property == "P6") {
      distributed::ShardedConfig config = saved ? saved->config : distributed::draw_sharded_config(
          p.kind, p.family == fixtures::OperationFamily::optimizer8_step, p.dtype, p.layout, seed, world.size());
      config.fault = plan.fault;
      config.maps = plan.maps;
      const distributed::ParityTally tally = distributed::run_rank_parity(config, row.steps, world.communicator(), implementation);
      if (tally.wrong() > 0 && row.failing_case.is_null()) row.failing_case = {{"seed", std::to_string(seed)}};
      row.wrong_parameters += tally.wrong_parameters;
      row.wrong_gradients += tally.wrong_gradients;
      row.wrong_states += tally.wrong_states;
      row.checked += tally.checked;
      if (first.empty() && !tally.first_wrong.empty()) first = tally.first_wrong + (saved ? "" : " (case seed " + std::to_string(seed) + ")");
    } else if (p.property == "P11") {
      distributed::ShardedConfig config = saved ? saved->config : distributed::draw_sharded_config(
          p.kind, p.family == fixtures::OperationFamily::optimizer8_step, p.dtype, p.layout, seed, world.size());
      config.maps = plan.maps;
      std::vector<distributed::ResumeCase> resumes;
      if (saved) {
        resumes.push_back(*saved->resume);
      } else if (command.all_world_pairs) {
        for (int from = 1; from <= world.size(); ++from) {
          for (int to = 1; to <= world.size(); ++to) resumes.push_back({from, to, 1 + (from + to) % 3, command.steps});
        }
      } else {
        resumes.push_back(distributed::draw_resume_case(seed, world.size(), command.steps));
      }
      for (const distributed::ResumeCase& resume : resumes) {
        const std::string folder = (std::filesystem::path(implementations.checkpoint_dir) / ("case-" + std::to_string(case_number) + "-" +
                                    std::to_string(resume.save_world) + "-" + std::to_string(resume.load_world))).string();
        if (world.rank() == 0) std::filesystem::create_directories(folder);
        world.mpi_communicator().barrier();
        const distributed::ResumeTally tally = distributed::run_resume_parity(config, resume, world, *implementations.before,
                                                                              *implementations.after, folder, plan.checkpoint_fault);
        world.mpi_communicator().barrier();
        if (world.rank() == 0 && command.checkpoint_dir.empty()) std::filesystem::remove_all(folder);
        row.wrong_parameters += tally.parity.wrong_parameters;
        row.wrong_gradients += tally.parity.wrong_gradients;
        row.wrong_states += tally.parity.wrong_states;
        row.refused_resumes += tally.refused;
        row.checked += tally.parity.checked;
        row.resumes.push_back(resume);
        if (tally.wrong() > 0 && row.failing_case.is_null()) {
          row.failing_case = {{"seed", std::to_string(seed)},
                              {"resume", {{"save_world", resume.save_world}, {"load_world", resume.load_world},
                                          {"steps_before", resume.steps_before}, {"steps_after", resume.steps_after}}}};
        }
        if (first.empty() && !tally.parity.first_wrong.empty()) {
          first = tally.parity.first_wrong + " (W=" + std::to_string(resume.save_world) + " -> W'=" + std::to_string(resume.load_world) +
                  ", saved after step " + std::to_string(resume.steps_before) + (saved ? "" : ", case seed " + std::to_string(seed)) + ")";
        }
      }
    } else if (p.property == "P10") {
      const distributed::StorageTarget target{p.format, p.storage, p.dtype, p.storage_layout, p.grad};
      const distributed::StorageCase storage_case = plan.saved_storage_case ? *plan.saved_storage_case
                                                    : distributed::draw_storage_case(target, seed, world.size(), implementation);
      const distributed::StorageTally tally =
          distributed::run_storage_parity(storage_case, world.communicator(), implementation, plan.storage_fault);
      if (tally.wrong() > 0 && row.failing_case.is_null()) row.failing_case = {{"seed", std::to_string(seed)}};
      row.wrong_elements += tally.wrong_dequantized;
      row.wrong_adapter += tally.wrong_adapter;
      row.wrong_bytes += tally.wrong_bytes;
      row.checked += tally.checked;
      if (first.empty() && !tally.first_wrong.empty()) {
        first = tally.first_wrong + (plan.saved_storage_case ? "" : " (case seed " + std::to_string(seed) + ")");
      }
    } else {
      const distributed::GatheredTarget target{p.family, p.kind, p.format, p.dtype};
      const distributed::GatheredCase gathered_case = plan.saved_gathered_case ? *plan.saved_gathered_case
                                                      : distributed::draw_gathered_case(target, seed, world.size());
      const distributed::GatheredTally tally = distributed::run_gathered_layout(gathered_case, world.communicator(), implementation);
      if (tally.wrong + tally.disagreeing_ranks > 0 && row.failing_case.is_null()) row.failing_case = {{"seed", std::to_string(seed)}};
      row.wrong_elements += tally.wrong;
      row.refused += tally.refused;
      row.disagreeing_ranks += tally.disagreeing_ranks;
      row.checked += tally.checked;
      if (first.empty() && !tally.first_wrong.empty()) {
        first = tally.first_wrong + (plan.saved_gathered_case ? "" : " (case seed " + std::to_string(seed) + ")");
      }
    }
    ++row.cases;
  }
  if (row.wrong() > 0) row.counterexample = lowest_rank_finding(world.communicator(), first);
  return row;
}

// As `check` maps it: a device that is named but absent is bad input (exit 2), a CUDA or NCCL call that
// fails is a run error (exit 5). Exit 4 (a GPU required and none usable) is decided before any rank
// starts (`check --require-gpu`), so an absent cuda:7 beside a usable cuda:0 stays bad input.
int refusal_code_of(const Error& e) {
  return e.code() == ErrorCode::cuda_failure || e.code() == ErrorCode::implementation_fault ? exit_run_error : exit_bad_input;
}

// Every rank returns the same code: a run error on any rank outranks bad input.
int agreed_refusal_code(distributed::MpiWorld& world, int code) {
  return world.communicator().all_reduce_any(code == exit_run_error) ? exit_run_error : exit_bad_input;
}

// Each rank builds its implementation; a rank whose device is absent stops the run before any work.
std::unique_ptr<fixtures::Implementation> build_implementation(const std::string& name, distributed::MpiWorld& world,
                                                               int& refusal_code) {
  std::unique_ptr<fixtures::Implementation> implementation;
  std::string problem;
  int code = exit_passed;
  try {
    implementation = fixtures::make_implementation(name);
  } catch (const Error& e) {
    problem = e.what();
    code = refusal_code_of(e);
  }
  if (!world.communicator().all_reduce_any(!problem.empty())) return implementation;
  refusal_code = agreed_refusal_code(world, code);
  const std::string finding = lowest_rank_finding(world.communicator(), problem.empty() ? "" : "rank " + std::to_string(world.rank()) + ": " + problem);
  if (world.rank() == 0) print_error(finding);
  return implementation;
}

// The communicator the rows run on. NCCL ranks are GPU ranks, each on its own GPU; every rank learns
// of any refusal, and rank 0 prints it.
int choose_communicator(const ShardedPlan& plan, distributed::MpiWorld& world) {
  if (plan.communicator == distributed::CommunicatorKind::mpi) return exit_passed;
  if (plan.communicator == distributed::CommunicatorKind::mpi_integer_sum) {
    world.use_communicator(distributed::make_mpi_integer_sum_communicator());
    return exit_passed;
  }
  distributed::set_activity("starting NCCL");
  const fixtures::ImplementationId id = fixtures::parse_implementation_id(plan.implementation_of(world.rank()));
  std::string problem;
  int code = exit_passed;
  if (id.kind != fixtures::ImplementationKind::cuda) {
    problem = "rank " + std::to_string(world.rank()) + " runs " + id.str() +
              ", but NCCL ranks are GPU ranks: give every rank its own cuda:N (--implementation cuda:0 for one rank, "
              "--rank-implementation R=cuda:N for more) or use --communicator mpi";
    code = exit_bad_input;
  }
  const bool refused = world.communicator().all_reduce_any(!problem.empty());
  if (!refused) {
    try {  // the checks inside see every rank's GPU, so every rank refuses alike
      world.use_communicator(distributed::make_nccl_communicator(world.mpi_communicator(), id.device));
      return exit_passed;
    } catch (const Error& e) {
      problem = e.what();
      code = refusal_code_of(e);
    }
  }
  const std::string finding = lowest_rank_finding(world.communicator(), problem);
  if (world.rank() == 0) print_error(finding);
  return agreed_refusal_code(world, code);
}

// P11's default checkpoint folder: made by rank 0 when the first P11 row starts (a run that fails
// before leaves none), its name broadcast, removed when the run ends, however it ends.
std::string make_checkpoint_folder(distributed::MpiWorld& world, std::unique_ptr<TemporaryFolder>& folder) {
  std::string name;
  if (world.rank() == 0) {
    folder = std::make_unique<TemporaryFolder>("bitparity-checkpoints");
    name = folder->path();
  }
  std::int64_t length = static_cast<std::int64_t>(name.size());
  world.mpi_communicator().broadcast(&length, sizeof length, 0);
  name.resize(static_cast<std::size_t>(length));
  world.mpi_communicator().broadcast(name.data(), name.size(), 0);
  return name;
}

}  // namespace

int prepare_rank(const ShardedPlan& plan, distributed::MpiWorld& world, std::unique_ptr<fixtures::Implementation>& implementation) {
  if (const int code = choose_communicator(plan, world); code != exit_passed) return code;
  int refusal_code = exit_passed;
  implementation = build_implementation(plan.implementation_of(world.rank()), world, refusal_code);
  return refusal_code;
}

int run_sharded_rows(const ShardedCommand& command, const ShardedPlan& plan, distributed::MpiWorld& world) {
  const int rank = world.rank(), size = world.size();
  std::unique_ptr<fixtures::Implementation> implementation;
  if (const int code = prepare_rank(plan, world, implementation); code != exit_passed) return code;
  // Every implementation is made before the header: an absent resume device is refused up front.
  Implementations implementations{implementation.get(), implementation.get(), command.checkpoint_dir};
  std::unique_ptr<fixtures::Implementation> resumed;
  const bool has_p11 = std::any_of(plan.rows.begin(), plan.rows.end(), [](const ShardedRowPlan& row) { return row.property == "P11"; });
  if (has_p11 && !plan.resume_implementation.empty()) {
    int refusal_code = exit_passed;
    resumed = build_implementation(plan.resume_implementation, world, refusal_code);
    if (refusal_code != exit_passed) return refusal_code;
    implementations.after = resumed.get();
  }
  const std::vector<std::string> ranks = rank_implementations(plan, size);
  const bool lead = rank == 0;
  if (lead) {
    const std::string maps = describe_state_maps(plan.maps);
    const std::string cases = !plan.case_file.empty() ? "the saved case " + plan.case_file
                                              : "seed " + std::to_string(command.seed) + ", " + std::to_string(command.steps) + " step" +
                                                    (command.steps == 1 ? "" : "s") + " per P6 case";
    std::printf("bitparity sharded: world of %d rank%s (%s) over %s, %s%s%s\n", size, size == 1 ? "" : "s",
                ranks_summary(ranks).c_str(), communicator_name(plan.communicator), cases.c_str(),
                plan.hunted_mutant.empty() ? "" : (", mutant " + plan.hunted_mutant).c_str(),
                maps.empty() ? "" : (", 8-bit states take " + maps).c_str());
    std::printf("%-4s %-10s %-17s %-5s %-16s %5s %5s %10s %8s %8s %8s %8s\n", "prop", "entry", "target", "dtype", "layout", "ranks",
                "cases", "elements", "wrong p", "wrong g", "wrong s", "other");
    std::fflush(stdout);
  }
  std::unique_ptr<TemporaryFolder> checkpoint_folder;
  std::vector<ShardedRow> rows;
  std::int64_t case_number = 0, total_wrong = 0, failed_rows = 0;
  bool stopped = false;  // by SIGINT or SIGTERM, on this rank or another
  // The rows so far, as --json holds them. Rank 0 writes them after the first row and then at most
  // once a second (complete: false), so a rank killed or stopped mid-run, which ends the job, leaves
  // the rows finished until then on disk.
  const auto rows_document = [&](bool complete, const std::string& stop_reason) {
    nlohmann::json results = nlohmann::json::array();
    for (const ShardedRow& row : rows) results.push_back(row_json(row, command, plan, ranks));
    nlohmann::json document = {{"schema", "bitparity.sharded/1"},
                               {"bitparity", version_string()},
                               {"seed", command.seed},
                               {"world_size", size},
                               {"communicator", communicator_name(plan.communicator)},
                               {"ranks", ranks},
                               {"summary", {{"rows", rows.size()}, {"failed_rows", failed_rows}, {"wrong_elements", total_wrong}}},
                               {"complete", complete},
                               {"results", results}};
    if (!stop_reason.empty()) document["interrupted"] = stop_reason;
    if (!complete && stop_reason.empty()) {
      document["rows_planned"] = plan.rows.size();
      document["in_progress"] = "written along the way (after the first row, then at most once a second): a run that ended here did not finish";
    }
    if (!plan.hunted_mutant.empty()) document["mutant"] = {{"name", plan.hunted_mutant}, {"killed", total_wrong > 0}};
    return document;
  };
  auto rows_written = std::chrono::steady_clock::now();  // when rank 0 last wrote the rows along the way
  bool along_the_way_failed = false;                     // rank 0 could not (a full disk): not tried again
  for (const ShardedRowPlan& p : plan.rows) {
    // Every rank stops before the same row: a signal may reach one rank only (a kill of its pid).
    if (signal_on_any_rank(world.communicator()) != 0) {
      stopped = true;
      break;
    }
    if (p.property == "P11" && implementations.checkpoint_dir.empty()) {
      implementations.checkpoint_dir = make_checkpoint_folder(world, checkpoint_folder);
    }
    const ShardedRow row = run_row(p, command, plan, world, implementations, case_number);
    total_wrong += row.wrong();
    failed_rows += row.wrong() > 0 ? 1 : 0;
    if (lead) {
      // P2r's wrong elements go in "wrong p" (the entry point's outputs); "other": disagreeing ranks
      // (P2r) and views refused with an error (not wrong, shown as r=N).
      // P10: wrong dequantized elements in "wrong p", wrong adapter elements in "wrong s", wrong storage
      // and absmax bytes in "other" (b=N).
      const bool stepped = p.property == "P6" || p.property == "P11";
      std::string other = p.property == "P6" ? "-"
                          : p.property == "P11" ? "r=" + std::to_string(row.refused_resumes)
                          : p.property == "P10" ? "b=" + std::to_string(row.wrong_bytes)
                                                : std::to_string(row.disagreeing_ranks);
      if (row.refused > 0) other += " r=" + std::to_string(row.refused);
      std::printf("%-4s %-10s %-17s %-5s %-16s %5d %5d %10lld %8lld %8s %8s %8s\n", p.property.c_str(), p.entry().c_str(),
                  p.target().c_str(), dtype_name(p.dtype), p.layout_name().c_str(), size, row.cases,
                  static_cast<long long>(row.checked),
                  static_cast<long long>(stepped ? row.wrong_parameters : row.wrong_elements),
                  stepped ? std::to_string(row.wrong_gradients).c_str() : "-",
                  stepped ? std::to_string(row.wrong_states).c_str()
                  : p.property == "P10" && p.grad ? std::to_string(row.wrong_adapter).c_str() : "-",
                  other.c_str());
      std::fflush(stdout);
    }
    rows.push_back(row);
    if (row.cut) {
      stopped = true;
      break;
    }
    // At most once a second: the document holds every row so far, and rewriting it after each of a
    // thousand rows made a run five times slower (quadratic in the rows, one fsync each).
    const auto now = std::chrono::steady_clock::now();
    if (lead && !command.json.empty() && !along_the_way_failed && rows.size() < plan.rows.size() &&
        (rows.size() == 1 || now - rows_written >= std::chrono::seconds(1))) {
      // Rank 0 alone writes: a failure here must not leave the loop, or the other ranks wait for it
      // in their next collective. The file is written again at the end, where a failure is exit 3.
      try {
        write_results_document(command.json, rows_document(false, ""));
      } catch (const WriteError&) {
        along_the_way_failed = true;
      }
      rows_written = now;
    }
  }
  const std::string stop_reason = stop_reason_over_ranks();
  // The file first: after its own signal mpirun ends the ranks about a second later, and what is
  // printed after that is lost anyway.
  std::string written, not_written;
  if (lead && !command.json.empty()) {
    try {
      written = write_results_document(command.json, rows_document(!stopped, stopped ? stop_reason : ""));
    } catch (const WriteError& e) {
      not_written = e.what();  // exit 3 once every rank is past the barrier
    }
  }
  world.communicator().barrier();
  if (lead) {
    for (const ShardedRow& row : rows) {
      if (row.wrong() == 0) continue;
      std::printf("\nFAILED %s %s %s/%s %s on %d ranks\n  %s\n  replay: %s\n", row.plan->property.c_str(), row.plan->entry().c_str(),
                  row.plan->target().c_str(), dtype_name(row.plan->dtype), row.plan->layout_name().c_str(), size,
                  row.counterexample.c_str(), replay_command(row, command, plan, size).c_str());
    }
    std::printf("\nsummary: %zu rows on %d ranks, %lld failed, %lld wrong elements (summed over ranks)%s\n", rows.size(), size,
                static_cast<long long>(failed_rows), static_cast<long long>(total_wrong),
                stopped ? (", interrupted by " + stop_reason + ": " + std::to_string(plan.rows.size() - rows.size()) + " rows not run" +
                           (!rows.empty() && rows.back().cut ? ", the last row cut after " + std::to_string(rows.back().cases) + " cases" : ""))
                              .c_str()
                        : "");
    if (!plan.hunted_mutant.empty()) std::printf("mutant %s: %s\n", plan.hunted_mutant.c_str(), total_wrong > 0 ? "killed" : "SURVIVED");
    if (!written.empty()) std::printf("results: %s\n", printable_text(written).c_str());
    std::fflush(stdout);
    if (!not_written.empty()) throw WriteError(not_written);
  }
  // Interrupted: 128 + the signal, on every rank, wherever it arrived.
  if (stopped) return stopped_exit_code_over_ranks();
  if (!plan.hunted_mutant.empty()) return total_wrong > 0 ? exit_passed : exit_failed;
  return total_wrong == 0 ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
