#pragma once
// A property is defined once and runs under ctest, `bitparity check`, the fuzzer and the mutant
// runner. It takes implementations under test as parameters and never calls a kernel directly.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bitparity/fixtures/implementation.hpp"
#include "bitparity/fixtures/suite.hpp"
#include "bitparity/properties/registry.hpp"

namespace bitparity::properties {

class CaseTape;

// The optim8 suite's states take the StateMaps of kernels/optimizer8.hpp (`--map`).
using bitparity::StateMaps;

struct PropertyTarget {
  fixtures::Implementation* iut = nullptr;
  fixtures::Implementation* baseline = nullptr;  // P5: the implementation to agree with (cpu)
  const FormatEntry* format = nullptr;           // quantization properties
  const OptimizerEntry* optimizer = nullptr;     // optimizer properties
  DType dtype = DType::f32;
  std::int64_t blocksize = 0;
  // Exhaustive sweeps stop (passing, incomplete) at this time; random properties ignore it.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::function<bool()> cancelled;  // true once the run was asked to stop (SIGINT/SIGTERM)
  // Exhaustive sweeps: the share of the sweep done, after each chunk (progress of a long case).
  std::function<void(double fraction)> on_fraction;
  // Records the inputs each case draws, or supplies them when a saved case replays (case_tape.hpp).
  CaseTape* tape = nullptr;
  // Multiplies the largest sizes properties draw: the fuzzer grows cases as its rounds go by.
  std::int64_t size_scale = 1;
  StateMaps state_maps{};  // optim8: the states' maps
  bool past_deadline() const { return std::chrono::steady_clock::now() >= deadline || (cancelled && cancelled()); }
};

// Figures a run reports. Only cases before the first failure count (shrinking re-runs cases).
struct PropertyStats {
  std::int64_t cases = 0;
  std::int64_t elements = 0;
  std::int64_t informative = 0;          // cases that could have shown an error (not empty, not lr = 0)
  std::int64_t violations = 0;           // violating elements of the first failing case
  double max_error_over_bound = 0.0;     // largest observed error / derived bound (<= 1 when passing)
  std::int64_t ill_conditioned = 0;      // elements with no finite bound (reported, not judged)
  double reference_seconds = 0.0;        // time spent in the exact reference (the fuzzer reports its share)
  bool failed = false;
  bool incomplete = false;  // stopped early: an exhaustive sweep at its deadline, or an interrupted run
  std::string context;      // what the current case drew, printed with a violation
  bool blind = false;       // the current case cannot show an error (lr = 0): counted, not informative

  void begin_case() {
    context.clear();
    blind = false;
  }
  void note(const std::string& what) { context += (context.empty() ? "" : "; ") + what; }

  void pass_case(std::int64_t case_elements);
  void observe_ratio(double ratio);
};

// Adds the time of its scope to stats.reference_seconds: wraps each call into the reference.
class ReferenceTimer {
 public:
  explicit ReferenceTimer(PropertyStats& stats) : stats_(stats), start_(std::chrono::steady_clock::now()) {}
  ~ReferenceTimer() { stats_.reference_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }
  ReferenceTimer(const ReferenceTimer&) = delete;
  ReferenceTimer& operator=(const ReferenceTimer&) = delete;

 private:
  PropertyStats& stats_;
  std::chrono::steady_clock::time_point start_;
};

// Thrown by a property on a violation (RapidCheck reports std::exception messages as failures).
class PropertyViolation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] void report_violation(PropertyStats& stats, std::int64_t violating_elements, const std::string& message);

// A body takes every input it draws through `drawn` (case_tape.hpp), all of them before it runs
// anything, so that a failing case is saved as data and replays without the generators.
struct PropertyDef {
  std::string id;     // "P2"
  std::string name;   // "layout"
  fixtures::Suite suite;
  std::string claim;  // one sentence: what must hold
  bool needs_baseline = false;  // P5 runs only for a device implementation against cpu
  bool exhaustive = false;      // a deterministic sweep, not a random property
  std::function<void(const PropertyTarget&, PropertyStats&)> body;
  // The families the property calls; empty: those of its suite (families_of_suite). An
  // implementation that lacks one is "not applicable" for the property.
  std::vector<fixtures::OperationFamily> families = {};
  // Compares with a fresh instance of the implementation (fixtures::Implementation::fresh_instance):
  // not applicable where none can be made.
  bool needs_fresh_instance = false;
};

// Whether the target's implementation and baseline both offer `family` (properties that can leave
// a part out, such as P2's conversions, ask this).
bool target_offers(const PropertyTarget& target, fixtures::OperationFamily family);

const std::vector<PropertyDef>& property_catalogue();
// Properties from another folder (distributed/, an external library's adapters), added to the
// catalogue when it is first built, before the exhaustive sweeps; properties/ does not depend on
// them. Register before anything reads the catalogue: a later registration throws Error, since the
// planner and the runners would never see it. A duplicate id throws when the catalogue is built.
void register_properties(std::function<void(std::vector<PropertyDef>&)> append);
// The operation families a suite's properties call: quant quantize, dequantize and convert (its
// P2 checks strided conversions), conversions convert, optim32 the 32-bit step, optim8 the 8-bit step.
std::vector<fixtures::OperationFamily> families_of_suite(fixtures::Suite suite);
std::vector<const PropertyDef*> properties_of_suite(fixtures::Suite suite);

struct RunOptions {
  std::uint64_t seed = 1;  // the first batch's RapidCheck seed; batch k uses seed + k
  int max_cases = 20;     // random cases (per run)
  double seconds = 0.0;   // start no batch after this long, though always the first; 0 = no limit
  int max_size = 100;     // RapidCheck's size ceiling
  std::function<bool()> cancelled;                    // checked before every batch: stop, incomplete
  std::function<void(std::int64_t cases)> on_batch;  // progress after every batch of cases
  std::function<void(double fraction)> on_fraction;   // exhaustive sweeps: the share done, as it grows
  std::int64_t size_scale = 1;      // PropertyTarget::size_scale of every case
  bool record_failing_case = false;  // keep the shrunk failing case's inputs (RunResult::failing_case)
  bool shrink = true;                // false: a failing case is kept as drawn
};

// How a violation begins when the implementation threw on a case the generators call valid.
inline constexpr const char* kRefusedValidCase = "the implementation refused a valid case: ";
// A call that crashed, hung or exited (a hosted plugin): a finding on the case, like a refusal.
inline constexpr const char* kFailedInsideCall = "the implementation failed inside a call: ";

// A case as data: the inputs it drew, encoded by name, and the notes each draw added.
struct RecordedCase {
  nlohmann::json inputs = nlohmann::json::object();
  nlohmann::json notes = nlohmann::json::object();
};

struct RunResult {
  bool passed = true;
  // The implementation (or the baseline) does not offer a family the property needs: nothing ran.
  bool not_applicable = false;
  std::string not_applicable_reason;  // "cpu-quantize-only does not offer the 8-bit optimizer step"
  PropertyStats stats;
  std::string counterexample;  // the violation and the shrunk case's labelled fields, hexfloat throughout
  // A run with the same seed and `replay_cases` as max_cases fails on the same case (same build).
  std::int64_t replay_cases = 0;
  double seconds = 0.0;
  // With record_failing_case: the inputs of the shrunk failing case, replayable without generators.
  std::optional<RecordedCase> failing_case;
};

RunResult run_property(const PropertyDef& property, const PropertyTarget& target, const RunOptions& options);
// Why the property cannot run on this target ("plugin:X does not offer the dequantize"), or "" when
// it can: decided from what the implementations offer, before any case runs.
std::string not_applicable_reason(const PropertyDef& property, const PropertyTarget& target);

// One saved case through the property, its inputs read back by name (no generator runs).
struct ReplayOutcome {
  bool passed = true;
  bool not_applicable = false;
  std::string not_applicable_reason;
  std::string violation;  // the violation's message when it failed
  PropertyStats stats;
  std::vector<std::string> unread_inputs;  // inputs of the case the property never read
};
// Throws CaseFileError when the inputs cannot be read, and std::runtime_error when the property
// draws an input the case does not hold (it cannot replay).
ReplayOutcome replay_property(const PropertyDef& property, const PropertyTarget& target, const RecordedCase& recorded);

// The registry's targets of a suite: every format x dtype (or every 16-bit dtype for conversions).
struct TargetSpec {
  const FormatEntry* format = nullptr;
  const OptimizerEntry* optimizer = nullptr;
  DType dtype = DType::f32;
  bool quantized_state = false;  // optim8: 8-bit blockwise states, block sizes of the dynamic maps
  StateMaps state_maps{};        // optim8: maps chosen for the states (empty: the optimizers' own)
  std::string label() const;
  std::string entry() const;  // the registry entry: format or optimizer name ("" for conversions)
  std::vector<std::int64_t> block_sizes() const;  // {0} when the target has no blocks  // "nf4/bf16" or "f16"
};
std::vector<TargetSpec> suite_targets(fixtures::Suite suite);

// The target of `property` on `spec`: the baseline only when the property compares with one.
PropertyTarget make_target(const PropertyDef& property, const TargetSpec& spec, fixtures::Implementation* iut,
                           fixtures::Implementation* baseline, std::int64_t blocksize);

// The property definitions, one file each family.
void append_quant_properties(std::vector<PropertyDef>& catalogue);
void append_dequantization_properties(std::vector<PropertyDef>& catalogue);
void append_conversion_properties(std::vector<PropertyDef>& catalogue);
void append_optimizer_properties(std::vector<PropertyDef>& catalogue);
void append_optimizer8_properties(std::vector<PropertyDef>& catalogue);

}  // namespace bitparity::properties
