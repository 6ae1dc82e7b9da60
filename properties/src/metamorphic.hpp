#pragma once
// The metamorphic properties, written once over an operation family: layout (P2), launch (P3),
// determinism (P4) and device (P5) compare two runs of the same drawn case bit for bit. A family F
// says how to draw a case, run it and compare two results:
//   F::Case, F::Result
//   static constexpr const char* operation;                       // "8-bit step", in messages
//   static Case draw(const PropertyTarget&, PropertyStats&, Metamorphic which);  // sizes and mixes per property
//   encode_input(const Case&), decode_input(const json&, Case&)   // the case as data (case_tape.hpp)
//   static Result run(fixtures::Implementation&, const Case&, const LaunchConfig&, bool contiguous);
//   static void expect_same(PropertyStats&, const Case&, const Result& expected, const Result& actual,
//                           const std::string& what);
//   static void expect_untouched_outside_views(PropertyStats&, const Result& strided);  // P2's fill bytes
//   static std::int64_t elements(const Case&);
//   static constexpr fixtures::Suite suite;  static std::vector<OperationFamily> families();  // P14's other targets
#include <memory>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/property.hpp"
#include "input_guard.hpp"

namespace bitparity::properties {

enum class Metamorphic { layout, launch, determinism, device };

// The drawn case and launch, recorded or replayed through the target's tape. A replayed case the
// family could not have drawn for this target (F::require_in_domain) is refused before it runs.
template <class F>
typename F::Case drawn_case(const PropertyTarget& t, PropertyStats& stats, Metamorphic which) {
  typename F::Case c = drawn<typename F::Case>(t, stats, "case", [&] { return F::draw(t, stats, which); });
  F::require_in_domain(t, c);
  return c;
}

inline LaunchConfig drawn_launch(const PropertyTarget& t, PropertyStats& stats) {
  return drawn<LaunchConfig>(t, stats, "launch", [] { return draw_launch(); });
}

// P2: the case laid out strided (sliced, permuted, offset, chunked) gives the contiguous bits, and
// nothing outside an output view is written.
template <class F>
void layout_property(const PropertyTarget& t, PropertyStats& stats) {
  const typename F::Case c = drawn_case<F>(t, stats, Metamorphic::layout);
  const typename F::Result flat = F::run(*t.iut, c, {}, true);
  const typename F::Result strided = F::run(*t.iut, c, {}, false);
  F::expect_same(stats, c, flat, strided, std::string("strided vs contiguous ") + F::operation);
  F::expect_untouched_outside_views(stats, strided);
  stats.pass_case(F::elements(c));
}

// Whether both runs of P3 or P5 take the strided tensors or both their contiguous twins, which reach
// the launchers' fast paths. Saved cases older than the choice were strided.
inline bool drawn_contiguity(const PropertyTarget& t, PropertyStats& stats) {
  return drawn_or_absent<bool>(t, stats, "contiguous", false, "strided tensors", [&] {
    const bool contiguous = *rc::gen::arbitrary<bool>();
    stats.note(contiguous ? "contiguous tensors" : "strided tensors");
    return contiguous;
  });
}

// P3: threads, grid and launch splitting do not change a bit, on strided or contiguous tensors (P2
// compares the contiguous fast paths with the strided path only at the default launch).
template <class F>
void launch_property(const PropertyTarget& t, PropertyStats& stats) {
  const typename F::Case c = drawn_case<F>(t, stats, Metamorphic::launch);
  const LaunchConfig launch = drawn_launch(t, stats);
  const bool contiguous = drawn_contiguity(t, stats);
  stats.note("launch {" + launch.describe() + "}");
  F::expect_same(stats, c, F::run(*t.iut, c, {}, contiguous), F::run(*t.iut, c, launch, contiguous),
                 std::string(contiguous ? "contiguous " : "strided ") + F::operation + " with launch {" +
                     launch.describe() + "}");
  stats.pass_case(F::elements(c));
}

// P4: the same call twice gives the same bits.
template <class F>
void determinism_property(const PropertyTarget& t, PropertyStats& stats) {
  const typename F::Case c = drawn_case<F>(t, stats, Metamorphic::determinism);
  const LaunchConfig launch = drawn_launch(t, stats);
  F::expect_same(stats, c, F::run(*t.iut, c, launch, false), F::run(*t.iut, c, launch, false),
                 std::string("second identical ") + F::operation);
  stats.pass_case(F::elements(c));
}

// P5: the implementation under test gives the baseline's (cpu) bits on the same case, both on the
// strided or both on the contiguous tensors. The baseline runs its default launch; the one under
// test a drawn launch or, one case in three, its default: contiguous tensors at the default launch
// are the call a user makes, through each device's fast paths.
template <class F>
void device_property(const PropertyTarget& t, PropertyStats& stats) {
  const typename F::Case c = drawn_case<F>(t, stats, Metamorphic::device);
  const LaunchConfig launch = drawn<LaunchConfig>(t, stats, "launch", [] { return draw_launch_or_default(); });
  const bool contiguous = drawn_contiguity(t, stats);
  F::expect_same(stats, c, F::run(*t.baseline, c, {}, contiguous), F::run(*t.iut, c, launch, contiguous),
                 t.iut->name() + " vs " + t.baseline->name() + " " + (contiguous ? "contiguous " : "strided ") +
                     F::operation + " with launch {" + launch.describe() + "}");
  stats.pass_case(F::elements(c));
}

// P13: no call changes its inputs (input_guard.hpp), on strided tensors (storage between the
// elements included) or their contiguous twins.
template <class F>
void immutability_property(const PropertyTarget& t, PropertyStats& stats) {
  const typename F::Case c = drawn_case<F>(t, stats, Metamorphic::layout);
  const LaunchConfig launch = drawn_launch(t, stats);
  const bool contiguous = drawn_contiguity(t, stats);
  InputGuard guard(*t.iut, stats);
  (void)F::run(guard, c, launch, contiguous);
  stats.pass_case(F::elements(c));
}

// The targets of `suite` that the target's implementation takes, at every block size: the other
// maps, block sizes, dtypes and optimizers a P14 sequence mixes in.
std::vector<PropertyTarget> sequence_targets(const PropertyTarget& t, fixtures::Suite suite,
                                             const std::vector<fixtures::OperationFamily>& families);

// P14: a call's bits do not depend on the calls before it. Three calls (the first on the target, the
// others on any target the implementation takes: other maps, some agreeing in entries, block sizes,
// dtypes, optimizers) run in order on one fresh instance and in reverse order on another, so that
// each call follows other calls on one and the last runs alone on the other. Fresh instances keep
// the case whole: its replay makes the same calls, whatever ran before it. Each result is compared
// and freed before the next call, so allocators hand its addresses to the next one.
template <class F>
void hidden_state_property(const PropertyTarget& t, PropertyStats& stats) {
  constexpr int kCalls = 3;
  const std::vector<PropertyTarget> targets = sequence_targets(t, F::suite, F::families());
  std::vector<typename F::Case> cases;
  std::int64_t elements = 0;
  for (int i = 0; i < kCalls; ++i) {
    cases.push_back(drawn<typename F::Case>(t, stats, "case" + std::to_string(i + 1), [&] {
      const bool own = i == 0 || targets.empty();
      const PropertyTarget& target = own ? t : targets[*rc::gen::inRange<std::size_t>(0, targets.size())];
      return F::draw(target, stats, Metamorphic::determinism);
    }));
    F::require_in_domain(t, cases.back());
    elements += F::elements(cases.back());
  }
  const LaunchConfig launch = drawn_launch(t, stats);
  std::vector<typename F::Result> reversed(kCalls);  // by call
  {
    const std::unique_ptr<fixtures::Implementation> fresh = t.iut->fresh_instance();
    for (int i = kCalls - 1; i >= 0; --i) reversed[i] = F::run(*fresh, cases[i], launch, false);
  }
  const std::unique_ptr<fixtures::Implementation> in_order = t.iut->fresh_instance();
  for (int i = 0; i < kCalls; ++i) {
    const auto position = [&](int k) { return "call " + std::to_string(k) + " of " + std::to_string(kCalls); };
    F::expect_same(stats, cases[i], reversed[i], F::run(*in_order, cases[i], launch, false),
                   std::string(F::operation) + " " + std::to_string(i + 1) + " of " + std::to_string(kCalls) + " in order vs in reverse order (" +
                       (i == kCalls - 1 ? "there the first call of a fresh instance" : "there after " + position(i + 2)) + ")");
    reversed[i] = {};
  }
  stats.pass_case(elements);
}

}  // namespace bitparity::properties
