// `bitparity drift`: N steps of each optimizer against the exact MPFR trajectory, with progress,
// memory checked before anything is allocated, and clean stops on SIGINT/SIGTERM.
#include <algorithm>
#include <cerrno>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/properties/drift.hpp"
#include "bitparity/reports/code_map_file.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/drift_render.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"
#include "bitparity/reports/interrupt.hpp"
#include "bitparity/reports/progress.hpp"
#include "bitparity/reports/result_file.hpp"
#include "bitparity/reports/version.hpp"

namespace bitparity::reports {

namespace {

// Host memory of one drift element: the exact trajectory keeps the parameter and up to three
// states as MPFR numbers (about 100 bytes each with their limbs), plus the fp32 tensors and
// gradients. Measured about 0.6 KiB per element; 1 KiB leaves room.
constexpr double kDriftBytesPerElement = 1024.0;
// And every step's figures, kept for the summary and the JSON of every run: measured 2.6 KiB per
// step (3.4 KiB with --json) for the largest summaries; 4 KiB leaves room. (--steps 10^7 passed the
// element check and ran out of memory minutes later.)
constexpr double kDriftBytesPerStep = 4096.0;

// "NAME=VALUE" with a decimal or hex value, whole: the parts or a one-line reason.
std::pair<std::string, double> parse_setting(const std::string& text) {
  const auto equals = text.find('=');
  if (equals == std::string::npos || equals == 0 || equals + 1 == text.size()) {
    throw UsageError("--set " + text + " is not NAME=VALUE; write it as e.g. --set lr=1e-2");
  }
  const std::string name = text.substr(0, equals), value = text.substr(equals + 1);
  // A flag (maximize, nesterov, centered) as the list and the help write it; checked_settings
  // refuses a word for a hyperparameter that takes a number.
  if (value == "true" || value == "false") return {name, value == "true" ? 1.0 : 0.0};
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(value.c_str(), &end);
  // ERANGE below the normal range is a tiny number (1e-320), which the hyperparameter's own range
  // then judges; above it, the number is too large for any.
  const bool overflowed = errno == ERANGE && std::fabs(number) > DBL_MIN;
  if (end != value.c_str() + value.size() || overflowed || !std::isfinite(number)) {
    throw UsageError("--set " + text + ": '" + value + "' is not a finite number; write e.g. 1e-3 or 0.9");
  }
  // A whole number past 2^53 was rounded to a neighbour without a word (9007199254740993 ran as ...992).
  const bool whole = value.find_first_not_of("+-0123456789") == std::string::npos;
  long long exact = 0;
  const char* digits = value.c_str() + (value.front() == '+' ? 1 : 0);
  const bool held = std::from_chars(digits, value.c_str() + value.size(), exact).ec == std::errc() &&
                    std::fabs(number) <= 0x1p62 && static_cast<long long>(number) == exact;
  if (whole && !held) {
    throw UsageError("--set " + text + ": '" + value + "' is a whole number past 2^53, which a double cannot hold exactly; give a smaller one");
  }
  return {name, number};
}

// The settings, each read by at least one of the optimizers, each valid for every optimizer that
// reads it: checked on the descriptors before any step runs.
std::vector<std::pair<std::string, double>> checked_settings(const std::vector<std::string>& texts,
                                                             const std::vector<OptimizerKind>& kinds) {
  std::vector<std::pair<std::string, double>> settings;
  std::vector<std::string> names;
  for (const auto& text : texts) {
    settings.push_back(parse_setting(text));
    names.push_back(settings.back().first);
  }
  refuse_repeats("--set", names);
  for (std::size_t i = 0; i < settings.size(); ++i) {
    const std::string& text = texts[i];
    const bool word = text.ends_with("=true") || text.ends_with("=false");
    for (OptimizerKind kind : kinds) {
      for (const auto& spec : optimizer_info(kind).hyperparameters) {
        if (word && spec.name == settings[i].first && spec.range != ValueRange::flag) {
          throw UsageError("--set " + text + ": " + settings[i].first + " takes a number, not true or false; write e.g. 1e-3 or 0.9");
        }
      }
    }
  }
  for (const auto& [name, value] : settings) {
    bool read = false;
    for (OptimizerKind kind : kinds) read = read || reads_hyperparameter(kind, name);
    if (!read) {
      std::vector<std::string> known;
      for (OptimizerKind kind : kinds) {
        for (const auto& spec : optimizer_info(kind).hyperparameters) {
          if (std::find(known.begin(), known.end(), spec.name) == known.end()) known.emplace_back(spec.name);
        }
      }
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      throw UsageError("--set " + name + ": no selected optimizer reads '" + name + "'; they read " + list);
    }
  }
  for (OptimizerKind kind : kinds) {
    try {
      properties::drift_hyperparameters(kind, settings);
    } catch (const Error& error) {
      throw UsageError("--set: " + refusal_text(error) + "; change the value or drop --set for it");
    }
  }
  return settings;
}

}  // namespace

void add_drift_command(CLI::App& app, DriftCommand& command) {
  auto* drift = app.add_subcommand("drift", "N optimizer steps against the exact MPFR trajectory: drift per step");
  drift->add_option("--optimizer", command.optimizers, "optimizers (repeatable; default all)");
  drift->add_option("--dtype", command.dtypes, "parameter dtypes f32, f16, bf16 (repeatable; default f32)");
  drift->add_option("--device", command.device, "cpu or cuda:N (default cpu)");
  drift->add_option("--steps", command.steps, "steps (default 200)")->transform(integer_in(1, 10000000));
  drift->add_option("--elements", command.elements, "elements per tensor (default 128)")->transform(integer_in(1, 1000000000));
  drift->add_option("--every", command.every, "print every Nth step (default 50)")->transform(integer_in(1, 10000000));
  drift->add_option("--seed", command.seed, "seed of the start values and gradients (default 1)")->transform(seed_value());
  drift->add_option("--json", command.json_path, "write every step's figures as JSON (checked before the run)")
      ->each([&command](const std::string&) { command.json_given = true; });
  drift->add_option("--set", command.settings,
                    "NAME=VALUE: a hyperparameter over the typical values, for the optimizers that read it, e.g. "
                    "lr=1e-2 or beta2=0.95 (repeatable; `bitparity list` names them)");
  drift->add_flag("--eight-bit", command.eight_bit, "8-bit blockwise states against the exact 32-bit trajectory");
  command.blocksize_option =
      drift->add_option("--block-size", command.blocksize, "block size of the 8-bit states (default 256; needs --eight-bit)")
          ->transform(integer_in(1, 1 << 20));
  drift->add_option("--map", command.maps,
                    "8-bit states: a map's name, FILE.json or FILE.safetensors[:TENSOR] instead of the optimizers' own, one "
                    "with negative values (momenta) and/or one without (second moments) (repeatable; needs --eight-bit)");
  drift->add_flag("--require-gpu", command.require_gpu, "fail (exit 4) when no CUDA device is usable; also BITPARITY_REQUIRE_GPU=1");
}

int run_drift_command(const DriftCommand& command) {
  refuse_repeats("--optimizer", command.optimizers);
  refuse_repeats("--dtype", command.dtypes);
  std::vector<OptimizerKind> kinds;
  for (const auto& name : command.optimizers) {
    kinds.push_back(parse_optimizer(name));
    if (command.eight_bit && !has_8bit_variant(kinds.back())) {
      throw UsageError("--optimizer " + name + " has no 8-bit variant; drop --eight-bit or choose another optimizer");
    }
  }
  if (kinds.empty()) {
    for (const auto& info : optimizers()) {
      if (!command.eight_bit || has_8bit_variant(info.kind)) kinds.push_back(info.kind);
    }
  }
  if (command.blocksize_option != nullptr && command.blocksize_option->count() > 0 && !command.eight_bit) {
    throw UsageError("--block-size applies to 8-bit states only; add --eight-bit or drop --block-size");
  }
  if (command.eight_bit) validate_block_size(QuantFormat::dynamic8_signed, command.blocksize);
  if (!command.maps.empty() && !command.eight_bit) throw UsageError("--map applies to 8-bit states only; add --eight-bit or drop --map");
  const StateMaps maps = state_maps_option(command.maps);
  const auto settings = checked_settings(command.settings, kinds);
  std::vector<DType> dtypes;
  for (const auto& name : command.dtypes) {
    if (name != "f32" && name != "f16" && name != "bf16") {
      throw UsageError("--dtype " + name + " is not a parameter dtype; use f32, f16 or bf16");
    }
    dtypes.push_back(parse_dtype(name));
  }
  if (dtypes.empty()) dtypes.push_back(DType::f32);
  if (gpu_required(command.require_gpu)) require_usable_gpu();
  parse_device(command.device);
  const auto iut = fixtures::make_implementation(command.device);
  check_memory("drift --elements " + std::to_string(command.elements),
               kDriftBytesPerElement * static_cast<double>(command.elements), kDriftBytesPerElement, "--elements");
  const std::int64_t runs = static_cast<std::int64_t>(kinds.size() * dtypes.size());
  check_memory("drift of " + std::to_string(runs) + " run(s) x " + std::to_string(command.steps) + " steps",
               kDriftBytesPerElement * static_cast<double>(command.elements) +
                   kDriftBytesPerStep * static_cast<double>(runs) * static_cast<double>(command.steps),
               kDriftBytesPerStep * static_cast<double>(runs), "--steps");
  if (command.json_given) {
    check_result_apart_from_map_and_plugin_files("--json", command.json_path, command.maps, {});
    check_result_path("--json", command.json_path);
  }

  std::printf("bitparity drift: %lld runs of %lld steps x %lld elements on %s, seed %llu\n\n", static_cast<long long>(runs),
              static_cast<long long>(command.steps), static_cast<long long>(command.elements), command.device.c_str(),
              static_cast<unsigned long long>(command.seed));
  std::fflush(stdout);
  Progress progress("drift: runs", runs);
  nlohmann::json list = nlohmann::json::array();
  int nonfinite = 0;
  std::int64_t run = 0, complete_runs = 0;
  std::string cut_short;  // the run a signal stopped between its steps, and where
  for (OptimizerKind kind : kinds) {
    for (DType dtype : dtypes) {
      if (interrupted()) break;
      properties::DriftOptions options;
      options.steps = command.steps;
      options.elements = command.elements;
      options.seed = command.seed;
      options.eight_bit = command.eight_bit;
      options.blocksize = command.blocksize;
      options.maps = maps;
      options.settings = settings;
      const std::string label = std::string(optimizer_info(kind).name) + "/" + dtype_name(dtype);
      options.on_step = [&](std::int64_t step) {
        progress.update(run, static_cast<double>(step) / command.steps, label + " step " + std::to_string(step));
        return !interrupted();
      };
      const auto report = properties::run_drift(*iut, kind, dtype, options);
      progress.finish();
      print_drift(report, command.every);
      std::printf("\n");
      std::fflush(stdout);
      for (const auto& step : report.steps) nonfinite += step.nonfinite > 0;
      nlohmann::json entry = drift_json(report);
      const auto steps_run = static_cast<std::int64_t>(report.steps.size());
      entry["complete"] = steps_run >= command.steps;
      if (steps_run < command.steps) {
        cut_short = label + " stopped after step " + std::to_string(steps_run) + " of " + std::to_string(command.steps);
      } else {
        ++complete_runs;
      }
      list.push_back(entry);
      ++run;
    }
  }
  std::printf("summary: %lld of %lld runs complete, %d steps with non-finite parameters%s\n", static_cast<long long>(complete_runs),
              static_cast<long long>(runs), nonfinite,
              interrupted() ? (", interrupted by " + std::string(interrupt_name()) + (cut_short.empty() ? "" : " (" + cut_short + ")")).c_str()
                            : "");
  if (command.json_given) {
    nlohmann::json document = {{"schema", "bitparity.drift/2"},
                               {"bitparity", version_string()},
                               {"seed", command.seed},
                               {"complete", !interrupted()},
                               {"drift", list}};
    if (interrupted()) document["interrupted"] = interrupt_name();
    std::printf("results: %s\n", printable_text(write_results_document(command.json_path, document)).c_str());
  }
  if (interrupted()) return interrupted_exit_code();
  return nonfinite == 0 ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
