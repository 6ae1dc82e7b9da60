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
#include <string>

#include <rapidcheck.h>

#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/property.hpp"

namespace bitparity::properties {

enum class Metamorphic { layout, launch, determinism, device };

// The drawn case and launch, recorded or replayed through the target's tape.
template <class F>
typename F::Case drawn_case(const PropertyTarget& t, PropertyStats& stats, Metamorphic which) {
  return drawn<typename F::Case>(t, stats, "case", [&] { return F::draw(t, stats, which); });
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

}  // namespace bitparity::properties
