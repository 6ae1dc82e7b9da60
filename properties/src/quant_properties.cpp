// Quantisation properties P2 P3 P4 P5 P7 P8 P9, each defined once over the registry.
#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/generators.hpp"
#include "bitparity/properties/show.hpp"
#include "metamorphic.hpp"
#include "quant_harness.hpp"

namespace bitparity::properties {

namespace {

using fixtures::HostTensor;

StochasticRounding draw_rounding(PropertyStats& stats, bool allowed) {
  StochasticRounding rounding;
  rounding.enabled = allowed && *rc::gen::arbitrary<bool>();
  if (rounding.enabled) {
    rounding.seed = *rc::gen::arbitrary<std::uint64_t>();
    rounding.stream = *rc::gen::inRange<std::uint64_t>(0, 4);
    rounding.element_offset = *rc::gen::element<std::uint64_t>(0, 1, 4096, (1ull << 32) - 3, (1ull << 40) + 7);
    stats.note("stochastic rounding seed=" + std::to_string(rounding.seed) + " stream=" + std::to_string(rounding.stream) +
               " offset=" + std::to_string(rounding.element_offset));
  }
  return rounding;
}

// A strided input tensor with values in all of its storage, and its contiguous twin.
struct LayoutCase {
  HostTensor strided;
  Layout layout;  // of `strided`
  HostTensor contiguous;
  std::vector<float> logical;
  std::vector<std::int64_t> shape;
};

// The logical values and the contiguous twin of a strided input.
void complete_layout_case(LayoutCase& c, DType dtype) {
  c.logical = fixtures::read_logical(c.strided.view());
  c.contiguous = HostTensor::contiguous(dtype, c.shape);
  fixtures::write_logical(c.contiguous.view(), c.logical);
}

std::int64_t numel_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto size : shape) n *= size;
  return n;
}

// launch_sized: a count from which the launch takes every path it has (draw_launch_sized_numel).
LayoutCase draw_layout_case(const PropertyTarget& t, PropertyStats& stats, std::int64_t max_blocks, bool nonfinite,
                            bool launch_sized = false) {
  LayoutCase c;
  const std::int64_t n = launch_sized ? draw_launch_sized_numel(t.blocksize, kBlocksForEveryCpuPath)
                                      : draw_numel(t.blocksize, max_blocks * t.size_scale, true);
  c.shape = draw_shape(n, 5);
  const Layout layout = draw_layout(c.shape, true);
  const ValueRecipe recipe = draw_values(nonfinite);
  stats.note(describe(layout));
  stats.note(describe(recipe));
  c.strided = make_tensor(t.dtype, layout);
  const CodeTable& table = code_table(t.format->format);
  fill_storage(c.strided, t.dtype, recipe, t.blocksize, table);
  // The view's own blocks get the recipe's structure too (a maximum each, values about its
  // midpoints): storage blocks mixed by a permutation or a slice give a logical block another
  // absmax, with values near no midpoint of it, and tiny or huge absmaxes only by chance.
  fixtures::write_logical(c.strided.view(), synthesize_values(recipe, n, t.blocksize, table, t.dtype));
  c.layout = layout;
  complete_layout_case(c, t.dtype);
  return c;
}

std::vector<std::uint32_t> bits_of(const HostTensor& tensor) { return fixtures::read_logical_bits(tensor.view()); }

// A saved case's output dtype is one the implementation's dequantize writes (the generator draws only
// those): a dtype it declines would be refused, and the refusal judged.
void require_offered_output(const PropertyTarget& t, DType out_dtype) {
  const std::vector<DType> offered = output_dtypes(t, fixtures::OperationFamily::dequantize);
  if (std::find(offered.begin(), offered.end(), out_dtype) != offered.end()) return;
  std::string listed;
  for (const DType dtype : offered) listed += (listed.empty() ? "" : ", ") + std::string(dtype_name(dtype));
  throw CaseFileError(std::string("out_dtype ") + dtype_name(out_dtype) + " is one " + t.iut->name() +
                      "'s dequantize does not write; its cases use " + listed);
}

// What the quantize family draws only where the implementations under test offer it: stochastic
// rounding, and NaN or Inf in the input. A saved case with either, on one that does not, is refused.
void require_offered_conventions(const PropertyTarget& t, const StochasticRounding& rounding, const std::vector<float>& logical) {
  if (rounding.enabled && !target_offers(t, fixtures::OperationFamily::stochastic_rounding)) {
    throw CaseFileError("the case rounds stochastically, which " + t.iut->name() + " does not offer; set 'enabled' to false");
  }
  if (!target_offers(t, fixtures::OperationFamily::nonfinite_blocks)) {
    require_finite_values(logical, t.iut->name() + " declares no NaN and Inf policy, so its cases hold finite values");
  }
}

// P7: absmax exact, every code admissible, dequantised values correctly rounded.
void accuracy(const PropertyTarget& t, PropertyStats& stats, bool nonfinite) {
  const FormatEntry& format = *t.format;
  const auto shape = drawn<std::vector<std::int64_t>>(t, stats, "shape", [&] {
    return draw_shape(draw_numel(t.blocksize, 4 * t.size_scale, nonfinite), 4);
  });
  const std::int64_t n = numel_of(shape);
  const std::vector<float> values = drawn<ValuesInput>(t, stats, "values", [&] {
    const ValueRecipe recipe = draw_values(nonfinite);
    stats.note(describe_shape(shape) + " " + describe(recipe));
    return ValuesInput{t.dtype, synthesize_values(recipe, n, t.blocksize, code_table(format.format), t.dtype)};
  }).values;
  if (static_cast<std::int64_t>(values.size()) != n) {
    throw CaseFileError("the case holds " + std::to_string(values.size()) + " values for a shape of " + std::to_string(n) + " elements");
  }
  if (!nonfinite) {
    if (n == 0) throw CaseFileError("the case holds no values; P7 draws at least one (an empty tensor is P9's case)");
    require_finite_values(values, "P7 draws finite values; a case with NaN or Inf blocks is P9's");
  }
  // Every input is drawn before anything runs: a replay that gets further than the failure needs them all.
  const DType out_dtype = drawn<DType>(t, stats, "out_dtype", [&] { return *rc::gen::elementOf(output_dtypes(t, fixtures::OperationFamily::dequantize)); });
  // A saved case's output dtype is one dequantize writes: u8 and packed4 are storage (replay ran them,
  // and the refusal counted as a violation on cpu and as a kill of a mutant).
  if (out_dtype != DType::f32 && out_dtype != DType::f16 && out_dtype != DType::bf16) {
    throw CaseFileError(std::string("dtype '") + dtype_name(out_dtype) + "' is not a float dtype; use f32, f16 or bf16");
  }
  require_offered_output(t, out_dtype);
  HostTensor input = HostTensor::contiguous(t.dtype, shape);
  fixtures::write_logical(input.view(), values);
  const QuantOutput out = run_quantize(*t.iut, input.view(), format, t.blocksize, {}, {});
  check_against_reference(stats, format, t.blocksize, values, out, false);

  const HostTensor deq = run_dequantize(*t.iut, out, format, t.blocksize, out_dtype, contiguous_layout(shape), {});
  std::vector<std::uint8_t> codes(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) codes[i] = code_at(out.codes, i, format.bits);
  const reference::DequantizeRounding rounding = declared_dequantize_rounding(*t.iut);
  const auto expected = [&] {
    const ReferenceTimer timer(stats);
    return reference::reference_dequantize(codes, out.absmax, format_reference(format.format), t.blocksize, out_dtype, rounding);
  }();
  expect_same_bits(stats, expected, bits_of(deq), out_dtype, dequantize_check_name(rounding, out_dtype));
  stats.pass_case(n);
}

// Quantize, then dequantize its codes and convert the input, as an operation family of the
// metamorphic properties (metamorphic.hpp): strided runs read the strided input and write strided
// outputs (storage outside them filled with 0x5A), contiguous runs use the contiguous twins.
struct QuantizeFamily {
  struct Case {
    const FormatEntry* format = nullptr;
    std::int64_t blocksize = 0;
    DType dtype = DType::f32;  // of the input
    LayoutCase input;
    StochasticRounding rounding;
    DType out_dtype = DType::f32;
    Layout out_layout;
    // The implementation under test declares that dequantize rounds the fp32 product: the baseline's
    // dequantize is compared the same way (its fp32 product, through its own convert).
    bool f32_product_rounding = false;
  };
  struct Result {
    QuantOutput quantized;
    HostTensor dequantized;
    HostTensor converted;
    bool converts = true;  // false: the implementation offers no conversions, `converted` is unused
  };
  static constexpr const char* operation = "quantize, dequantize and convert";
  static constexpr fixtures::Suite suite = fixtures::Suite::quant;
  static std::vector<fixtures::OperationFamily> families() {
    return {fixtures::OperationFamily::quantize, fixtures::OperationFamily::dequantize};
  }
  static Case draw(const PropertyTarget& t, PropertyStats& stats, Metamorphic which) {
    Case c;
    c.format = t.format;
    c.blocksize = t.blocksize;
    // NaN/Inf and stochastic rounding only where both implementations promise their conventions.
    const bool nonfinite = target_offers(t, fixtures::OperationFamily::nonfinite_blocks);
    const bool stochastic = target_offers(t, fixtures::OperationFamily::stochastic_rounding);
    switch (which) {
      case Metamorphic::layout:
        c.input = draw_layout_case(t, stats, 3, nonfinite && *rc::gen::arbitrary<bool>(), draw_launch_sized());
        break;
      case Metamorphic::launch: c.input = draw_layout_case(t, stats, 6, false, draw_launch_sized()); break;
      case Metamorphic::determinism: c.input = draw_layout_case(t, stats, 4, nonfinite && *rc::gen::arbitrary<bool>()); break;
      case Metamorphic::device:
        c.input = draw_layout_case(t, stats, 8, nonfinite && *rc::gen::arbitrary<bool>(), draw_launch_sized());
        break;
    }
    c.rounding = stochastic ? draw_rounding(stats, true) : StochasticRounding{};
    c.out_dtype = *rc::gen::elementOf(output_dtypes(t, fixtures::OperationFamily::dequantize));
    c.out_layout = draw_layout(c.input.shape, false);
    c.dtype = t.dtype;
    c.f32_product_rounding = t.iut->follows(fixtures::Convention::dequantize_rounds_f32_product);
    stats.note(std::string("output ") + dtype_name(c.out_dtype) + " " + describe(c.out_layout));
    return c;
  }
  static void require_in_domain(const PropertyTarget& t, const Case& c) {
    PropertyTarget of_case = t;
    of_case.format = c.format;
    require_offered_output(of_case, c.out_dtype);
    require_offered_conventions(t, c.rounding, c.input.logical);
  }
  static Result run(fixtures::Implementation& iut, const Case& c, const LaunchConfig& launch, bool contiguous) {
    Result r;
    const TensorView input = contiguous ? c.input.contiguous.view() : c.input.strided.view();
    const Layout out_layout = contiguous ? contiguous_layout(c.input.shape) : c.out_layout;
    r.quantized = run_quantize(iut, input, *c.format, c.blocksize, c.rounding, launch);
    if (c.f32_product_rounding && c.out_dtype != DType::f32 && !iut.follows(fixtures::Convention::dequantize_rounds_f32_product)) {
      const HostTensor product = run_dequantize(iut, r.quantized, *c.format, c.blocksize, DType::f32, out_layout, launch);
      r.dequantized = make_tensor(c.out_dtype, out_layout, 0x5A);
      iut.convert(product.view(), r.dequantized.view(), launch);
    } else {
      r.dequantized = run_dequantize(iut, r.quantized, *c.format, c.blocksize, c.out_dtype, out_layout, launch);
    }
    r.converted = make_tensor(c.out_dtype, out_layout, 0x5A);
    r.converts = iut.offers(fixtures::OperationFamily::convert);
    if (r.converts) iut.convert(input, r.converted.view(), launch);
    return r;
  }
  static void expect_same(PropertyStats& stats, const Case& c, const Result& expected, const Result& actual,
                          const std::string& what) {
    expect_same_quantization(stats, expected.quantized, actual.quantized, what + " (quantize)", c.format->bits,
                             elements(c));
    expect_same_bits(stats, bits_of(expected.dequantized), bits_of(actual.dequantized), c.out_dtype, what + " (dequantize)");
    if (expected.converts && actual.converts) {
      expect_same_bits(stats, bits_of(expected.converted), bits_of(actual.converted), c.out_dtype, what + " (convert)");
    }
  }
  static void expect_untouched_outside_views(PropertyStats& stats, const Result& strided) {
    expect_untouched_outside_view(stats, strided.dequantized, 0x5A, "dequantize into a strided output");
    if (strided.converts) expect_untouched_outside_view(stats, strided.converted, 0x5A, "convert into a strided output");
  }
  static std::int64_t elements(const Case& c) { return static_cast<std::int64_t>(c.input.logical.size()); }
};

nlohmann::json encode_input(const QuantizeFamily::Case& c) {
  return {{"format", c.format->name},
          {"blocksize", c.blocksize},
          {"shape", c.input.shape},
          {"input", properties::encode_input(TensorInput{c.dtype, c.input.layout, c.input.strided})},
          {"rounding", properties::encode_input(c.rounding)},
          {"out_dtype", dtype_name(c.out_dtype)},
          {"out_layout", properties::encode_input(c.out_layout)}};
}

void decode_input(const nlohmann::json& j, QuantizeFamily::Case& c) {
  for (const char* key : {"format", "blocksize", "shape", "input", "rounding", "out_dtype", "out_layout"}) {
    if (!j.contains(key)) throw CaseFileError(std::string("a quantization case needs '") + key + "'");
  }
  try {
    c.format = &find_format(j.at("format").get<std::string>());
  } catch (const Error& error) {
    throw CaseFileError(error.what());
  }
  properties::decode_input(j.at("blocksize"), c.blocksize);
  properties::decode_input(j.at("shape"), c.input.shape);
  TensorInput input;
  properties::decode_input(j.at("input"), input);
  c.dtype = input.dtype;
  c.input.strided = std::move(input.tensor);
  c.input.layout = input.layout;
  properties::decode_input(j.at("rounding"), c.rounding);
  properties::decode_input(j.at("out_dtype"), c.out_dtype);
  properties::decode_input(j.at("out_layout"), c.out_layout);
  // What the property could not have drawn is refused as data, before anything runs (a u8 output
  // replayed as a kill of a mutant, since cpu refused it too).
  if (c.out_dtype != DType::f32 && c.out_dtype != DType::f16 && c.out_dtype != DType::bf16) {
    throw CaseFileError(std::string("out_dtype '") + dtype_name(c.out_dtype) + "' is not a float dtype; use f32, f16 or bf16");
  }
  const auto& sizes = c.format->block_sizes;
  if (std::find(sizes.begin(), sizes.end(), c.blocksize) == sizes.end()) {
    std::string listed;
    for (const auto size : sizes) listed += (listed.empty() ? "" : ", ") + std::to_string(size);
    throw CaseFileError("block size " + std::to_string(c.blocksize) + " is not one " + c.format->name + " takes; use one of " + listed);
  }
  const std::int64_t n = numel_of(c.input.shape);
  if (numel_of(c.input.layout.sizes) != n || numel_of(c.out_layout.sizes) != n) {
    throw CaseFileError("the input and output layouts must hold the shape's " + std::to_string(n) + " elements");
  }
  require_output_layout(c.out_layout, "the output layout 'out_layout'");
  complete_layout_case(c.input, c.dtype);
}

// P8: stochastic rounding picks a bracketing code, is keyed by the global index (pieces processed
// at their global offsets give the whole tensor's bits), and is unbiased.
void stochastic_rounding(const PropertyTarget& t, PropertyStats& stats) {
  const FormatEntry& format = *t.format;
  const CodeTable& table = code_table(format.format);
  const std::vector<float> values = drawn<ValuesInput>(t, stats, "values", [&] {
    const std::int64_t count = draw_numel(t.blocksize, 6 * t.size_scale, false);
    const ValueRecipe recipe = draw_values(false);
    stats.note("numel=" + std::to_string(count) + " " + describe(recipe));
    return ValuesInput{t.dtype, synthesize_values(recipe, count, t.blocksize, table, t.dtype)};
  }).values;
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  if (n == 0) throw CaseFileError("the case holds no values; P8 draws at least one");
  require_finite_values(values, "P8 draws finite values (a NaN or Inf has no bracketing codes)");
  HostTensor input = HostTensor::contiguous(t.dtype, {n});
  fixtures::write_logical(input.view(), values);
  const StochasticRounding rounding = drawn<StochasticRounding>(t, stats, "rounding", [&] {
    StochasticRounding drawn_rounding = draw_rounding(stats, false);
    drawn_rounding.enabled = true;
    drawn_rounding.seed = *rc::gen::arbitrary<std::uint64_t>();
    drawn_rounding.element_offset = *rc::gen::element<std::uint64_t>(0, 12345, (1ull << 33) + 1);
    return drawn_rounding;
  });
  if (!rounding.enabled) {
    throw CaseFileError("the case's rounding is not enabled; P8 checks stochastic rounding, so set 'enabled' to true");
  }
  // Pieces cut at block boundaries, each quantised as its own call at its global offset (drawn
  // before anything runs, as every input).
  const std::int64_t blocks = block_count(n, t.blocksize);
  const std::int64_t cut_blocks = drawn<std::int64_t>(t, stats, "cut_blocks", [&] { return *rc::gen::inRange<std::int64_t>(1, blocks + 1); });
  if (cut_blocks < 1 || cut_blocks > blocks) {
    throw CaseFileError("cut_blocks is " + std::to_string(cut_blocks) + "; the tensor has " + std::to_string(blocks) +
                        " blocks, so use a piece of 1 to " + std::to_string(blocks) + " blocks");
  }
  const QuantOutput whole = run_quantize(*t.iut, input.view(), format, t.blocksize, rounding, {});
  check_against_reference(stats, format, t.blocksize, values, whole, true);

  for (std::int64_t first_block = 0; first_block < blocks; first_block += cut_blocks) {
    const std::int64_t begin = first_block * t.blocksize, end = std::min(n, (first_block + cut_blocks) * t.blocksize);
    TensorView piece = input.view();
    piece.index = make_index({end - begin}, {1}, begin);
    StochasticRounding at_offset = rounding;
    at_offset.element_offset = rounding.element_offset + static_cast<std::uint64_t>(begin);
    const QuantOutput part = run_quantize(*t.iut, piece, format, t.blocksize, at_offset, {});
    for (std::int64_t i = begin; i < end; ++i) {
      const int a = code_at(whole.codes, i, format.bits), b = code_at(part.codes, i - begin, format.bits);
      if (a != b) {
        report_violation(stats, 1, "stochastic rounding of element " + std::to_string(i) + " differs when the tensor is " +
                                       "processed in pieces of " + std::to_string(cut_blocks) + " blocks at their global offsets: whole " +
                                       std::to_string(a) + ", piece " + std::to_string(b));
      }
    }
  }
  stats.pass_case(n);
}

// P8, statistical half: many copies of one value between two codes; the mean of the chosen code
// values must be v within 6 standard deviations of the binomial mean (false alarm < 2e-9), plus
// the kernel's bias bound of 2^-22 of the gap (24-bit uniform draw and the fp32 probability).
void stochastic_unbiased(const PropertyTarget& t, PropertyStats& stats) {
  const FormatEntry& format = *t.format;
  const CodeTable& table = code_table(format.format);
  const float x = drawn<float>(t, stats, "value", [&] {
    const int j = *rc::gen::inRange(0, table.sorted_count - 1);
    const double fraction = *rc::gen::inRange(1, 1000) / 1000.0;
    // absmax 1, so v = x exactly; rounding to a 16-bit dtype may move x into a neighbouring gap.
    const float drawn_x = round_to_dtype(table.sorted_values[j] + fraction * (table.sorted_values[j + 1] - table.sorted_values[j]), t.dtype);
    RC_PRE(drawn_x >= table.sorted_values[0] && drawn_x <= table.sorted_values[table.sorted_count - 1]);  // v inside the map
    return drawn_x;
  });
  require_values_of_dtype({x}, t.dtype);  // the tensor holds it in t.dtype: the mean is compared with x as held
  if (!(x >= table.sorted_values[0] && x <= table.sorted_values[table.sorted_count - 1])) {
    throw CaseFileError("the value lies outside the format's code range");
  }
  int k = 0;
  while (k + 2 < table.sorted_count && table.sorted_values[k + 1] <= x) ++k;
  const double below = table.sorted_values[k], above = table.sorted_values[k + 1];
  constexpr std::int64_t kSamples = 1 << 15;
  const std::int64_t per_block = t.blocksize - 1;
  const std::int64_t blocks = (kSamples + per_block - 1) / per_block;
  std::vector<float> values(static_cast<std::size_t>(blocks * t.blocksize), x);
  for (std::int64_t b = 0; b < blocks; ++b) values[b * t.blocksize] = 1.0f;
  HostTensor input = HostTensor::contiguous(t.dtype, {static_cast<std::int64_t>(values.size())});
  fixtures::write_logical(input.view(), values);
  StochasticRounding rounding;
  rounding.enabled = true;
  rounding.seed = drawn<std::uint64_t>(t, stats, "rounding_seed", [] { return *rc::gen::arbitrary<std::uint64_t>(); });
  const QuantOutput out = run_quantize(*t.iut, input.view(), format, t.blocksize, rounding, {});
  const reference::FormatReference& ref = format_reference(format.format);
  double sum = 0;
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(values.size()); ++i) {
    if (i % t.blocksize == 0) continue;
    sum += ref.code_value(code_at(out.codes, i, format.bits));
    ++count;
  }
  const double v = x, mean = sum / count;
  const double gap = above - below;
  const double p = std::clamp((v - below) / gap, 0.0, 1.0);
  const double sigma = gap * std::sqrt(p * (1 - p) / count);
  const double bound = 6 * sigma + gap * 0x1p-22;
  stats.observe_ratio(bound > 0 ? std::fabs(mean - v) / bound : 0.0);
  if (std::fabs(mean - v) > bound) {
    std::ostringstream text;
    text << "stochastic rounding is biased: " << count << " copies of v=" << show_double(v) << " between codes "
         << show_double(below) << " and " << show_double(above) << " average " << show_double(mean)
         << ", |mean - v| = " << std::fabs(mean - v) << " > 6 sigma + 2^-22 gap = " << bound;
    report_violation(stats, 1, text.str());
  }
  stats.pass_case(count);
}

}  // namespace

void append_quant_properties(std::vector<PropertyDef>& catalogue) {
  catalogue.push_back({"P7", "quantization", fixtures::Suite::quant,
                       "absmax is exact, every code is admissible, dequantized = correctly rounded code*absmax", false,
                       false, [](const PropertyTarget& t, PropertyStats& s) { accuracy(t, s, false); }, {fixtures::OperationFamily::quantize, fixtures::OperationFamily::dequantize}});
  catalogue.push_back({"P2", "layout", fixtures::Suite::quant,
                       "strided, permuted, sliced, offset, broadcast and chunk+all_gather inputs and outputs give the "
                       "contiguous bits, and nothing outside an output view is written",
                       false, false, layout_property<QuantizeFamily>, {fixtures::OperationFamily::quantize, fixtures::OperationFamily::dequantize}});
  catalogue.push_back({"P3", "launch", fixtures::Suite::quant, "threads, grid and launch splitting do not change a bit", false, false,
                       launch_property<QuantizeFamily>, {fixtures::OperationFamily::quantize, fixtures::OperationFamily::dequantize}});
  catalogue.push_back({"P4", "determinism", fixtures::Suite::quant, "the same call twice gives the same bits", false, false,
                       determinism_property<QuantizeFamily>, {fixtures::OperationFamily::quantize, fixtures::OperationFamily::dequantize}});
  catalogue.push_back({"P8", "stochastic-rounding", fixtures::Suite::quant,
                       "codes bracket v, are keyed by the global index (pieces at global offsets agree with the whole)",
                       false, false, stochastic_rounding,
                       {fixtures::OperationFamily::quantize, fixtures::OperationFamily::stochastic_rounding}});
  catalogue.push_back({"P8u", "stochastic-unbiased", fixtures::Suite::quant,
                       "the mean of stochastic codes is v within 6 sigma + 2^-22 of the code gap", false, false,
                       stochastic_unbiased, {fixtures::OperationFamily::quantize, fixtures::OperationFamily::stochastic_rounding}});
  catalogue.push_back({"P9", "special-values", fixtures::Suite::quant,
                       "NaN/Inf blocks are reported with absmax NaN and zero codes; zero blocks, subnormals and empty "
                       "tensors follow the policy; finite blocks stay exact",
                       false, false, [](const PropertyTarget& t, PropertyStats& s) { accuracy(t, s, true); },
                       {fixtures::OperationFamily::quantize, fixtures::OperationFamily::dequantize,
                        fixtures::OperationFamily::nonfinite_blocks}});
  catalogue.push_back({"P13", "input-immutability", fixtures::Suite::quant,
                       "quantize, dequantize and convert leave every byte of their inputs unchanged: tensor storage, "
                       "codes, absmax and code maps",
                       false, false, immutability_property<QuantizeFamily>, QuantizeFamily::families()});
  catalogue.push_back({"P14", "no-hidden-state", fixtures::Suite::quant,
                       "calls with other maps, block sizes and dtypes between them give the same bits in order and in reverse order, each order on a fresh instance",
                       false, false, hidden_state_property<QuantizeFamily>, QuantizeFamily::families(), true});
  catalogue.push_back({"P5", "device", fixtures::Suite::quant, "every CUDA device gives the CPU's bits", true, false, device_property<QuantizeFamily>, {fixtures::OperationFamily::quantize, fixtures::OperationFamily::dequantize}});
}

}  // namespace bitparity::properties
