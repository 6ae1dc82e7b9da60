// `bitparity sharded`: the multi-rank properties over the ranks that mpirun started. Every rank
// plans the rows from the options the same way before MPI starts, so bad input is refused before
// any work; only rank 0 prints.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <vector>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/code_map_file.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/folder_lock.hpp"
#include "bitparity/reports/result_file.hpp"
#include "rank_case.hpp"
#include "rank_mutants.hpp"
#if BITPARITY_HAS_MPI
#include "bitparity/distributed/gathered_case.hpp"
#include "bitparity/distributed/sharded_case.hpp"
#include "bitparity/distributed/storage_case.hpp"
#endif
#if BITPARITY_HAS_MPI
#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/distributed/communicators.hpp"
#include "sharded_plan.hpp"
#endif

namespace bitparity::reports {

void add_sharded_command(CLI::App& app, ShardedCommand& command) {
  auto* sharded = app.add_subcommand(
      "sharded", "multi-rank properties over the ranks of `mpirun -np W`: P6 rank parity (ZeRO-1/2, ZeRO-3, per-parameter "
                 "sharded steps against the unsharded step, gradients and states checked by parameter id), P2r (tensors "
                 "chunked over the ranks, all-gathered and used through non-contiguous views), P10 (quantized storage "
                 "through FSDP sharding) and P11 (resume from a checkpoint)");
  sharded->add_option("--property", command.properties,
                      "P6, P2r, P10 or P11 (resume: save on W ranks, load on W' ranks or another device, continue; "
                      "bitwise the run that never stopped) (repeatable; default all four)");
  sharded->add_option("--optimizer", command.optimizers, "only these optimizers (repeatable)");
  sharded->add_option("--format", command.formats, "only these quantization formats, P2r (repeatable)");
  sharded->add_option("--dtype", command.dtypes, "parameter (P10: compute) dtypes: f32, f16, bf16 (repeatable; default all)");
  sharded->add_option("--storage", command.storages, "P10 quant_storage dtypes: u8, f16, bf16, f32 (repeatable; default all)");
  sharded->add_option("--grad-dtype", command.grad_dtypes,
                      "P10: none (the quantized weight alone, frozen) or f32, f16, bf16: the unit also trains an adapter with "
                      "gradients of that dtype, as FSDP-QLoRA does (repeatable; default all; u8 storage only with none)");
  sharded->add_option("--layout", command.layouts,
                      "zero-1/2, zero-3, per-parameter (P6, P11), chunk+all_gather (P2r), fsdp1-flat or fsdp2-dim0 (P10) "
                      "(repeatable; default all)");
  sharded->add_option("--states", command.state_bits, "32 (fp32 states) or 8 (8-bit states) (repeatable; default both)")
      ->check(CLI::IsMember({32, 8}));
  sharded->add_option("--implementation", command.implementation, "cpu, cuda:N or mutant:NAME on every rank (default cpu)");
  sharded->add_option("--rank-implementation", command.rank_implementations,
                      "R=NAME: rank R runs NAME instead, e.g. 0=cuda:0 for a mixed CPU+GPU world (repeatable)");
  sharded->add_option("--communicator", command.communicator,
                      "mpi (exact user-defined reductions, default), mpi-integer-sum (NCCL's integer-sum reduction over "
                      "MPI) or nccl (one GPU per rank: every rank runs cuda:N on its own GPU)");
  sharded->add_option("--steps", command.steps, "optimizer steps per P6 case, and after resuming per P11 case (default 3)")
      ->transform(integer_in(1, 1000))
      ->each([&command](const std::string&) { command.steps_given = true; });
  sharded->add_option("--cases", command.cases, "random cases per row (default 1)")->transform(integer_in(1, 100000));
  sharded->add_option("--seed", command.seed, "run seed (default 1)")
      ->transform(seed_value())
      ->each([&command](const std::string&) { command.seed_given = true; });
  sharded->add_option("--case", command.case_file,
                      "a saved rank case (CORPUS/over-ranks/*.json, from bitparity fuzz): run its one P6, P2r, P10 or P11 row "
                      "on the values (and groups, steps, worlds or tensor) it holds, instead of drawn cases");
  sharded->add_option("--mutant", command.mutant,
                      "run with a driver fault (sharded-*), a storage fault (storage-*) or a checkpoint fault (checkpoint-*; "
                      "`bitparity list`): exit 0 when killed");
  sharded->add_option("--checkpoint-dir", command.checkpoint_dir,
                      "P11: folder for the checkpoints, seen by every rank (default: a temporary folder, removed after)")
      ->check(non_empty_value());
  sharded->add_option("--resume-implementation", command.resume_implementation,
                      "P11: the implementation that loads and continues, e.g. cuda:0 after saving on cpu (default: the same)");
  sharded->add_flag("--all-world-pairs", command.all_world_pairs,
                    "P11: resume every (W, W') with W, W' in 1..mpirun's ranks in each case (default: one pair drawn per case)");
  sharded->add_option("--map", command.maps,
                      "P6 and P11 8-bit states: a map's name, FILE.json or FILE.safetensors[:TENSOR] instead of the optimizers' "
                      "own, one with negative values (momenta) and/or one without (second moments) (repeatable)");
  sharded->add_option("--json", command.json, "also write the rows as JSON (rank 0, atomically)")
      ->each([&command](const std::string&) { command.json_given = true; });
  sharded->add_option("--stuck-seconds", command.stuck_seconds,
                      "a rank without progress this long fails the run (default 120; 0: never)")
      ->check(seconds_in(86400));
  sharded->add_flag("--benchmark", command.benchmark,
                    "time the sharded step (reduce, step, gather; slowest rank) against the unsharded step of the same "
                    "parameters for the P6 rows, instead of checking them (default selection: adam, f32)");
  sharded->add_option("--elements", command.elements, "--benchmark: parameter elements per row, at least 256 (default 2^20)")
      ->transform(integer_in(256, std::int64_t{1} << 30))
      ->each([&command](const std::string&) { command.elements_given = true; });
  sharded->add_option("--inject-failure", command.inject_failure, "test hook RANK:HOW:STEP (HOW: throw, abort, hang, kill)")
      ->group("");
  sharded->add_flag("--findings-exit-zero", command.findings_exit_zero,
                    "exit 0 when the rows hold findings (for callers that read --json: fuzz, replay, mutants)")
      ->group("");
}

#if BITPARITY_HAS_MPI
namespace {

using distributed::ShardLayout;
using fixtures::OperationFamily;

Injected parse_injection(const std::string& text) {
  Injected injected;
  if (text.empty()) return injected;
  const auto first = text.find(':'), second = text.rfind(':');
  if (first == std::string::npos || first == second) throw UsageError("--inject-failure wants RANK:HOW:STEP, got '" + text + "'");
  try {
    injected.rank = std::stoi(text.substr(0, first));
    injected.step = std::stoi(text.substr(second + 1));
  } catch (const std::exception&) {
    throw UsageError("--inject-failure wants RANK:HOW:STEP with whole numbers, got '" + text + "'");
  }
  injected.how = text.substr(first + 1, second - first - 1);
  if (injected.how != "throw" && injected.how != "abort" && injected.how != "hang" && injected.how != "kill") {
    throw UsageError("--inject-failure: HOW must be throw, abort, hang or kill, got '" + injected.how + "'");
  }
  return injected;
}

template <class T, class Parse>
std::vector<T> chosen(const std::vector<std::string>& names, const std::vector<T>& all, Parse parse, const char* option) {
  if (names.empty()) return all;
  std::vector<T> out;
  for (const auto& name : names) {
    const T value = parse(name);
    if (std::find(out.begin(), out.end(), value) != out.end()) throw UsageError(std::string(option) + " " + name + " given twice");
    out.push_back(value);
  }
  return out;
}

template <class F>
auto as_usage_error(F parse) {
  return [parse](const std::string& name) {
    try {
      return parse(name);
    } catch (const Error& e) {
      throw UsageError(refusal_text(e));
    }
  };
}

DType parse_float_dtype(const std::string& name) {
  if (name == "f32") return DType::f32;
  if (name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  throw UsageError("unknown dtype '" + name + "'; use f32, f16 or bf16");
}

bool names_optimizer(const std::string& name) {
  for (const auto& info : optimizers()) {
    if (info.name == name) return true;
  }
  return false;
}

bool names_format(const std::string& name) {
  for (const auto& info : quant_formats()) {
    if (info.name == name) return true;
  }
  return false;
}

// An implementation name as every rank will build it; cuda devices are looked for on their rank.
std::string checked_implementation(const std::string& name, const std::string& option) {
  // A fault of the driver, storage or checkpoints is no implementation: it was "unknown mutant".
  if (name.starts_with("mutant:") && find_rank_mutant(name.substr(7)) != nullptr) {
    throw UsageError(option + ": " + name.substr(7) + " is a fault of the multi-rank code, not of a kernel; give it as --mutant " +
                     name.substr(7) + " (every rank runs it)");
  }
  fixtures::ImplementationId id;
  try {
    id = fixtures::parse_implementation_id(name);
    if (id.kind == fixtures::ImplementationKind::mutant) (void)fixtures::make_implementation(id);
  } catch (const Error& e) {
    throw UsageError(option + ": " + refusal_text(e));
  }
  if (id.kind == fixtures::ImplementationKind::plugin) throw UsageError(option + ": plugins do not run sharded yet; use cpu, cuda:N or mutant:NAME");
  return id.str();
}

std::map<int, std::string> parse_rank_implementations(const std::vector<std::string>& texts) {
  std::map<int, std::string> out;
  for (const auto& text : texts) {
    const auto equals = text.find('=');
    int rank = -1;
    try {
      std::size_t used = 0;
      rank = equals == std::string::npos ? -1 : std::stoi(text.substr(0, equals), &used);
      if (used != equals) rank = -1;
    } catch (const std::exception&) {
      rank = -1;
    }
    if (rank < 0) throw UsageError("--rank-implementation wants R=NAME with a rank R >= 0, e.g. 0=cuda:0; got '" + text + "'");
    if (out.count(rank) != 0) throw UsageError("--rank-implementation names rank " + std::to_string(rank) + " twice");
    out[rank] = checked_implementation(text.substr(equals + 1), "--rank-implementation " + text);
  }
  return out;
}

// A folder for checkpoints: made if missing, and writable.
void check_checkpoint_dir(const std::string& folder) {
  const std::string fix = "; give a writable folder that every rank sees, e.g. --checkpoint-dir /tmp/bitparity-ckpt";
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error || !std::filesystem::is_directory(folder)) {
    throw UsageError("--checkpoint-dir '" + folder + "' is not a folder that can be made" + (error ? ": " + error.message() : "") + fix);
  }
  check_result_path("--checkpoint-dir", (std::filesystem::path(folder) / "probe.safetensors").string());
}

// Open MPI keeps its session files under TMPDIR, and P11 its default checkpoint folder: MPI_Init
// ends an unusable one with pages of messages (and as root makes a missing one), so it is refused
// first.
void check_temporary_folder() {
  const char* folder = std::getenv("TMPDIR");
  if (folder == nullptr || *folder == '\0') return;
  std::error_code error;
  // A folder is made and removed: root passes access() on /proc, where nothing can be made.
  // A MiB is written there too: on a full disk a folder can still be made, and Open MPI then ended in
  // pages of "OUT-OF-RESOURCE" with exit 1.
  std::string probe = std::string(folder) + "/bitparity-probe.XXXXXX";
  bool usable = std::filesystem::is_directory(folder, error) && ::mkdtemp(probe.data()) != nullptr;
  int full = 0;
  if (usable) {
    const std::string file = probe + "/space";
    std::FILE* out = std::fopen(file.c_str(), "wb");
    const std::vector<char> mebibyte(std::size_t{1} << 20, 0);
    usable = out != nullptr && std::fwrite(mebibyte.data(), 1, mebibyte.size(), out) == mebibyte.size() && std::fflush(out) == 0;
    full = usable ? 0 : errno;
    if (out != nullptr && std::fclose(out) != 0) usable = false;
    std::filesystem::remove_all(probe, error);
  }
  if (!usable) {
    throw UsageError(std::string("TMPDIR=") + folder + (full == ENOSPC ? " has no room for a MiB" : " is not a writable folder") +
                     " (Open MPI and P11 keep files there); set TMPDIR to one, or unset it");
  }
}

// A saved case holds its row, steps and worlds: options that would choose others are refused.
void check_options_beside_case(const ShardedCommand& command) {
  const std::pair<bool, const char*> chosen_elsewhere[] = {
      {!command.properties.empty(), "--property"}, {!command.optimizers.empty(), "--optimizer"},
      {!command.formats.empty(), "--format"},     {!command.dtypes.empty(), "--dtype"},
      {!command.layouts.empty(), "--layout"},     {!command.storages.empty(), "--storage"},
      {!command.grad_dtypes.empty(), "--grad-dtype"}, {!command.state_bits.empty(), "--states"},
      {command.steps_given, "--steps"},           {command.seed_given, "--seed"},
      {command.cases != 1, "--cases"},            {command.all_world_pairs, "--all-world-pairs"},
      {command.benchmark, "--benchmark"}};
  for (const auto& [given, option] : chosen_elsewhere) {
    if (given) throw UsageError(std::string("--case holds its row, steps, worlds and values; drop ") + option);
  }
}

ShardedRowPlan row_of_case(const ShardedPlan& plan) {
  if (plan.saved_storage_case) {
    const distributed::StorageTarget& target = plan.saved_storage_case->target;
    ShardedRowPlan row{"P10", OperationFamily::dequantize, {}, target.format, target.compute_dtype, {}};
    row.storage = target.storage_dtype;
    row.storage_layout = target.layout;
    row.grad = target.grad_dtype;
    return row;
  }
  if (plan.saved_gathered_case) {
    const distributed::GatheredTarget& target = plan.saved_gathered_case->target;
    return {"P2r", target.family, target.kind, target.format, target.dtype, {}};
  }
  const distributed::ShardedConfig& config = plan.saved_case->config;
  return {plan.saved_case->resume ? "P11" : "P6", config.eight_bit ? OperationFamily::optimizer8_step : OperationFamily::optimizer_step,
          config.kind, {}, config.groups.front().param_dtype, config.layout};
}

}  // namespace

void check_rank_case_arguments(const std::vector<std::string>& arguments, bool with_case) {
  CLI::App app;
  ShardedCommand parsed;
  add_sharded_command(app, parsed);
  std::vector<std::string> words(arguments.rbegin(), arguments.rend());  // CLI11 takes them last first
  try {
    app.parse(words);
  } catch (const CLI::ParseError& error) {
    throw UsageError(std::string("the `sharded` command does not take them: ") + error.what());
  }
  if (with_case) check_options_beside_case(parsed);
  state_maps_option(parsed.maps);  // a 4-bit map or a missing file: refused here, not by the ranks
}

std::string ShardedRowPlan::entry() const {
  return property == "P10" ? "storage" : distributed::gathered_entry_name(family);  // P2r's names, which P6 and P11 share
}

std::string ShardedRowPlan::target() const {
  if (property == "P10") {
    return std::string(quant_format_info(format).name) + "@" + dtype_name(storage) + (grad ? std::string("+grad ") + dtype_name(*grad) : "");
  }
  if (family == OperationFamily::convert) return "-";
  if (family == OperationFamily::quantize || family == OperationFamily::dequantize) return std::string(quant_format_info(format).name);
  return std::string(optimizer_info(kind).name);
}

std::string ShardedRowPlan::layout_name() const {
  if (property == "P10") return std::string(distributed::storage_layout_name(storage_layout));
  return property == "P6" || property == "P11" ? std::string(distributed::layout_name(layout)) : kGatheredLayoutName;
}

std::uint64_t ShardedRowPlan::case_seed(std::uint64_t run_seed, int case_index) const {
  // FNV-1a of the row's name: a row's cases do not change when other rows are selected or not.
  std::uint64_t hash = 0xCBF29CE484222325ull ^ run_seed;
  for (char ch : property + "/" + entry() + "/" + target() + "/" + dtype_name(dtype) + "/" + layout_name()) {
    hash = (hash ^ static_cast<unsigned char>(ch)) * 0x100000001B3ull;
  }
  return (hash >> 1) + static_cast<std::uint64_t>(case_index);
}

std::string ShardedPlan::implementation_of(int rank) const {
  const auto found = rank_implementations.find(rank);
  return found == rank_implementations.end() ? implementation : found->second;
}

bool mutant_alters_row(const fixtures::MutantInfo& mutant, const std::string& entry, const std::string& target) {
  if (entry == "fp32 step") return mutant.alters(fixtures::Suite::optim32, target);
  if (entry == "8-bit step") return mutant.alters(fixtures::Suite::optim8, target);
  if (entry == "convert") return mutant.alters(fixtures::Suite::conversions, "");
  // P10's target is "FORMAT@STORAGE", with "+grad DTYPE" when its adapter steps too: then any
  // mutant may reach it.
  if (entry == "storage" && target.find("+grad") != std::string::npos) return true;
  return mutant.alters(fixtures::Suite::quant, target.substr(0, target.find('@')));
}

namespace {

// A row the hunted mutant:NAME does not alter runs the correct kernels: there it could only
// "survive", which says nothing. Such rows are left out; none left is bad input.
void drop_rows_the_mutant_does_not_alter(ShardedPlan& plan) {
  if (!plan.hunted_mutant.starts_with("mutant:")) return;
  const fixtures::MutantInfo* mutant = fixtures::find_mutant(plan.hunted_mutant.substr(7));
  if (mutant == nullptr) return;
  std::erase_if(plan.rows, [&](const ShardedRowPlan& row) { return !mutant_alters_row(*mutant, row.entry(), row.target()); });
  if (!plan.rows.empty()) return;
  std::string altered = std::string(fixtures::suite_name(mutant->suite));
  for (std::size_t k = 0; k < mutant->entries.size(); ++k) altered += (k == 0 ? " " : ", ") + mutant->entries[k];
  throw NoRowTheMutantAlters(plan.hunted_mutant + " alters " + altered + " only, and no selected row runs that" +
                   (plan.case_file.empty() ? "; select its rows (--optimizer, --format, --states, --property)" : " (the --case file's row)"));
}

}  // namespace

ShardedPlan plan_sharded(const ShardedCommand& command) {
  ShardedPlan plan;
  plan.communicator = as_usage_error([](const std::string& name) { return distributed::parse_communicator_kind(name); })(
      command.communicator);
  for (const auto& name : command.formats) {
    if (names_optimizer(name)) throw UsageError("'" + name + "' is an optimizer, not a format; use --optimizer " + name);
  }
  for (const auto& name : command.optimizers) {
    if (names_format(name)) throw UsageError("'" + name + "' is a format, not an optimizer; use --format " + name);
  }
  const bool over_mpi = plan.communicator == distributed::CommunicatorKind::mpi;
  auto properties = chosen(command.properties, std::vector<std::string>{"P6", "P2r", "P10", "P11"}, [](const std::string& name) {
    if (name != "P6" && name != "P2r" && name != "P10" && name != "P11") {
      throw UsageError("unknown sharded property '" + name +
                       "'; use P6 (rank parity), P2r (chunk + all_gather views), P10 (quantized storage through sharding) "
                       "or P11 (resume from a checkpoint)");
    }
    return name;
  }, "--property");
  const bool p11_named = std::find(command.properties.begin(), command.properties.end(), "P11") != command.properties.end();
  if (p11_named && !over_mpi) {
    throw UsageError("P11 saves and resumes over MPI sub-communicators; drop --communicator " + command.communicator + " or --property P11");
  }
  if (command.elements_given && !command.benchmark) {
    throw UsageError("--elements sizes the rows of --benchmark; add --benchmark, or drop --elements (the checks draw their own sizes)");
  }
  for (const auto& named : command.properties) {
    if (command.benchmark && named != "P6") throw UsageError("--benchmark times the P6 sharded step; drop --property " + named);
  }
  if (!over_mpi || command.benchmark) std::erase(properties, std::string("P11"));
  std::vector<OptimizerKind> all_kinds;
  for (const auto& info : optimizers()) all_kinds.push_back(info.kind);
  std::vector<QuantFormat> all_formats;
  for (const auto& info : quant_formats()) all_formats.push_back(info.format);
  if (command.benchmark) {
    if (!command.formats.empty()) throw UsageError("--benchmark times optimizer steps; drop --format");
    if (!command.mutant.empty() || command.implementation.rfind("mutant:", 0) == 0) {
      throw UsageError("--benchmark times the real driver and implementations; drop the mutant");
    }
  }
  if (!command.case_file.empty()) {
    check_options_beside_case(command);
    RankCase saved = read_rank_case(command.case_file);
    if (!saved.carries_inputs()) {
      throw UsageError(command.case_file + ": this rank case holds no inputs (its row regenerates them from seeds); run it with "
                                           "bitparity replay " + command.case_file);
    }
    plan.saved_case = saved.inputs;
    plan.saved_storage_case = saved.storage_inputs;
    plan.saved_gathered_case = saved.gathered_inputs;
    plan.case_file = command.case_file;
    plan.case_world = saved.world_size;
  }
  const bool named_targets = !command.optimizers.empty() || !command.formats.empty();
  if (command.benchmark && command.optimizers.empty()) all_kinds = {OptimizerKind::adam};
  const auto kinds = command.optimizers.empty() && named_targets ? std::vector<OptimizerKind>{}
                     : chosen(command.optimizers, all_kinds, as_usage_error([](const std::string& n) { return parse_optimizer(n); }), "--optimizer");
  const auto formats = command.formats.empty() && named_targets ? std::vector<QuantFormat>{}
                       : chosen(command.formats, all_formats, as_usage_error([](const std::string& n) { return parse_quant_format(n); }), "--format");
  const auto dtypes = chosen(command.dtypes,
                             command.benchmark ? std::vector<DType>{DType::f32} : std::vector<DType>{DType::f32, DType::f16, DType::bf16},
                             parse_float_dtype, "--dtype");
  std::vector<std::string> all_layouts;
  for (ShardLayout layout : distributed::kShardLayouts) all_layouts.emplace_back(distributed::layout_name(layout));
  all_layouts.emplace_back(kGatheredLayoutName);
  for (auto layout : distributed::kStorageLayouts) all_layouts.emplace_back(distributed::storage_layout_name(layout));
  const auto layouts = chosen(command.layouts, all_layouts, [&](const std::string& name) {
    if (std::find(all_layouts.begin(), all_layouts.end(), name) == all_layouts.end()) {
      throw UsageError("unknown layout '" + name +
                       "'; use zero-1/2, zero-3 or per-parameter (P6), chunk+all_gather (P2r), or fsdp1-flat or fsdp2-dim0 (P10)");
    }
    return name;
  }, "--layout");
  const auto storages = chosen(command.storages, std::vector<DType>(std::begin(distributed::kStorageDTypes), std::end(distributed::kStorageDTypes)),
                               [](const std::string& name) {
                                 for (DType dtype : distributed::kStorageDTypes) {
                                   if (name == dtype_name(dtype)) return dtype;
                                 }
                                 throw UsageError("unknown quant_storage dtype '" + name + "'; use u8, f16, bf16 or f32");
                               }, "--storage");
  const auto grads = chosen(command.grad_dtypes,
                            std::vector<std::optional<DType>>{std::nullopt, DType::f32, DType::f16, DType::bf16},
                            [](const std::string& name) -> std::optional<DType> {
                              if (name == "none") return std::nullopt;
                              if (name == "f32" || name == "f16" || name == "bf16") return parse_dtype(name);
                              throw UsageError("unknown grad dtype '" + name + "'; use none (a frozen weight), f32, f16 or bf16");
                            }, "--grad-dtype");
  const bool u8_named = std::find(command.storages.begin(), command.storages.end(), "u8") != command.storages.end();
  if (u8_named && !command.grad_dtypes.empty() && std::none_of(grads.begin(), grads.end(), [](const auto& g) { return !g; })) {
    throw UsageError("--storage u8 with --grad-dtype: gradients on integer storage; an FSDP unit that trains an adapter flattens "
                     "it with the quantized weight into one dtype, and u8 cannot carry a gradient; store it in f16, bf16 or f32, "
                     "or add --grad-dtype none");
  }
  const std::vector<int> bits = command.state_bits.empty() ? std::vector<int>{32, 8} : command.state_bits;
  for (std::size_t i = 0; i < bits.size(); ++i) {  // each would run its rows again
    if (std::find(bits.begin(), bits.begin() + static_cast<std::ptrdiff_t>(i), bits[i]) != bits.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw UsageError("--states " + std::to_string(bits[i]) + " given twice");
    }
  }
  if (command.state_bits == std::vector<int>{8} && !kinds.empty() &&
      std::none_of(kinds.begin(), kinds.end(), [](OptimizerKind k) { return has_8bit_variant(k); })) {
    throw UsageError("none of the selected optimizers has 8-bit states; drop --states 8 or choose another optimizer");
  }
  if (!command.mutant.empty()) {
    if (find_rank_mutant(command.mutant) == nullptr) {
      std::string names;
      for (const RankMutant& mutant : rank_mutant_catalogue()) names += (names.empty() ? "" : ", ") + mutant.name;
      const auto& catalogue = fixtures::mutant_catalogue();
      const bool of_an_implementation = std::any_of(catalogue.begin(), catalogue.end(),
                                                    [&](const fixtures::MutantInfo& m) { return m.name == command.mutant; });
      throw UsageError(of_an_implementation ? "'" + command.mutant + "' is a mutant implementation, not a fault of the ranks; use "
                                                  "--implementation mutant:" + command.mutant
                                            : "unknown --mutant '" + command.mutant + "'; the faults of the ranks are " + names);
    }
    try {
      if (distributed::is_storage_fault_name(command.mutant)) {
        plan.storage_fault = distributed::parse_storage_fault(command.mutant);
      } else if (distributed::is_checkpoint_fault_name(command.mutant)) {
        plan.checkpoint_fault = distributed::parse_checkpoint_fault(command.mutant);
        if (plan.checkpoint_fault == distributed::kDevicePlacementFault) {
          throw UsageError(command.mutant + " moves no state in the sharded driver (its states stay on the host); it is killed by "
                                            "the device-placement test on a GPU: ctest -R DevicePlacement");
        }
      } else {
        plan.fault = distributed::parse_fault(command.mutant);
      }
    } catch (const Error& e) {
      throw UsageError(refusal_text(e));
    }
    plan.hunted_mutant = command.mutant;
  }
  plan.injected = parse_injection(command.inject_failure);
  plan.implementation = checked_implementation(command.implementation, "--implementation");
  plan.rank_implementations = parse_rank_implementations(command.rank_implementations);
  if (!command.resume_implementation.empty()) {
    plan.resume_implementation = checked_implementation(command.resume_implementation, "--resume-implementation");
  }
  for (const std::string& name : [&] {
         std::vector<std::string> all{plan.implementation};
         for (const auto& [rank, implementation] : plan.rank_implementations) all.push_back(implementation);
         return all;
       }()) {
    if (name.rfind("mutant:", 0) != 0) continue;
    if (!plan.hunted_mutant.empty() && plan.hunted_mutant != name) {
      throw UsageError("hunt one mutant at a time: " + plan.hunted_mutant + " and " + name + " were both given");
    }
    plan.hunted_mutant = name;
  }
  if (command.json_given) {
    if (!command.case_file.empty()) check_result_apart_from_input("--json", command.json, command.case_file, "the --case file");
    std::vector<std::string> implementations{command.implementation, command.resume_implementation};
    for (const std::string& rank_implementation : command.rank_implementations) {
      implementations.push_back(rank_implementation.substr(rank_implementation.find('=') + 1));
    }
    check_result_apart_from_map_and_plugin_files("--json", command.json, command.maps, implementations);
    check_result_path("--json", command.json);
  }
  if (!command.checkpoint_dir.empty()) check_checkpoint_dir(command.checkpoint_dir);

  if (!plan.case_file.empty()) {
    if (plan.saved_case && plan.saved_case->resume && !over_mpi) {
      throw UsageError("P11 saves and resumes over MPI sub-communicators; drop --communicator " + command.communicator);
    }
    plan.rows.push_back(row_of_case(plan));
  }
  const auto wanted = [&](const std::string& layout) {
    return plan.case_file.empty() && std::find(layouts.begin(), layouts.end(), layout) != layouts.end();
  };
  const auto wanted_property = [&](const char* p) { return std::find(properties.begin(), properties.end(), p) != properties.end(); };
  for (int state_bits : bits) {
    for (OptimizerKind kind : kinds) {
      if (state_bits == 8 && !has_8bit_variant(kind)) continue;
      const OperationFamily family = state_bits == 8 ? OperationFamily::optimizer8_step : OperationFamily::optimizer_step;
      for (DType dtype : dtypes) {
        if (wanted_property("P6")) {
          for (ShardLayout layout : distributed::kShardLayouts) {
            if (wanted(std::string(distributed::layout_name(layout)))) plan.rows.push_back({"P6", family, kind, {}, dtype, layout});
          }
        }
        if (wanted_property("P2r") && wanted(kGatheredLayoutName)) plan.rows.push_back({"P2r", family, kind, {}, dtype, {}});
        if (wanted_property("P11")) {
          for (ShardLayout layout : distributed::kShardLayouts) {
            if (wanted(std::string(distributed::layout_name(layout)))) plan.rows.push_back({"P11", family, kind, {}, dtype, layout});
          }
        }
      }
    }
  }
  if (wanted_property("P10")) {
    for (QuantFormat format : formats) {
      for (DType storage : storages) {
        for (DType dtype : dtypes) {
          for (auto layout : distributed::kStorageLayouts) {
            if (!wanted(std::string(distributed::storage_layout_name(layout)))) continue;
            for (const std::optional<DType>& grad : grads) {
              if (grad && storage == DType::u8) continue;  // refused: u8 cannot carry a gradient
              ShardedRowPlan row{"P10", OperationFamily::dequantize, {}, format, dtype, {}};
              row.storage = storage;
              row.storage_layout = layout;
              row.grad = grad;
              plan.rows.push_back(row);
            }
          }
        }
      }
    }
  }
  if (wanted_property("P2r") && wanted(kGatheredLayoutName)) {
    for (QuantFormat format : formats) {
      for (OperationFamily family : {OperationFamily::quantize, OperationFamily::dequantize}) {
        for (DType dtype : dtypes) plan.rows.push_back({"P2r", family, {}, format, dtype, {}});
      }
    }
    if (!named_targets) {
      for (DType dtype : dtypes) plan.rows.push_back({"P2r", OperationFamily::convert, {}, {}, dtype, {}});
    }
  }
  if (command.benchmark) {
    std::erase_if(plan.rows, [](const ShardedRowPlan& row) { return row.property != "P6"; });
  }
  if (plan.rows.empty()) {
    // Targets no chosen property runs: say which option, not the layouts.
    std::string chosen_properties;
    for (const std::string& p : properties) chosen_properties += (chosen_properties.empty() ? "" : ", ") + p;
    if (!command.formats.empty() && !wanted_property("P2r") && !wanted_property("P10")) {
      throw UsageError("--format names quantization formats, and " + chosen_properties +
                       " step optimizers only; give --optimizer, or add --property P2r or P10");
    }
    if (!command.optimizers.empty() && !wanted_property("P2r") && !wanted_property("P6") && !wanted_property("P11")) {
      throw UsageError("--optimizer names optimizers, and P10 stores quantization formats only; give --format, or add --property P6, P11 or P2r");
    }
    throw UsageError("the options select no rows: P6 steps optimizers in layouts zero-1/2, zero-3 and per-parameter; "
                     "P2r runs every entry point in layout chunk+all_gather; P10 stores formats in layouts fsdp1-flat and fsdp2-dim0");
  }
  // Each --layout selects rows: one that selects none beside one that does was dropped silently.
  for (const std::string& layout : command.layouts) {
    if (std::none_of(plan.rows.begin(), plan.rows.end(), [&](const ShardedRowPlan& row) { return row.layout_name() == layout; })) {
      throw UsageError("--layout " + layout + " selects no row of the chosen properties (P6 and P11: zero-1/2, zero-3, per-parameter; "
                       "P2r: chunk+all_gather; P10: fsdp1-flat, fsdp2-dim0); drop it or add its property");
    }
  }
  // With --case the row is the file's: "add --property" would be refused beside it ("drop --property").
  const auto advice = [&plan](const std::string& without_case) {
    return plan.case_file.empty() ? without_case : "the --case file holds a " + plan.rows.front().property + " row; drop the option";
  };
  if (plan.fault != distributed::DriverFault::none &&
      std::none_of(plan.rows.begin(), plan.rows.end(), [](const ShardedRowPlan& row) { return row.property == "P6"; })) {
    throw UsageError("--mutant " + command.mutant + " is a fault of the sharded driver, which only P6 runs; " + advice("add --property P6"));
  }
  const bool has_p11 = std::any_of(plan.rows.begin(), plan.rows.end(), [](const ShardedRowPlan& row) { return row.property == "P11"; });
  if (plan.checkpoint_fault != distributed::CheckpointFault::none && !has_p11) {
    throw UsageError("--mutant " + command.mutant + " is a fault of checkpoints, which only P11 runs; " + advice("add --property P11"));
  }
  if (!has_p11) {
    if (!command.resume_implementation.empty()) throw UsageError("--resume-implementation is for P11; " + advice("add --property P11"));
    if (!command.checkpoint_dir.empty()) throw UsageError("--checkpoint-dir is for P11; " + advice("add --property P11"));
    if (command.all_world_pairs) throw UsageError("--all-world-pairs is for P11; " + advice("add --property P11"));
  }
  // Options only P10 reads: without a P10 row they would be ignored silently.
  if (std::none_of(plan.rows.begin(), plan.rows.end(), [](const ShardedRowPlan& row) { return row.property == "P10"; })) {
    if (!command.storages.empty()) throw UsageError("--storage is for P10 (quantized storage through sharding); " + advice("add --property P10"));
    if (!command.grad_dtypes.empty()) throw UsageError("--grad-dtype is for P10 (quantized storage through sharding); " + advice("add --property P10"));
  }
  // Options of the optimizer steps (P6, P11) and of the formats (P2r's quantizers, P10): without a row
  // that reads one, it would be ignored silently.
  const auto any_row = [&plan](auto&& reads) { return std::any_of(plan.rows.begin(), plan.rows.end(), reads); };
  const bool has_steps = any_row([](const ShardedRowPlan& row) { return row.property == "P6" || row.property == "P11"; });
  if (!has_steps && command.steps_given) throw UsageError("--steps is for the optimizer steps of P6 and P11; " + advice("add --property P6, or drop --steps"));
  // --states picks the 32- or 8-bit step of every optimizer row: P6's, P11's and P2r's.
  if (!command.state_bits.empty() && !any_row([](const ShardedRowPlan& row) { return distributed::is_optimizer_family(row.family); })) {
    throw UsageError("--states is for the optimizer steps of P6, P11 and P2r; " + advice("add --property P6, or drop --states"));
  }
  if (!command.optimizers.empty() && !any_row([](const ShardedRowPlan& row) { return distributed::is_optimizer_family(row.family); })) {
    throw UsageError("--optimizer is for P6, P11 and P2r's optimizer steps, and the options select none; " + advice("drop --optimizer or add --property P6"));
  }
  if (!command.formats.empty() && !any_row([](const ShardedRowPlan& row) {
        return row.property == "P10" || (row.property == "P2r" && !distributed::is_optimizer_family(row.family) &&
                                          row.family != OperationFamily::convert);
      })) {
    throw UsageError("--format is for P10 and P2r's quantizers, and the options select none; " + advice("drop --format or add --property P10"));
  }
  plan.maps = state_maps_option(command.maps);
  const bool has_8bit_steps = std::any_of(plan.rows.begin(), plan.rows.end(), [](const ShardedRowPlan& row) {
    return (row.property == "P6" || row.property == "P11") && row.family == OperationFamily::optimizer8_step;
  });
  if (plan.maps.any() && !has_8bit_steps) {
    throw UsageError("--map is for the 8-bit states of P6 and P11, and the options select none; " + advice("add --states 8 and --property P6 or P11"));
  }
  if (plan.checkpoint_fault == distributed::kMapsFault && !plan.maps.any()) {
    throw UsageError("--mutant " + command.mutant + " changes nothing while the 8-bit states take their own maps; add --map "
                     "dynamic8-signed-fused --map dynamic8-unsigned-fused (or any other maps)");
  }
  if (plan.storage_fault != distributed::StorageFault::none &&
      std::none_of(plan.rows.begin(), plan.rows.end(), [](const ShardedRowPlan& row) { return row.property == "P10"; })) {
    throw UsageError("--mutant " + command.mutant + " is a fault of quantized storage, which only P10 runs; add --property P10");
  }
  drop_rows_the_mutant_does_not_alter(plan);
  return plan;
}

namespace {
// A refusal every rank reaches alike: rank 0 says why while every rank still runs, then all end
// together with exit 2. (A rank that ended first could make mpirun tear the job down before rank 0,
// still unwinding to main, had printed the reason.)
int refuse_on_every_rank(distributed::MpiWorld& world, const std::string& message) {
  if (world.rank() == 0) {
    print_error(message);
    std::fflush(stderr);
  }
  world.mpi_communicator().barrier();
  return exit_bad_input;
}
}  // namespace

int run_sharded_command(const ShardedCommand& command) {
  const ShardedPlan plan = plan_sharded(command);
  check_temporary_folder();
  int argc = 0;
  char** argv = nullptr;
  distributed::MpiWorld world(argc, argv, command.stuck_seconds, exit_run_error);
  if (plan.saved_case && plan.saved_case->resume) {
    const distributed::ResumeCase& resume = *plan.saved_case->resume;
    if (std::max(resume.save_world, resume.load_world) > world.size()) {
      return refuse_on_every_rank(world, plan.case_file + " saves on " + std::to_string(resume.save_world) + " ranks and resumes on " +
                                             std::to_string(resume.load_world) + "; run it with mpirun -np " +
                                             std::to_string(std::max(resume.save_world, resume.load_world)) + " or more");
    }
  }
  if (plan.saved_gathered_case) {
    try {
      distributed::check_gathered_world(*plan.saved_gathered_case, world.size());
    } catch (const Error& error) {
      return refuse_on_every_rank(world, plan.case_file + ": " + error.message() + " (it was saved on " + std::to_string(plan.case_world) +
                                             " ranks: mpirun -np " + std::to_string(plan.case_world) + ")");
    }
  }
  // A P6 or P10 case holds what it found on its world: on another one (1 rank, without mpirun) it
  // checks other shards, and a mutant it kills there "survived".
  const bool world_bound = (plan.saved_case && !plan.saved_case->resume) || plan.saved_storage_case;
  if (world_bound && world.size() != plan.case_world) {
    return refuse_on_every_rank(world, plan.case_file + " was saved on " + std::to_string(plan.case_world) + " ranks, and this run has " +
                                           std::to_string(world.size()) + "; run it with mpirun -np " + std::to_string(plan.case_world) +
                                           " (or bitparity replay " + plan.case_file + ")");
  }
  if (command.benchmark) {
    // Every rank holds its sharded tensors and the unsharded step's, about 180 bytes an element
    // (measured: 730 MB resident for Adam at 2^22 on one rank): 2^28 on one rank ran into 24 GB
    // and was killed by the kernel before it printed anything.
    // The ranks on this host share its memory: Open MPI says how many there are, else all of them.
    constexpr double kBenchmarkBytesPerElement = 180.0;
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int here = local != nullptr && std::atoi(local) > 0 ? std::atoi(local) : world.size();
    const double per_element = kBenchmarkBytesPerElement * here;
    try {
      check_memory("sharded --benchmark of " + std::to_string(command.elements) + " elements on " + std::to_string(here) + " ranks here",
                   static_cast<double>(command.elements) * per_element, per_element, "--elements");
    } catch (const UsageError& refused) {
      return refuse_on_every_rank(world, refused.what());
    }
  }
  for (const auto& [rank, name] : plan.rank_implementations) {
    if (rank >= world.size()) {
      return refuse_on_every_rank(world, "--rank-implementation names rank " + std::to_string(rank) + " but the world has " +
                                             std::to_string(world.size()) + " ranks (mpirun -np)");
    }
  }
  // One run at a time writes a checkpoint folder (rank 0 holds the lock; every rank refuses alike).
  std::optional<FolderLock> checkpoint_lock;
  if (!command.checkpoint_dir.empty()) {
    std::string refusal;
    if (world.rank() == 0) {
      try {
        checkpoint_lock.emplace(command.checkpoint_dir, "--checkpoint-dir");
      } catch (const UsageError& refused) {
        refusal = refused.what();
      }
    }
    if (world.mpi_communicator().all_reduce_any(!refusal.empty())) return refuse_on_every_rank(world, refusal);
  }
  try {
    const int code = command.benchmark ? run_sharded_benchmark_rows(command, plan, world) : run_sharded_rows(command, plan, world);
    return command.findings_exit_zero && code == exit_failed ? exit_passed : code;
  } catch (const WriteError&) {
    throw;  // rank 0's --json could not be written: exit 3, after every rank finished its rows
  } catch (const distributed::CheckpointNotWritten& e) {
    // Every rank is here: those whose write failed say why, then all end with exit 3.
    if (e.here) {
      print_error("rank " + std::to_string(world.rank()) + ": a P11 checkpoint could not be written: " + e.what() +
                  "; the run stopped there (make room under --checkpoint-dir or TMPDIR and run it again)");
      std::fflush(stderr);
    }
    world.mpi_communicator().barrier();
    return exit_write_failed;
  } catch (const std::exception& e) {
    distributed::rank_failed(e.what(), exit_run_error);  // ends every rank, naming this one
  }
}
#else
int run_sharded_command(const ShardedCommand&) {
  throw Error(ErrorCode::invalid_argument,
              "this bitparity was built without MPI; install Open MPI (./scripts/install-deps) and rebuild to run `sharded`");
}
#endif

}  // namespace bitparity::reports
