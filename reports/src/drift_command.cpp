// `bitparity drift`: N steps of each optimizer against the exact MPFR trajectory, with progress,
// memory checked before anything is allocated, and clean stops on SIGINT/SIGTERM.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/properties/drift.hpp"
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

}  // namespace

void add_drift_command(CLI::App& app, DriftCommand& command) {
  auto* drift = app.add_subcommand("drift", "N optimizer steps against the exact MPFR trajectory: drift per step");
  drift->add_option("--optimizer", command.optimizers, "optimizers (repeatable; default all)");
  drift->add_option("--dtype", command.dtypes, "parameter dtypes f32, f16, bf16 (repeatable; default f32)");
  drift->add_option("--device", command.device, "cpu or cuda:N (default cpu)");
  drift->add_option("--steps", command.steps, "steps (default 200)")->check(integer_in(1, 10000000));
  drift->add_option("--elements", command.elements, "elements per tensor (default 128)")->check(integer_in(1, 1000000000));
  drift->add_option("--every", command.every, "print every Nth step (default 50)")->check(integer_in(1, 10000000));
  drift->add_option("--seed", command.seed, "seed of the start values and gradients (default 1)")->check(seed_value());
  drift->add_option("--json", command.json_path, "write every step's figures as JSON (checked before the run)")
      ->each([&command](const std::string&) { command.json_given = true; });
  drift->add_flag("--eight-bit", command.eight_bit, "8-bit blockwise states against the exact 32-bit trajectory");
  command.blocksize_option =
      drift->add_option("--block-size", command.blocksize, "block size of the 8-bit states (default 256; needs --eight-bit)")
          ->check(integer_in(1, 1 << 20));
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
  if (command.json_given) check_result_path("--json", command.json_path);

  const std::int64_t runs = static_cast<std::int64_t>(kinds.size() * dtypes.size());
  std::printf("bitparity drift: %lld runs of %lld steps x %lld elements on %s, seed %llu\n\n", static_cast<long long>(runs),
              static_cast<long long>(command.steps), static_cast<long long>(command.elements), command.device.c_str(),
              static_cast<unsigned long long>(command.seed));
  std::fflush(stdout);
  Progress progress("drift: runs", runs);
  nlohmann::json list = nlohmann::json::array();
  int nonfinite = 0;
  std::int64_t run = 0;
  for (OptimizerKind kind : kinds) {
    for (DType dtype : dtypes) {
      if (interrupted()) break;
      properties::DriftOptions options;
      options.steps = command.steps;
      options.elements = command.elements;
      options.seed = command.seed;
      options.eight_bit = command.eight_bit;
      options.blocksize = command.blocksize;
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
      list.push_back(drift_json(report));
      ++run;
    }
  }
  std::printf("summary: %lld of %lld runs, %d steps with non-finite parameters\n", static_cast<long long>(list.size()),
              static_cast<long long>(runs), nonfinite);
  if (command.json_given) {
    nlohmann::json document = {{"schema", "bitparity.drift/2"},
                               {"bitparity", version_string()},
                               {"seed", command.seed},
                               {"complete", !interrupted()},
                               {"drift", list}};
    if (interrupted()) document["interrupted"] = interrupt_name();
    write_result_file(command.json_path, document.dump(2) + "\n");
    std::printf("results: %s\n", command.json_path.c_str());
  }
  if (interrupted()) return interrupted_exit_code();
  return nonfinite == 0 ? exit_passed : exit_failed;
}

}  // namespace bitparity::reports
