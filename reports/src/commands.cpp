#include "bitparity/reports/commands.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/mutants.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/optimizer_state.hpp"
#include "bitparity/properties/drift.hpp"
#include "bitparity/properties/mutant_hunt.hpp"
#include "bitparity/properties/property.hpp"
#include "bitparity/reports/check_run.hpp"

namespace bitparity::reports {

namespace {

void write_json(const std::string& path, const nlohmann::json& document) {
  const std::filesystem::path target(path);
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path());
  std::ofstream out(target);
  if (!out) throw Error(ErrorCode::invalid_argument, "cannot write '" + path + "'; check the directory exists and is writable");
  out << document.dump(2) << '\n';
}

std::vector<std::string> expand_devices(const std::vector<std::string>& requested) {
  if (requested.empty()) return {"cpu"};
  std::vector<std::string> devices;
  for (const auto& device : requested) {
    if (device == "all") {
      for (const auto& found : fixtures::device_implementation_names()) devices.push_back(found);
    } else {
      if (device.starts_with("mutant:")) {
        throw Error(ErrorCode::invalid_argument, "'" + device + "' is a mutant; mutants run with `bitparity mutants`");
      }
      parse_device(device);                   // refuses what is not a device name
      fixtures::make_implementation(device);  // refuses absent devices with the reason
      devices.push_back(device);
    }
  }
  return devices;
}

}  // namespace

void add_check_command(CLI::App& app, CheckCommand& command) {
  auto* check = app.add_subcommand("check", "run the properties over the registry and print a table");
  check->add_option("--suite", command.suites, "suite to run: quant, conversions (repeatable; default all)");
  check->add_option("--device", command.devices, "cpu, cuda:N or all (repeatable; default cpu)");
  check->add_option("--format", command.formats,
                    "only these formats or optimizers (repeatable; default every one of the registry)");
  check->add_option("--dtype", command.dtypes, "only these input dtypes: f32, f16, bf16 (repeatable)");
  check->add_option("--block-size", command.block_sizes, "only these block sizes (repeatable)");
  check->add_option("--seconds", command.seconds, "time budget for the random properties (default: fixed case counts)")
      ->check(CLI::NonNegativeNumber);
  check->add_option("--cases", command.cases, "random cases per block size when no --seconds is given")
      ->check(CLI::PositiveNumber);
  check->add_option("--seed", command.seed, "first RapidCheck seed");
  check->add_option("--json", command.json_path, "write the results as JSON to this file");
  check->add_flag("--verbose", command.verbose, "print each row as it finishes");
}

void add_mutants_command(CLI::App& app, MutantsCommand& command) {
  auto* mutants = app.add_subcommand("mutants", "run the properties against every catalogued mutant");
  mutants->add_option("--seconds", command.seconds, "time budget per mutant (default 30)")->check(CLI::PositiveNumber);
  mutants->add_option("--seed", command.seed, "first RapidCheck seed");
  mutants->add_option("--json", command.json_path, "write the results as JSON to this file");
  mutants->add_option("--only", command.only, "run only these mutants (repeatable)");
}

void add_drift_command(CLI::App& app, DriftCommand& command) {
  auto* drift = app.add_subcommand("drift", "N optimizer steps against the exact MPFR trajectory: drift per step");
  drift->add_option("--optimizer", command.optimizers, "optimizers (repeatable; default all)");
  drift->add_option("--dtype", command.dtypes, "parameter dtypes f32, f16, bf16 (repeatable; default f32)");
  drift->add_option("--device", command.device, "cpu or cuda:N (default cpu)");
  drift->add_option("--steps", command.steps, "steps (default 200)")->check(CLI::PositiveNumber);
  drift->add_option("--elements", command.elements, "elements per tensor (default 128)")->check(CLI::PositiveNumber);
  drift->add_option("--every", command.every, "print every Nth step (default 50)")->check(CLI::PositiveNumber);
  drift->add_option("--seed", command.seed, "seed of the start values and gradients");
  drift->add_option("--json", command.json_path, "write every step's figures as JSON");
  drift->add_flag("--eight-bit", command.eight_bit, "8-bit blockwise states against the exact 32-bit trajectory");
  drift->add_option("--block-size", command.blocksize, "block size of the 8-bit states (default 256)");
}

int run_drift_command(const DriftCommand& command) {
  std::vector<OptimizerKind> kinds;
  for (const auto& name : command.optimizers) kinds.push_back(parse_optimizer(name));
  if (kinds.empty()) {
    for (const auto& info : optimizers()) {
      if (!command.eight_bit || has_8bit_variant(info.kind)) kinds.push_back(info.kind);
    }
  }
  if (command.eight_bit) validate_block_size(QuantFormat::dynamic8_signed, command.blocksize);
  std::vector<DType> dtypes;
  for (const auto& name : command.dtypes) dtypes.push_back(parse_dtype(name));
  if (dtypes.empty()) dtypes.push_back(DType::f32);
  for (DType dtype : dtypes) {
    if (!is_float_dtype(dtype)) throw Error(ErrorCode::invalid_argument, "drift needs a float parameter dtype: f32, f16 or bf16");
  }
  parse_device(command.device);
  const auto iut = fixtures::make_implementation(command.device);
  nlohmann::json runs = nlohmann::json::array();
  int nonfinite = 0;
  for (OptimizerKind kind : kinds) {
    for (DType dtype : dtypes) {
      properties::DriftOptions options;
      options.steps = command.steps;
      options.elements = command.elements;
      options.seed = command.seed;
      options.eight_bit = command.eight_bit;
      options.blocksize = command.blocksize;
      const auto report = properties::run_drift(*iut, kind, dtype, options);
      properties::print_drift(report, command.every);
      std::printf("\n");
      for (const auto& step : report.steps) nonfinite += step.nonfinite > 0;
      runs.push_back(properties::drift_json(report));
    }
  }
  if (!command.json_path.empty()) write_json(command.json_path, {{"drift", runs}});
  return nonfinite == 0 ? 0 : 1;
}

void add_state_plan_command(CLI::App& app, StatePlanCommand& command) {
  auto* plan = app.add_subcommand("state-plan", "which state path (8-bit or fp32) each tensor takes, and its memory");
  plan->add_option("--optimizer", command.optimizer, "optimizer (default adam)");
  plan->add_option("--size", command.sizes, "element count of a parameter tensor (repeatable)")->required();
  plan->add_option("--block-size", command.blocksize, "8-bit block size (default 256)");
  plan->add_option("--min-8bit-size", command.min_8bit_size, "smaller tensors keep fp32 states (default 4096; 0: none)");
  plan->add_flag("--fp32", command.fp32, "32-bit states for every tensor");
}

int run_state_plan_command(const StatePlanCommand& command) {
  const OptimizerKind kind = parse_optimizer(command.optimizer);
  const StateOptions options{!command.fp32, command.blocksize, command.min_8bit_size};
  std::int64_t total = 0, total_32 = 0, elements = 0;
  std::printf("%14s  %-6s %14s %14s\n", "elements", "path", "state bytes", "fp32 would be");
  for (std::int64_t size : command.sizes) {
    if (size < 0) throw Error(ErrorCode::invalid_argument, "a tensor size must be >= 0");
    const OptimizerState state(kind, size, Device::cpu(), options);
    const auto fp32_bytes = static_cast<std::int64_t>(state_bytes_per_element_32bit(kind) * static_cast<double>(size));
    std::printf("%14lld  %-6s %14lld %14lld\n", static_cast<long long>(size), state_path_name(state.path()),
                static_cast<long long>(state.bytes()), static_cast<long long>(fp32_bytes));
    total += state.bytes();
    total_32 += fp32_bytes;
    elements += size;
  }
  std::printf("total: %lld bytes for %lld elements (%.3f bytes per element; fp32 states %.3f)\n",
              static_cast<long long>(total), static_cast<long long>(elements),
              elements ? static_cast<double>(total) / elements : 0.0, elements ? static_cast<double>(total_32) / elements : 0.0);
  return 0;
}

void add_list_command(CLI::App& app) {
  app.add_subcommand("list", "list formats, block sizes, properties, mutants and devices");
}

int run_check_command(const CheckCommand& command) {
  CheckOptions options;
  options.suites = command.suites.empty() ? properties::suite_names() : command.suites;
  for (const auto& suite : options.suites) properties::properties_of_suite(suite);  // refuses unknown suites
  options.devices = expand_devices(command.devices);
  for (const auto& name : command.formats) {
    bool is_optimizer = false;
    for (const auto& entry : properties::optimizer_registry()) is_optimizer = is_optimizer || entry.name == name;
    options.formats.push_back(is_optimizer ? name : properties::find_format(name).name);
  }
  for (const auto& name : command.dtypes) {
    const DType dtype = parse_dtype(name);
    if (!is_float_dtype(dtype)) {
      throw Error(ErrorCode::invalid_argument, "dtype '" + name + "' is not an input dtype; use f32, f16 or bf16");
    }
    options.dtypes.push_back(dtype_name(dtype));
  }
  for (std::int64_t size : command.block_sizes) {
    bool supported = false;
    for (const auto& format : properties::quant_registry()) {
      const bool wanted = options.formats.empty() ||
                          std::find(options.formats.begin(), options.formats.end(), format.name) != options.formats.end();
      if (wanted && std::find(format.block_sizes.begin(), format.block_sizes.end(), size) != format.block_sizes.end()) {
        supported = true;
      }
    }
    // The 8-bit optimizers take the block sizes of the dynamic maps.
    bool optimizer_selected = options.formats.empty();
    for (const auto& entry : properties::optimizer_registry()) {
      optimizer_selected = optimizer_selected ||
                           std::find(options.formats.begin(), options.formats.end(), entry.name) != options.formats.end();
    }
    const auto dynamic_sizes = supported_block_sizes(QuantFormat::dynamic8_signed);
    if (optimizer_selected && std::find(dynamic_sizes.begin(), dynamic_sizes.end(), size) != dynamic_sizes.end()) {
      supported = true;
    }
    if (!supported) {
      throw Error(ErrorCode::invalid_argument, "block size " + std::to_string(size) +
                                                   " is not supported by the selected formats; use a power of two "
                                                   "from 64 to 4096 (or 32 for nf4 and fp4)");
    }
  }
  options.block_sizes = command.block_sizes;
  options.seconds = command.seconds;
  options.cases_per_block_size = command.cases;
  options.seed = command.seed;
  options.verbose = command.verbose;
  const auto rows = run_check(options);
  print_check_table(rows);
  if (!command.json_path.empty()) write_json(command.json_path, check_json(rows));
  for (const auto& row : rows) {
    if (row.violations > 0) return 1;
  }
  return 0;
}

int run_mutants_command(const MutantsCommand& command) {
  nlohmann::json list = nlohmann::json::array();
  int survivors = 0, harness_errors = 0;
  for (const auto& mutant : fixtures::mutant_catalogue()) {
    if (!command.only.empty() && std::find(command.only.begin(), command.only.end(), mutant.name) == command.only.end()) {
      continue;
    }
    const auto hunt = properties::hunt_mutant(mutant, command.seconds, command.seed);
    if (hunt.killed) {
      std::printf("KILLED   %-30s by %-24s (expected %s) in %6.2f s on %s\n%s\n\n", mutant.name.c_str(),
                  hunt.property.c_str(), mutant.killer.c_str(), hunt.seconds, hunt.target.c_str(),
                  hunt.counterexample.c_str());
    } else if (hunt.harness_error) {
      ++harness_errors;
      std::printf("HARNESS  %-30s failed %s on %s, which it does not alter: the harness disagrees with the kernel\n%s\n\n",
                  mutant.name.c_str(), hunt.property.c_str(), hunt.target.c_str(), hunt.counterexample.c_str());
    } else {
      ++survivors;
      std::printf("SURVIVED %-30s after %.1f s (%s)\n\n", mutant.name.c_str(), hunt.seconds, mutant.description.c_str());
    }
    list.push_back({{"name", mutant.name},
                    {"description", mutant.description},
                    {"killed", hunt.killed},
                    {"harness_error", hunt.harness_error},
                    {"expected_killer", mutant.killer},
                    {"property", hunt.property},
                    {"target", hunt.target},
                    {"seconds", hunt.seconds},
                    {"counterexample", hunt.counterexample}});
  }
  std::printf("%zu mutants, %d survived, %d harness errors\n", list.size(), survivors, harness_errors);
  if (!command.json_path.empty()) write_json(command.json_path, {{"mutants", list}});
  return survivors == 0 && harness_errors == 0 ? 0 : 1;
}

int run_list_command() {
  std::printf("formats (registry):\n");
  for (const auto& format : properties::quant_registry()) {
    std::printf("  %-18s %d-bit  block sizes:", format.name.c_str(), format.bits);
    for (auto size : format.block_sizes) std::printf(" %lld", static_cast<long long>(size));
    std::printf("\n");
  }
  std::printf("properties:\n");
  for (const auto& property : properties::property_catalogue()) {
    std::printf("  %-4s %-20s [%s] %s\n", property.id.c_str(), property.name.c_str(), property.suite.c_str(),
                property.claim.c_str());
  }
  std::printf("optimizers (registry):\n");
  for (const auto& info : optimizers()) {
    std::printf("  %-10s %d states  %s\n", std::string(info.name).c_str(), info.states, std::string(info.description).c_str());
  }
  std::printf("optimizer-state memory per parameter element (8-bit: codes + fp32 absmax per block of 256):\n");
  for (const auto& info : optimizers()) {
    if (!has_8bit_variant(info.kind)) continue;
    std::printf("  %-10s 32-bit %5.2f B   8-bit %5.3f B   (%.1f%%)\n", std::string(info.name).c_str(),
                state_bytes_per_element_32bit(info.kind), state_bytes_per_element_8bit(info.kind, 256),
                100.0 * state_bytes_per_element_8bit(info.kind, 256) / state_bytes_per_element_32bit(info.kind));
  }
  std::printf("mutants:\n");
  for (const auto& mutant : fixtures::mutant_catalogue()) {
    std::printf("  mutant:%-28s %s\n", mutant.name.c_str(), mutant.description.c_str());
  }
  std::printf("devices:\n");
  for (const auto& device : fixtures::device_implementation_names()) std::printf("  %s\n", device.c_str());
  std::printf("CUDA launchers %s\n", cuda_built() ? "built" : "not built (nvcc was not found)");
  return 0;
}

}  // namespace bitparity::reports
