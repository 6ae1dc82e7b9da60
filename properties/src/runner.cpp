#include <rapidcheck.h>
#include <rapidcheck/detail/Configuration.h>
#include <rapidcheck/detail/TestListenerAdapter.h>

#include <iostream>

#include <chrono>
#include <mutex>
#include <sstream>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer8.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

void PropertyStats::pass_case(std::int64_t case_elements) {
  if (failed) return;
  ++cases;
  elements += case_elements;
  informative += case_elements > 0 && !blind ? 1 : 0;
}

void PropertyStats::observe_ratio(double ratio) {
  if (!failed && ratio > max_error_over_bound) max_error_over_bound = ratio;
}

void report_violation(PropertyStats& stats, std::int64_t violating_elements, const std::string& message) {
  if (!stats.failed) {
    stats.failed = true;
    stats.violations = violating_elements;
  }
  throw PropertyViolation(message + (stats.context.empty() ? "" : "\n  case: " + stats.context));
}

namespace {

struct PropertySources {
  std::mutex mutex;
  std::vector<std::function<void(std::vector<PropertyDef>&)>> appends;
  bool built = false;
};

PropertySources& property_sources() {
  static PropertySources sources;
  return sources;
}

}  // namespace

void register_properties(std::function<void(std::vector<PropertyDef>&)> append) {
  PropertySources& sources = property_sources();
  const std::lock_guard lock(sources.mutex);
  if (sources.built) {
    throw Error(ErrorCode::invalid_argument,
                "register_properties after the property catalogue was read; register at program start");
  }
  sources.appends.push_back(std::move(append));
}

const std::vector<PropertyDef>& property_catalogue() {
  static const std::vector<PropertyDef> catalogue = [] {
    PropertySources& sources = property_sources();
    const std::lock_guard lock(sources.mutex);
    sources.built = true;
    std::vector<PropertyDef> list;
    append_quant_properties(list);
    append_dequantization_properties(list);
    append_optimizer_properties(list);
    append_optimizer8_properties(list);
    for (const auto& append : sources.appends) append(list);
    append_conversion_properties(list);  // exhaustive sweeps last: the mutant runner meets them after the fast ones
    for (std::size_t i = 0; i < list.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (list[i].id == list[j].id) throw Error(ErrorCode::invalid_argument, "two properties have the id " + list[i].id);
      }
    }
    return list;
  }();
  return catalogue;
}

std::vector<const PropertyDef*> properties_of_suite(fixtures::Suite suite) {
  std::vector<const PropertyDef*> found;
  for (const auto& property : property_catalogue()) {
    if (property.suite == suite) found.push_back(&property);
  }
  return found;
}

std::string TargetSpec::label() const {
  if (format) return format->name + "/" + dtype_name(dtype);
  if (optimizer) return optimizer->name + "/" + dtype_name(dtype);
  return dtype_name(dtype);
}

std::string TargetSpec::entry() const {
  if (format) return format->name;
  if (optimizer) return optimizer->name;
  return "";
}

std::vector<std::int64_t> TargetSpec::block_sizes() const {
  if (format) return format->block_sizes;
  if (quantized_state) return supported_block_sizes(QuantFormat::dynamic8_signed);
  return {0};
}

std::vector<TargetSpec> suite_targets(fixtures::Suite suite) {
  using fixtures::Suite;
  std::vector<TargetSpec> targets;
  if (suite == Suite::conversions) {
    targets.push_back({nullptr, nullptr, DType::f16});
    targets.push_back({nullptr, nullptr, DType::bf16});
    return targets;
  }
  if (suite == Suite::optim8) {
    for (const auto& optimizer : optimizer_registry()) {
      if (!has_8bit_variant(optimizer.kind)) continue;
      for (DType dtype : float_dtypes()) targets.push_back({nullptr, &optimizer, dtype, true});
    }
    return targets;
  }
  if (suite == Suite::optim32) {
    for (const auto& optimizer : optimizer_registry()) {
      for (DType dtype : float_dtypes()) targets.push_back({nullptr, &optimizer, dtype});
    }
    return targets;
  }
  for (const auto& format : quant_registry()) {
    for (DType dtype : float_dtypes()) targets.push_back({&format, nullptr, dtype});
  }
  return targets;
}

PropertyTarget make_target(const PropertyDef& property, const TargetSpec& spec, fixtures::Implementation* iut,
                           fixtures::Implementation* baseline, std::int64_t blocksize) {
  PropertyTarget target;
  target.iut = iut;
  target.baseline = property.needs_baseline ? baseline : nullptr;
  target.format = spec.format;
  target.optimizer = spec.optimizer;
  target.dtype = spec.dtype;
  target.blocksize = blocksize;
  target.state_maps = spec.state_maps;
  return target;
}

namespace {

// RapidCheck announces a random seed of its own the first time its configuration loads; bitparity
// never uses it (every run passes its seed explicitly), so load it once with stderr muted.
void load_rapidcheck_configuration_quietly() {
  static const bool loaded = [] {
    std::streambuf* stderr_buffer = std::cerr.rdbuf(nullptr);
    rc::detail::configuration();
    std::cerr.rdbuf(stderr_buffer);
    return true;
  }();
  (void)loaded;
}

}  // namespace

bool target_offers(const PropertyTarget& target, fixtures::OperationFamily family) {
  for (const fixtures::Implementation* iut : {target.iut, target.baseline}) {
    if (iut != nullptr && !iut->offers(family)) return false;
  }
  return true;
}

std::vector<fixtures::OperationFamily> families_of_suite(fixtures::Suite suite) {
  using fixtures::OperationFamily;
  switch (suite) {
    // P2 of quant also checks strided conversions.
    case fixtures::Suite::quant: return {OperationFamily::quantize, OperationFamily::dequantize, OperationFamily::convert};
    case fixtures::Suite::conversions: return {OperationFamily::convert};
    case fixtures::Suite::optim32: return {OperationFamily::optimizer_step};
    case fixtures::Suite::optim8: return {OperationFamily::optimizer8_step};
  }
  return {};
}

std::string not_applicable_reason(const PropertyDef& property, const PropertyTarget& target) {
  const auto families = property.families.empty() ? families_of_suite(property.suite) : property.families;
  for (const auto family : families) {
    for (const fixtures::Implementation* iut : {target.iut, target.baseline}) {
      if (iut != nullptr && !iut->offers(family)) {
        return iut->name() + " does not offer the " + std::string(fixtures::operation_family_name(family));
      }
    }
  }
  if (property.needs_fresh_instance && target.iut != nullptr && !target.iut->makes_fresh_instances()) {
    return target.iut->name() + " has no fresh instance to compare with (a plugin loaded into bitparity keeps its state; unset BITPARITY_PLUGIN_IN_PROCESS)";
  }
  for (const fixtures::Implementation* iut : {target.iut, target.baseline}) {
    if (iut == nullptr) continue;
    using fixtures::OperationFamily;
    for (const auto family : families) {
      std::string reason;
      if (target.format != nullptr && (family == OperationFamily::quantize || family == OperationFamily::dequantize)) {
        reason = iut->declines(family, target.format->format, target.dtype);
      }
      if (target.optimizer != nullptr &&
          (family == OperationFamily::optimizer_step || family == OperationFamily::optimizer8_step)) {
        reason = iut->declines(family, target.optimizer->kind, target.dtype);
      }
      if (!reason.empty()) return reason;
    }
  }
  return "";
}

RunResult run_property(const PropertyDef& property, const PropertyTarget& target, const RunOptions& options) {
  load_rapidcheck_configuration_quietly();
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  RunResult result;
  result.not_applicable_reason = not_applicable_reason(property, target);
  if (!result.not_applicable_reason.empty()) {
    result.not_applicable = true;
    return result;
  }
  PropertyTarget case_target = target;
  case_target.size_scale = std::max<std::int64_t>(1, options.size_scale);
  // Runs the body on one case; keeps the case's inputs when it fails (the last failing run of a
  // shrink is the shrunk counterexample). RapidCheck accepts every failing candidate, but a shrink
  // must keep the failure it started from: a violation shrunk into a refusal (a library that refuses
  // empty tensors refuses every case shrunk to one) would hide what the case first showed. So once
  // a case failed, a candidate that fails the other way counts as passing.
  // A call that crashed or hung is not shrunk: every candidate could cost a crash or a watchdog's wait,
  // and the case as drawn replays the fault. Later runs (RapidCheck's candidates, and its re-run of
  // the case it reports) fail with that fault's message, unrun; the recorded case stays the first.
  enum class Failure { none, violation, refusal, fault };
  Failure first_failure = Failure::none;
  std::string fault_message;
  const auto run_case = [&] {
    if (first_failure == Failure::fault) throw PropertyViolation(fault_message);
    CaseTape tape = CaseTape::recording();
    case_target.tape = options.record_failing_case ? &tape : nullptr;
    Failure failure = Failure::violation;
    try {
      try {
        property.body(case_target, result.stats);
      } catch (const Error& refusal) {
        // A refusal of a valid case is a failure too (P2: results, or a refusal only for bad input).
        failure = refusal.code() == ErrorCode::implementation_fault ? Failure::fault : Failure::refusal;
        if (first_failure == Failure::violation) {
          case_target.tape = nullptr;
          return;
        }
        report_violation(result.stats, 1, std::string(refusal.code() == ErrorCode::implementation_fault ? kFailedInsideCall : kRefusedValidCase) +
                                               refusal.what());
      }
    } catch (const PropertyViolation& violation) {
      case_target.tape = nullptr;
      if (first_failure == Failure::refusal && failure == Failure::violation) return;
      first_failure = failure;
      if (failure == Failure::fault) fault_message = violation.what();
      if (options.record_failing_case) result.failing_case = RecordedCase{tape.encoded_inputs(), tape.encoded_notes()};
      throw;
    }
    case_target.tape = nullptr;
  };
  if (property.exhaustive) {
    case_target.cancelled = options.cancelled;
    case_target.on_fraction = options.on_fraction;
    if (options.seconds > 0) {
      case_target.deadline = std::chrono::steady_clock::now() +
                             std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(options.seconds));
    }
    try {
      run_case();
    } catch (const std::exception& error) {
      result.passed = false;
      result.counterexample = error.what();
    }
    result.stats.incomplete = result.stats.incomplete || (options.cancelled && options.cancelled());
    result.seconds = elapsed();
    return result;
  }
  constexpr int kBatch = 10;
  std::uint64_t seed = options.seed;
  std::int64_t batch_start = 0;  // cases run before the current batch, passing or not
  // A budget always runs the first batch: a run that drew no case would pass without checking anything.
  while (result.stats.cases < options.max_cases &&
         (options.seconds <= 0 || batch_start == 0 || elapsed() < options.seconds)) {
    if (options.cancelled && options.cancelled()) {
      result.stats.incomplete = true;
      break;
    }
    rc::detail::TestParams params;
    params.seed = seed++;
    params.maxSuccess = static_cast<int>(std::min<std::int64_t>(kBatch, options.max_cases - result.stats.cases));
    params.maxSize = options.max_size;
    params.maxDiscardRatio = 10;
    params.disableShrinking = !options.shrink;
    rc::detail::TestMetadata metadata;
    metadata.id = property.id;
    metadata.description = property.name;
    rc::detail::TestListenerAdapter quiet;
    const auto before = result.stats.cases;
    const auto outcome = rc::detail::checkProperty(
        rc::detail::toProperty([&] {
          result.stats.begin_case();
          run_case();
        }), metadata, params, quiet);
    rc::detail::FailureResult failure;
    if (outcome.match(failure)) {
      result.passed = false;
      // The shrunk case's own message carries every drawn field, labelled; RapidCheck's list of
      // bare draws adds nothing a person can read.
      std::string message = failure.description;
      const std::string prefix = "Exception thrown with message:\n";
      if (message.starts_with(prefix)) message.erase(0, prefix.size());
      while (!message.empty() && message.back() == '\n') message.pop_back();
      result.counterexample = message;
      result.replay_cases = batch_start + params.maxSuccess;
      break;
    }
    rc::detail::Error error;
    if (outcome.match(error)) {
      result.passed = false;
      result.counterexample = "RapidCheck error: " + error.description;
      break;
    }
    batch_start += params.maxSuccess;
    if (options.on_batch) options.on_batch(result.stats.cases);
    if (result.stats.cases == before) break;  // every case discarded: nothing more to learn
  }
  result.seconds = elapsed();
  return result;
}

ReplayOutcome replay_property(const PropertyDef& property, const PropertyTarget& target, const RecordedCase& recorded) {
  ReplayOutcome outcome;
  outcome.not_applicable_reason = not_applicable_reason(property, target);
  if (!outcome.not_applicable_reason.empty()) {
    outcome.not_applicable = true;
    return outcome;
  }
  CaseTape tape = CaseTape::replaying(recorded.inputs, recorded.notes);
  PropertyTarget replayed = target;
  replayed.tape = &tape;
  outcome.stats.begin_case();
  try {
    try {
      property.body(replayed, outcome.stats);
    } catch (const Error& refusal) {
      report_violation(outcome.stats, 1, std::string(refusal.code() == ErrorCode::implementation_fault ? kFailedInsideCall : kRefusedValidCase) +
                                            refusal.what());
    }
  } catch (const PropertyViolation& violation) {
    outcome.passed = false;
    outcome.violation = violation.what();
  } catch (const CaseFileError&) {
    throw;
  } catch (const std::exception& error) {
    // RapidCheck refuses a draw outside a property: the body drew an input the case does not hold.
    throw std::runtime_error("property " + property.id + " cannot replay this case: " + error.what() +
                             " (it draws an input outside its case tape)");
  }
  outcome.unread_inputs = tape.unread_inputs();
  return outcome;
}

}  // namespace bitparity::properties
