// `bitparity state-plan`: the state path and memory of each tensor, planned without allocating.
#include <cstdio>

#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/kernels/optimizer_state.hpp"
#include "bitparity/kernels/quantize.hpp"
#include "bitparity/reports/cli_checks.hpp"
#include "bitparity/reports/commands.hpp"
#include "bitparity/reports/errors.hpp"
#include "bitparity/reports/exit_codes.hpp"

namespace bitparity::reports {

void add_state_plan_command(CLI::App& app, StatePlanCommand& command) {
  auto* plan = app.add_subcommand("state-plan", "which state path (8-bit or fp32) each tensor takes, and its memory");
  plan->add_option("--optimizer", command.optimizer, "optimizer (default adam)");
  plan->add_option("--size", command.sizes, "element count of a parameter tensor (repeatable)")
      ->required()
      ->transform(integer_in(0, std::int64_t{1} << 50));
  const auto given = [&command](const std::string&) { command.eight_bit_option_given = true; };
  plan->add_option("--block-size", command.blocksize, "8-bit block size (default 256)")->transform(integer_in(1, 1 << 20))->each(given);
  plan->add_option("--min-8bit-size", command.min_8bit_size, "smaller tensors keep fp32 states (default 4096; 0: none)")
      ->transform(integer_in(0, std::int64_t{1} << 50))
      ->each(given);
  plan->add_flag("--fp32", command.fp32, "32-bit states for every tensor");
}

int run_state_plan_command(const StatePlanCommand& command) {
  const OptimizerKind kind = parse_optimizer(command.optimizer);
  if (command.fp32 && command.eight_bit_option_given) {
    throw UsageError("--block-size and --min-8bit-size shape 8-bit states, and --fp32 plans none; drop them or --fp32");
  }
  // An optimizer without 8-bit states plans fp32 whatever these say: they would be ignored.
  if (!has_8bit_variant(kind) && command.eight_bit_option_given) {
    std::string eight_bit;
    for (const auto& info : optimizers()) {
      if (has_8bit_variant(info.kind)) eight_bit += (eight_bit.empty() ? "" : ", ") + std::string(info.name);
    }
    throw UsageError("--block-size and --min-8bit-size shape 8-bit states, and " + std::string(optimizer_info(kind).name) +
                     " has none (its states are always fp32); drop them, or plan an optimizer with 8-bit states: " + eight_bit);
  }
  const StateOptions options{!command.fp32, command.blocksize, command.min_8bit_size};
  // Refused even when every tensor here is small enough for fp32 states: the option is still wrong.
  if (!command.fp32) validate_block_size(QuantFormat::dynamic8_signed, command.blocksize);
  std::vector<StatePlan> plans;
  for (std::int64_t size : command.sizes) plans.push_back(plan_state(kind, size, options));  // validates first
  // The totals stay below 2^63 bytes where the elements stay within one tensor's limit (12 bytes of
  // fp32 states per element at most).
  constexpr std::int64_t kMostElements = std::int64_t{1} << 50;
  std::int64_t sum = 0;
  for (std::int64_t size : command.sizes) {
    if (size > kMostElements - sum) {
      throw UsageError("the --size values add up to more than 2^50 elements, the most one plan takes; plan the tensors in parts");
    }
    sum += size;
  }
  std::int64_t total = 0, total_32 = 0, elements = 0;
  std::printf("%14s  %-6s %14s %14s\n", "elements", "path", "state bytes", "fp32 would be");
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const std::int64_t size = command.sizes[i];
    const auto fp32_bytes = static_cast<std::int64_t>(state_bytes_per_element_32bit(kind) * static_cast<double>(size));
    std::printf("%14lld  %-6s %14lld %14lld\n", static_cast<long long>(size), state_path_name(plans[i].path),
                static_cast<long long>(plans[i].bytes()), static_cast<long long>(fp32_bytes));
    total += plans[i].bytes();
    total_32 += fp32_bytes;
    elements += size;
  }
  std::printf("total: %lld bytes for %lld elements (%.3f bytes per element; fp32 states %.3f)\n",
              static_cast<long long>(total), static_cast<long long>(elements),
              elements ? static_cast<double>(total) / elements : 0.0, elements ? static_cast<double>(total_32) / elements : 0.0);
  return exit_passed;
}

}  // namespace bitparity::reports
