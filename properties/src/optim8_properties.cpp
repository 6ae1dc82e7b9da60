// 8-bit blockwise optimizer properties over the optimizer registry: P1q (parameters within their
// bound, new absmax within its bound, every requantized code admissible), P2q, P3q, P4q, P5q, P9q.
#include <rapidcheck.h>

#include <cmath>
#include <random>
#include <sstream>

#include "bitparity/kernels/bits.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/show.hpp"
#include "bitparity/reference/rounding.hpp"
#include "metamorphic.hpp"
#include "optim_harness.hpp"
#include "quant_harness.hpp"

namespace bitparity::properties {

namespace {

using fixtures::HostTensor;

// Whether the exact state s is an fp32 value whose quotient by the absmax a is one too, so that the
// kernel's normalization of it is exact (the product of two fp32 values is exact in double).
bool exact_f32_quotient(double s, float a) {
  const auto state = static_cast<float>(s);
  if (static_cast<double>(state) != s) return false;
  return static_cast<double>(state / a) * static_cast<double>(a) == s;
}

struct Optim8Case {
  OptimCase base;  // hyperparameters, parameter and gradient values and layouts (states unused)
  std::int64_t blocksize = 256;
  std::vector<std::vector<std::uint8_t>> codes;  // per state
  std::vector<std::vector<float>> absmax;        // per state, per block
  std::vector<QuantFormat> maps;                 // per state: the map its codes index
};

struct Optim8Result {
  std::vector<std::uint32_t> param_bits;
  std::vector<std::vector<std::uint8_t>> codes;
  std::vector<std::vector<float>> absmax;
  HostTensor param;
  Step8Report report;
};

Optim8Case draw_optim8_case(const PropertyTarget& t, PropertyStats& stats, bool strided, bool nonfinite,
                            std::int64_t max_numel, bool launch_sized = false) {
  Optim8Case c;
  c.base = draw_optim_case(t, stats, strided, nonfinite, max_numel, 1, launch_sized);
  c.base.hyper.max_unorm = 0.0f;  // not offered with 8-bit states
  stats.note("(max_unorm 0: not offered with 8-bit states)");
  c.blocksize = t.blocksize;
  const std::int64_t n = static_cast<std::int64_t>(c.base.values.size());
  const std::int64_t blocks = block_count(n, c.blocksize);
  std::mt19937_64 rng(*rc::gen::arbitrary<std::uint64_t>());
  for (int k = 0; k < t.optimizer->states; ++k) {
    c.maps.push_back(state8_map(c.base.kind, k, t.state_maps.of_state(c.base.kind, k)));
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
    for (auto& code : codes) code = static_cast<std::uint8_t>(rng() & 0xFF);  // every code, the map's ends included
    std::vector<float> absmax(static_cast<std::size_t>(blocks));
    for (auto& a : absmax) {
      const int kind = static_cast<int>(rng() % 10);
      a = kind == 0 ? 0.0f : static_cast<float>(std::ldexp(1.0 + (rng() % 1000) / 1000.0, static_cast<int>(rng() % 40) - 30));
    }
    c.codes.push_back(std::move(codes));
    c.absmax.push_back(std::move(absmax));
  }
  stats.note("blocksize " + std::to_string(c.blocksize));
  return c;
}

nlohmann::json encode_input(const Optim8Case& c) {
  nlohmann::json absmax = nlohmann::json::array();
  for (const auto& per_state : c.absmax) absmax.push_back(encode_floats(per_state, DType::f32));
  nlohmann::json base = properties::encode_input(c.base);
  base["states"] = nlohmann::json::array();  // the states are the codes and absmax below
  nlohmann::json maps = nlohmann::json::array();
  for (const QuantFormat map : c.maps) maps.push_back(std::string(quant_format_info(map).name));
  return {{"base", base}, {"blocksize", c.blocksize}, {"codes", c.codes}, {"absmax", absmax}, {"state_maps", maps}};
}

void decode_input(const nlohmann::json& j, Optim8Case& c) {
  // A field of no 8-bit case (a typo: "codez") would be ignored, and the case run without it.
  for (const auto& [key, value] : j.items()) {
    if (key != "base" && key != "blocksize" && key != "codes" && key != "absmax" && key != "state_maps") {
      throw CaseFileError("an 8-bit optimizer case has no field '" + (key.size() > 64 ? key.substr(0, 64) + "..." : key) +
                          "'; its fields are base, blocksize, codes, absmax and state_maps");
    }
  }
  for (const char* key : {"base", "blocksize", "codes", "absmax"}) {
    if (!j.contains(key)) throw CaseFileError(std::string("an 8-bit optimizer case needs '") + key + "'");
  }
  decode_optim_case(j.at("base"), c.base, false);
  if (c.base.hyper.max_unorm != 0.0f) {
    // The 8-bit steps refuse it: a replay would count that refusal as a violation, or as a kill.
    throw CaseFileError("8-bit states take no max_unorm; set it to 0 in the base's hyperparameters");
  }
  properties::decode_input(j.at("blocksize"), c.blocksize);
  const auto sizes = supported_block_sizes(QuantFormat::dynamic8_signed);
  if (std::find(sizes.begin(), sizes.end(), c.blocksize) == sizes.end()) {
    throw CaseFileError("block size " + std::to_string(c.blocksize) + " is not one the 8-bit states support");
  }
  const std::size_t n = c.base.values.size();
  const std::size_t blocks = static_cast<std::size_t>(block_count(static_cast<std::int64_t>(n), c.blocksize));
  const std::size_t states = static_cast<std::size_t>(optimizer_info(c.base.kind).states);
  const nlohmann::json &codes = j.at("codes"), &absmax = j.at("absmax");
  if (!codes.is_array() || codes.size() != states || !absmax.is_array() || absmax.size() != states) {
    throw CaseFileError("'codes' and 'absmax' must list one entry per state (" + std::to_string(states) + ")");
  }
  c.codes.clear();
  c.absmax.clear();
  c.maps.clear();
  // Cases saved before maps were data name none: the optimizers' own maps.
  const nlohmann::json maps = j.contains("state_maps") ? j.at("state_maps") : nlohmann::json::array();
  if (!maps.is_array() || (!maps.empty() && maps.size() != states)) {
    throw CaseFileError("'state_maps' must name one map per state (" + std::to_string(states) + ")");
  }
  for (std::size_t k = 0; k < states; ++k) {
    try {
      std::optional<QuantFormat> chosen;
      if (!maps.empty()) {
        if (!maps[k].is_string()) throw CaseFileError("'state_maps' holds map names, not " + maps[k].dump());
        chosen = find_format(maps[k].get<std::string>()).format;
      }
      c.maps.push_back(state8_map(c.base.kind, static_cast<int>(k), chosen));
    } catch (const Error& error) {
      throw CaseFileError(std::string("'state_maps': ") + error.what());
    }
  }
  for (std::size_t k = 0; k < states; ++k) {
    if (!codes[k].is_array() || codes[k].size() != n) throw CaseFileError("state " + std::to_string(k) + " needs one code per element");
    std::vector<std::uint8_t> state_codes;
    for (const auto& code : codes[k]) {
      if (!code.is_number_unsigned() || code.get<std::uint64_t>() > 255) {
        throw CaseFileError("a code must be a whole number from 0 to 255, got " + code.dump());
      }
      state_codes.push_back(static_cast<std::uint8_t>(code.get<std::uint64_t>()));
    }
    c.codes.push_back(std::move(state_codes));
    c.absmax.push_back(decode_floats(absmax[k], DType::f32, blocks));
    if (c.absmax.back().size() != blocks) throw CaseFileError("state " + std::to_string(k) + " needs one absmax per block");
    for (float a : c.absmax.back()) {
      // A scale the quantizer never writes: NaN and Inf read every code as non-finite, a negative flips them.
      if (!(a >= 0.0f) || !std::isfinite(a) || std::signbit(a)) {
        throw CaseFileError("state " + std::to_string(k) + ": a block absmax must be finite and +0 or more, not " + show_float(a));
      }
    }
  }
}

Optim8Result run_optim8(fixtures::Implementation& iut, const Optim8Case& c, const LaunchConfig& launch, bool contiguous) {
  const OptimCase& b = c.base;
  const std::int64_t n = static_cast<std::int64_t>(b.values.size());
  Optim8Result r;
  r.param = make_tensor(b.param_dtype, contiguous ? contiguous_layout(b.shape) : b.param_layout, 0x3C);
  HostTensor grad = make_tensor(b.grad_dtype, contiguous ? contiguous_layout(b.shape) : b.grad_layout, 0x3C);
  std::vector<float> column(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) column[i] = b.values[i].p;
  fixtures::write_logical(r.param.view(), column);
  for (std::int64_t i = 0; i < n; ++i) column[i] = b.values[i].g;
  fixtures::write_logical(grad.view(), column);
  std::vector<HostTensor> buffers;
  std::vector<QuantizedState> states;
  for (std::size_t k = 0; k < c.codes.size(); ++k) {
    buffers.push_back(HostTensor::buffer(DType::u8, n));
    buffers.back().bytes() = c.codes[k];
    buffers.push_back(HostTensor::buffer(DType::f32, static_cast<std::int64_t>(c.absmax[k].size())));
    if (!c.absmax[k].empty()) std::memcpy(buffers.back().bytes().data(), c.absmax[k].data(), c.absmax[k].size() * 4);
  }
  for (std::size_t k = 0; k < c.codes.size(); ++k) states.push_back({buffers[2 * k].view(), buffers[2 * k + 1].view(), c.maps[k]});
  r.report = iut.optimizer8_step(b.kind, b.hyper, r.param.view(), grad.view(), states, c.blocksize, launch);
  r.param_bits = fixtures::read_logical_bits(r.param.view());
  for (std::size_t k = 0; k < c.codes.size(); ++k) {
    r.codes.push_back(buffers[2 * k].bytes());
    std::vector<float> absmax(c.absmax[k].size());
    if (!absmax.empty()) std::memcpy(absmax.data(), buffers[2 * k + 1].bytes().data(), absmax.size() * 4);
    r.absmax.push_back(std::move(absmax));
  }
  return r;
}

void expect_same_step8(PropertyStats& stats, const Optim8Case& c, const Optim8Result& expected, const Optim8Result& actual,
                       const std::string& what) {
  if (expected.report.nonfinite_gradient != actual.report.nonfinite_gradient) {
    report_violation(stats, 1, what + ": the non-finite gradient report differs");
  }
  expect_same_bits(stats, expected.param_bits, actual.param_bits, c.base.param_dtype, what + " (parameter)");
  for (std::size_t k = 0; k < expected.codes.size(); ++k) {
    for (std::size_t i = 0; i < expected.codes[k].size(); ++i) {
      if (expected.codes[k][i] != actual.codes[k][i]) {
        report_violation(stats, 1, what + ": state " + std::to_string(k) + " code of element " + std::to_string(i) +
                                       " differs: " + std::to_string(expected.codes[k][i]) + " vs " +
                                       std::to_string(actual.codes[k][i]));
      }
    }
    for (std::size_t b = 0; b < expected.absmax[k].size(); ++b) {
      if (float_bits(expected.absmax[k][b]) != float_bits(actual.absmax[k][b])) {
        report_violation(stats, 1, what + ": state " + std::to_string(k) + " absmax of block " + std::to_string(b) +
                                       " differs: " + show_float(expected.absmax[k][b]) + " vs " +
                                       show_float(actual.absmax[k][b]));
      }
    }
  }
}


// P1q: the parameter within its bound; each new absmax within the largest bound of its block's
// states; each code one the kernel may choose for its own fp32 state and absmax (ERROR_MODEL.md).
void accuracy8(const PropertyTarget& t, PropertyStats& stats) {
  const Optim8Case c = drawn<Optim8Case>(t, stats, "case", [&] { return draw_optim8_case(t, stats, false, false, 3000); });
  require_step_domain(c.base, "P1q");
  const Optim8Result r = run_optim8(*t.iut, c, {}, true);
  const OptimCase& b = c.base;
  const std::int64_t n = static_cast<std::int64_t>(b.values.size());
  const int states = t.optimizer->states;
  std::vector<const reference::FormatReference*> formats;
  for (int k = 0; k < states; ++k) formats.push_back(&format_reference(c.maps[static_cast<std::size_t>(k)]));
  // The kernel's fp32 inputs: dequantized states, correctly rounded products code value * absmax.
  std::vector<reference::OptimInput> inputs = b.values;
  for (std::int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < states; ++k) {
      const double exact = formats[k]->code_value(c.codes[k][i]) * static_cast<double>(c.absmax[k][i / c.blocksize]);
      inputs[i].s[k] = float_from_bits(reference::correctly_rounded_bits(exact, DType::f32));
    }
  }
  const auto bounds = [&] {
    const ReferenceTimer timer(stats);
    return reference::OptimReference(b.kind, b.hyper, b.param_dtype).bounds_all(inputs);
  }();
  std::int64_t bad = 0, ill_conditioned = 0;
  std::string first;
  auto fail = [&](const std::string& text) {
    if (bad++ == 0) first = text;
  };
  for (std::int64_t i = 0; i < n; ++i) {
    const float p = value_of_bits(r.param_bits[i], b.param_dtype);
    const double largest = b.param_dtype == DType::f16 ? 65504.0 : (b.param_dtype == DType::bf16 ? 0x1.fep127 : 0x1.fffffep127);
    const bool bounded = std::isfinite(bounds[i].bound[0]);
    const double reach = std::fabs(bounds[i].value[0]) + (bounded ? bounds[i].bound[0] : 0.0);
    if (std::isinf(p) && reach >= largest && (p > 0) == (bounds[i].value[0] > 0)) continue;  // correct rounding overflows
    if (!bounded) ++ill_conditioned;
    if (!std::isfinite(p) && !bounded && std::isfinite(bounds[i].value[0])) {
      // Ill-conditioned, but finite inputs whose exact result is finite must not give inf or NaN.
      fail("parameter of element " + std::to_string(i) + ": kernel " + show_float(p) + " from finite inputs, exact " +
           show_double(bounds[i].value[0]) + " (no finite bound: ill-conditioned, but finite)");
    } else if (bounded) {
      const double ratio = std::fabs(p - bounds[i].value[0]) / std::max(bounds[i].bound[0], 1e-300);
      stats.observe_ratio(ratio);
      if (ratio > 1.0) fail("parameter of element " + std::to_string(i) + ": kernel " + show_float(p) + ", exact " +
                            show_double(bounds[i].value[0]) + ", bound " + std::to_string(bounds[i].bound[0]));
    }
  }
  for (int k = 0; k < states; ++k) {
    for (std::int64_t block = 0; block < block_count(n, c.blocksize); ++block) {
      const std::int64_t begin = block * c.blocksize, end = std::min(n, begin + c.blocksize);
      double exact_max = 0, largest_bound = 0;
      for (std::int64_t i = begin; i < end; ++i) {
        exact_max = std::max(exact_max, std::fabs(bounds[i].value[k + 1]));
        largest_bound = std::max(largest_bound, bounds[i].bound[k + 1]);
      }
      if (!std::isfinite(largest_bound)) continue;  // ill-conditioned block
      const float a = r.absmax[k][block];
      if (!(std::fabs(a - exact_max) <= largest_bound)) {
        fail("state " + std::to_string(k) + " absmax of block " + std::to_string(block) + ": kernel " + show_float(a) +
             ", exact max " + show_double(exact_max) + ", bound " + std::to_string(largest_bound));
        continue;
      }
      for (std::int64_t i = begin; i < end; ++i) {
        // The kernel divides its state (within the bound of the exact one) by its own absmax.
        const double s = bounds[i].value[k + 1], e = bounds[i].bound[k + 1];
        double low = 0, high = 0;
        if (a > 0 && e == 0 && exact_f32_quotient(s, a)) {
          low = high = s / a;  // the state is exact and so is the kernel's division: one code
        } else if (a > 0) {
          low = std::min((s - e) / a, (s + e) / a);
          high = std::max((s - e) / a, (s + e) / a);
          low -= std::fabs(low) * 0x1p-23 + 0x1p-149;
          high += std::fabs(high) * 0x1p-23 + 0x1p-149;
        }
        const auto range = reference::admissible_for_interval(*formats[k], low, high);
        const int index = formats[k]->sorted_index_of_code(r.codes[k][i]);
        if (index < range.lowest || index > range.highest) {
          fail("state " + std::to_string(k) + " code of element " + std::to_string(i) + ": " +
               std::to_string(r.codes[k][i]) + " (value " + show_double(formats[k]->code_value(r.codes[k][i])) +
               ") for state " + show_double(s) + " +- " + std::to_string(e) + " over absmax " + show_float(a) +
               "; admissible values " + show_double(formats[k]->sorted_value(range.lowest)) + " .. " +
               show_double(formats[k]->sorted_value(range.highest)));
        }
      }
    }
  }
  if (bad > 0) report_violation(stats, bad, std::to_string(bad) + " violations; first: " + first);
  if (!stats.failed) stats.ill_conditioned += ill_conditioned;
  stats.pass_case(n);
}

// The 8-bit step as an operation family of the metamorphic properties (metamorphic.hpp).
struct Step8Family {
  using Case = Optim8Case;
  using Result = Optim8Result;
  static constexpr const char* operation = "8-bit step";
  static constexpr fixtures::Suite suite = fixtures::Suite::optim8;
  static std::vector<fixtures::OperationFamily> families() { return {fixtures::OperationFamily::optimizer8_step}; }
  static Case draw(const PropertyTarget& t, PropertyStats& stats, Metamorphic which) {
    switch (which) {
      case Metamorphic::layout: return draw_optim8_case(t, stats, true, false, 2000, draw_launch_sized());
      case Metamorphic::launch: return draw_optim8_case(t, stats, true, false, 20000, draw_launch_sized());
      case Metamorphic::determinism: return draw_optim8_case(t, stats, true, false, 4000);
      case Metamorphic::device: return draw_optim8_case(t, stats, true, false, 20000, draw_launch_sized());
    }
    return {};
  }
  static void require_in_domain(const PropertyTarget&, const Case&) {}  // every drawn step is valid on every target
  static Result run(fixtures::Implementation& iut, const Case& c, const LaunchConfig& launch, bool contiguous) {
    return run_optim8(iut, c, launch, contiguous);
  }
  static void expect_same(PropertyStats& stats, const Case& c, const Result& expected, const Result& actual,
                          const std::string& what) {
    expect_same_step8(stats, c, expected, actual, what);
  }
  static void expect_untouched_outside_views(PropertyStats& stats, const Result& strided) {
    expect_untouched_outside_view(stats, strided.param, 0x3C, "8-bit step parameter");
  }
  static std::int64_t elements(const Case& c) { return static_cast<std::int64_t>(c.base.values.size()); }
};

// P9q: a NaN/Inf gradient leaves the parameter, every code and every absmax as they were.
void nonfinite8(const PropertyTarget& t, PropertyStats& stats) {
  const Optim8Case c = drawn<Optim8Case>(t, stats, "case", [&] { return draw_optim8_case(t, stats, true, true, 3000); });
  require_nonfinite_gradient(c.base, "P9q");
  const Optim8Result r = run_optim8(*t.iut, c, drawn_launch(t, stats), false);
  if (c.base.values.empty()) {
    stats.pass_case(0);
    return;
  }
  if (!r.report.nonfinite_gradient) report_violation(stats, 1, "a non-finite gradient was not reported");
  std::vector<std::uint32_t> before(c.base.values.size());
  for (std::size_t i = 0; i < before.size(); ++i) {
    const float p = c.base.values[i].p;
    before[i] = c.base.param_dtype == DType::f32 ? float_bits(p)
                                                 : (c.base.param_dtype == DType::f16 ? float_to_f16(p) : float_to_bf16(p));
  }
  expect_same_bits(stats, before, r.param_bits, c.base.param_dtype, "parameter after a non-finite gradient");
  for (std::size_t k = 0; k < c.codes.size(); ++k) {
    if (c.codes[k] != r.codes[k]) report_violation(stats, 1, "state " + std::to_string(k) + " codes changed on a non-finite gradient");
    for (std::size_t b = 0; b < c.absmax[k].size(); ++b) {
      if (float_bits(c.absmax[k][b]) != float_bits(r.absmax[k][b])) {
        report_violation(stats, 1, "state " + std::to_string(k) + " absmax changed on a non-finite gradient");
      }
    }
  }
  stats.pass_case(static_cast<std::int64_t>(c.base.values.size()));
}

}  // namespace

void append_optimizer8_properties(std::vector<PropertyDef>& catalogue) {
  catalogue.push_back({"P1q", "accuracy-8bit", fixtures::Suite::optim8,
                       "parameters within bound, new absmax within bound, every requantized code admissible", false,
                       false, accuracy8});
  catalogue.push_back({"P2q", "layout-8bit", fixtures::Suite::optim8, "strided parameters and gradients give the contiguous bits",
                       false, false, layout_property<Step8Family>});
  catalogue.push_back({"P3q", "launch-8bit", fixtures::Suite::optim8, "threads, grid and launch splitting do not change a bit", false,
                       false, launch_property<Step8Family>});
  catalogue.push_back({"P4q", "determinism-8bit", fixtures::Suite::optim8, "the same 8-bit step twice gives the same bits", false,
                       false, determinism_property<Step8Family>});
  catalogue.push_back({"P9q", "nonfinite-8bit", fixtures::Suite::optim8,
                       "a NaN/Inf gradient changes no parameter, code or absmax and is reported", false, false,
                       nonfinite8});
  catalogue.push_back({"P13q", "input-immutability-8bit", fixtures::Suite::optim8,
                       "an 8-bit step leaves every byte of its gradient, hyperparameters and state maps unchanged", false,
                       false, immutability_property<Step8Family>});
  catalogue.push_back({"P14q", "no-hidden-state-8bit", fixtures::Suite::optim8,
                       "8-bit steps of other optimizers, block sizes and dtypes give the same bits in order and in reverse order, each order on a fresh instance",
                       false, false, hidden_state_property<Step8Family>, {}, true});
  catalogue.push_back({"P5q", "device-8bit", fixtures::Suite::optim8, "every CUDA device gives the CPU's bits", true, false, device_property<Step8Family>});
}

}  // namespace bitparity::properties
