#include "bitparity/properties/generators.hpp"

#include <rapidcheck.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <sstream>

#include "bitparity/kernels/convert.hpp"
#include "bitparity/kernels/tensor_view.hpp"

namespace bitparity::properties {

namespace {

const char* profile_name(ValueProfile profile) {
  switch (profile) {
    case ValueProfile::mixed: return "mixed";
    case ValueProfile::near_midpoints: return "near_midpoints";
    case ValueProfile::on_codes: return "on_codes";
    case ValueProfile::tiny: return "tiny";
    case ValueProfile::uniform: return "uniform";
    case ValueProfile::zeros: return "zeros";
  }
  return "?";
}

struct DTypeRange {
  int min_exponent;   // exponent of the smallest subnormal
  int max_exponent;   // exponent of the largest finite binade
  int fraction_bits;
};

DTypeRange range_of(DType dtype) {
  switch (dtype) {
    case DType::f16: return {-24, 15, 10};
    case DType::bf16: return {-133, 127, 7};
    default: return {-149, 127, 23};
  }
}

float max_finite(DType dtype) {
  switch (dtype) {
    case DType::f16: return 65504.0f;
    case DType::bf16: return bf16_to_float(0x7F7F);
    default: return std::numeric_limits<float>::max();
  }
}

// Step a finite value by k units in the last place of dtype, staying finite.
float step_ulps(float value, int k, DType dtype) {
  for (int i = 0; i < std::abs(k); ++i) {
    const float toward = k > 0 ? std::numeric_limits<float>::infinity() : -std::numeric_limits<float>::infinity();
    if (dtype == DType::f32) {
      value = std::nextafter(value, toward);
    } else {
      // The next dtype value: step in fp32 until rounding to dtype moves.
      const float start = value;
      const float spacing = std::ldexp(1.0f, std::max(std::ilogb(value == 0.0f ? 1e-30f : value) - range_of(dtype).fraction_bits,
                                                      range_of(dtype).min_exponent));
      value = round_to_dtype(static_cast<double>(start) + (k > 0 ? spacing : -spacing), dtype);
    }
    if (!std::isfinite(value) || std::fabs(value) > max_finite(dtype)) return std::copysign(max_finite(dtype), value);
  }
  return value;
}

class Synthesizer {
 public:
  Synthesizer(const ValueRecipe& recipe, const CodeTable& table, DType dtype)
      : recipe_(recipe), table_(table), dtype_(dtype), rng_(recipe.seed) {}

  float block_maximum() {
    const DTypeRange range = range_of(dtype_);
    int exponent;
    if (uniform_int(0, 9) < 7) {
      exponent = uniform_int(std::max(range.min_exponent + 12, -20), std::min(range.max_exponent, 20));
    } else {
      exponent = uniform_int(range.min_exponent, range.max_exponent);
    }
    // A power of two in one block of four: x / absmax is then exact, and an fp32 value next to a
    // midpoint reaches the kernel's decision unrounded.
    const double mantissa = uniform_int(0, 3) == 0 ? 1.0 : 1.0 + uniform_real();
    const double value = std::ldexp(mantissa, exponent) * (uniform_int(0, 1) ? -1.0 : 1.0);
    const float rounded = round_to_dtype(value, dtype_);
    if (rounded == 0.0f || !std::isfinite(rounded)) return std::copysign(max_finite(dtype_), value);
    return rounded;
  }

  float element(float absmax) {
    ValueProfile profile = recipe_.profile;
    if (profile == ValueProfile::mixed) {
      constexpr ValueProfile kChoices[] = {ValueProfile::near_midpoints, ValueProfile::on_codes, ValueProfile::tiny,
                                           ValueProfile::uniform, ValueProfile::zeros};
      profile = kChoices[uniform_int(0, 4)];
    }
    const double a = std::fabs(static_cast<double>(absmax));
    switch (profile) {
      case ValueProfile::near_midpoints: {
        const int i = uniform_int(0, table_.sorted_count - 2);
        const double midpoint = (static_cast<double>(table_.sorted_values[i]) + table_.sorted_values[i + 1]) / 2.0;
        return clamp(step_ulps(round_to_dtype(midpoint * a, dtype_), uniform_int(-3, 3), dtype_), absmax);
      }
      case ValueProfile::on_codes: {
        const int i = uniform_int(0, table_.sorted_count - 1);
        return round_to_dtype(static_cast<double>(table_.sorted_values[i]) * a, dtype_);
      }
      case ValueProfile::tiny: {
        const DTypeRange range = range_of(dtype_);
        const int exponent = uniform_int(range.min_exponent, range.min_exponent + 30);
        return round_to_dtype(std::ldexp(1.0 + uniform_real(), exponent) * (uniform_int(0, 1) ? -1 : 1), dtype_);
      }
      case ValueProfile::uniform: return clamp(round_to_dtype((2.0 * uniform_real() - 1.0) * a, dtype_), absmax);
      default: return uniform_int(0, 1) ? 0.0f : -0.0f;
    }
  }

  float nonfinite() {
    switch (uniform_int(0, 2)) {
      case 0: return std::numeric_limits<float>::quiet_NaN();
      case 1: return std::numeric_limits<float>::infinity();
      default: return -std::numeric_limits<float>::infinity();
    }
  }

  int uniform_int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double uniform_real() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }

 private:
  static float clamp(float value, float absmax) {
    const float a = std::fabs(absmax);
    return std::max(-a, std::min(a, value));
  }

  ValueRecipe recipe_;
  const CodeTable& table_;
  DType dtype_;
  std::mt19937_64 rng_;
};

}  // namespace

float round_to_dtype(double value, DType dtype) {
  switch (dtype) {
    case DType::f16: return f16_to_float(round_double_to_narrow<5, 10>(value));
    case DType::bf16: return bf16_to_float(round_double_to_narrow<8, 7>(value));
    default: return static_cast<float>(value);
  }
}

void showValue(ValueProfile profile, std::ostream& os) { os << profile_name(profile); }

void showValue(const ValueRecipe& recipe, std::ostream& os) {
  os << "values{" << profile_name(recipe.profile) << ", seed=" << recipe.seed
     << (recipe.nonfinite ? ", with NaN/Inf" : "") << "}";
}

void showValue(const Layout& layout, std::ostream& os) {
  os << "layout{" << layout.recipe << " sizes=[";
  for (std::size_t i = 0; i < layout.sizes.size(); ++i) os << (i ? "," : "") << layout.sizes[i];
  os << "] strides=[";
  for (std::size_t i = 0; i < layout.strides.size(); ++i) os << (i ? "," : "") << layout.strides[i];
  os << "] offset=" << layout.offset << " storage=" << layout.storage_elements << "}";
}

std::string describe(const ValueRecipe& recipe) {
  std::ostringstream os;
  showValue(recipe, os);
  return os.str();
}

std::string describe(const Layout& layout) {
  std::ostringstream os;
  showValue(layout, os);
  return os.str();
}

std::string describe_shape(const std::vector<std::int64_t>& shape) {
  std::ostringstream os;
  os << "shape=[";
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << "]";
  return os.str();
}

std::int64_t draw_numel(std::int64_t blocksize, std::int64_t max_blocks, bool allow_empty) {
  // Degenerate counts (one element, empty) stay a small minority: they cannot show most errors.
  enum Kind { multiple, tail, short_of, single, arbitrary, empty };
  const Kind kind = *rc::gen::weightedElement<Kind>(
      {{3, multiple}, {3, tail}, {3, short_of}, {1, single}, {5, arbitrary}, {allow_empty ? 1u : 0u, empty}});
  const std::int64_t k = *rc::gen::inRange<std::int64_t>(1, max_blocks + 1);
  switch (kind) {
    case multiple: return k * blocksize;      // exact multiple
    case tail: return k * blocksize + 1;      // a single-element tail
    case short_of: return k * blocksize - 1;  // one short of a multiple
    case single: return 1;
    case arbitrary: return *rc::gen::inRange<std::int64_t>(1, max_blocks * blocksize + 1);
    default: return 0;
  }
}

bool draw_launch_sized() { return *rc::gen::resize(100, rc::gen::inRange(0, 8)) == 7; }

std::int64_t draw_launch_sized_numel(std::int64_t blocksize, std::int64_t min_blocks) {
  const std::int64_t blocks = std::max(min_blocks, (kElementsForEveryCpuPath + blocksize - 1) / blocksize);
  const std::int64_t k = *rc::gen::inRange<std::int64_t>(blocks, blocks + 17);
  return k * blocksize + *rc::gen::inRange<std::int64_t>(blocksize > 1 ? -1 : 0, 2);
}

float draw_block_absmax(DType input_dtype) {
  enum Kind { full_mantissa, input_dtype_value, power_of_two, subnormal, zero, overflowing };
  const Kind kind = *rc::gen::weightedElement<Kind>(
      {{6, full_mantissa}, {3, input_dtype_value}, {2, power_of_two}, {1, subnormal}, {1, zero}, {2, overflowing}});
  const auto mantissa = [] { return 1.0 + *rc::gen::inRange<std::uint32_t>(0, 1u << 23) * 0x1p-23; };
  switch (kind) {
    case full_mantissa: return static_cast<float>(std::ldexp(mantissa(), *rc::gen::inRange(-40, 41)));
    case input_dtype_value: return round_to_dtype(std::ldexp(mantissa(), *rc::gen::inRange(-14, 15)), input_dtype);  // f16 normal range
    case power_of_two: return std::ldexp(1.0f, *rc::gen::inRange(-149, 128));
    case subnormal: return std::ldexp(static_cast<float>(*rc::gen::inRange<std::uint32_t>(1, 1u << 23)), -149);
    case zero: return 0.0f;
    case overflowing: {
      // Around f16's largest finite value (65504) and fp32's (and so bf16's): products of the
      // largest codes overflow, round to the largest finite value, or stay just below it.
      const bool f16_edge = *rc::gen::arbitrary<bool>();
      const double top = f16_edge ? 65504.0 : static_cast<double>(std::numeric_limits<float>::max());
      return static_cast<float>(std::min(top * (0.995 + *rc::gen::inRange(0, 1001) * 1e-5),
                                         static_cast<double>(std::numeric_limits<float>::max())));
    }
  }
  return 1.0f;
}

std::vector<std::int64_t> draw_shape(std::int64_t numel, int max_dims) {
  std::vector<std::int64_t> shape = {numel};
  const int splits = *rc::gen::inRange(0, max_dims);
  for (int s = 0; s < splits && static_cast<int>(shape.size()) < max_dims; ++s) {
    const int dim = *rc::gen::inRange<int>(0, static_cast<int>(shape.size()));
    const std::int64_t size = shape[dim];
    std::vector<std::int64_t> divisors;
    for (std::int64_t d = 1; d <= std::min<std::int64_t>(size, 64); ++d) {
      if (size % d == 0) divisors.push_back(d);
    }
    const std::int64_t outer = *rc::gen::elementOf(divisors);  // 1 inserts a unit dimension
    shape[dim] = size / outer;
    shape.insert(shape.begin() + dim, outer);
  }
  return shape;
}

Layout contiguous_layout(const std::vector<std::int64_t>& sizes) {
  Layout layout;
  layout.sizes = sizes;
  layout.strides = contiguous_strides(sizes);
  layout.storage_elements = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{1}, std::multiplies<>());
  layout.recipe = "contiguous";
  return layout;
}

namespace {

std::int64_t storage_needed(const Layout& layout) {
  std::int64_t last = layout.offset;
  for (std::size_t d = 0; d < layout.sizes.size(); ++d) {
    if (layout.sizes[d] == 0) return layout.offset;
    last += (layout.sizes[d] - 1) * layout.strides[d];
  }
  return last + 1;
}

// One torch.chunk piece along `dim` of a contiguous parent holding `pieces` such pieces: the
// parent's strides, an offset to the piece, storage for the whole parent.
Layout chunk_piece_layout(const std::vector<std::int64_t>& sizes, int dim, std::int64_t pieces, std::int64_t index) {
  std::vector<std::int64_t> parent = sizes;
  parent[dim] *= pieces;
  Layout layout;
  layout.sizes = sizes;
  layout.strides = contiguous_strides(parent);
  layout.offset = index * sizes[dim] * layout.strides[dim];
  layout.recipe = "chunk piece " + std::to_string(index) + "/" + std::to_string(pieces) + " of dim " + std::to_string(dim);
  return layout;
}

}  // namespace

Layout chunk_gather_layout(const std::vector<std::int64_t>& sizes, int dim, std::int64_t k) {
  std::vector<std::int64_t> chunk = sizes;
  chunk[dim] /= k;
  const std::vector<std::int64_t> chunk_strides = contiguous_strides(chunk);
  const std::int64_t chunk_numel = std::accumulate(chunk.begin(), chunk.end(), std::int64_t{1}, std::multiplies<>());
  Layout layout;
  for (int d = 0; d < static_cast<int>(sizes.size()); ++d) {
    if (d == dim) {
      layout.sizes.push_back(k);
      layout.strides.push_back(chunk_numel);
    }
    layout.sizes.push_back(chunk[d]);
    layout.strides.push_back(chunk_strides[d]);
  }
  layout.recipe = "chunk+all_gather(dim=" + std::to_string(dim) + ",k=" + std::to_string(k) + ")";
  layout.storage_elements = k * chunk_numel;
  return layout;
}

Layout draw_layout(const std::vector<std::int64_t>& sizes, bool allow_broadcast, bool keep_shape) {
  const int ndim = static_cast<int>(sizes.size());
  const int kind = *rc::gen::inRange(0, 5);  // 0 contiguous, 1-2 strided, 3 chunk + all_gather, 4 chunk piece
  Layout layout;
  if (kind == 4 && ndim > 0) {
    const int dim = *rc::gen::inRange(0, ndim);
    const std::int64_t pieces = *rc::gen::inRange<std::int64_t>(2, 5);
    const std::int64_t index = *rc::gen::inRange<std::int64_t>(0, pieces);
    layout = chunk_piece_layout(sizes, dim, pieces, index);
    std::int64_t parent_numel = pieces;
    for (auto size : sizes) parent_numel *= size;
    layout.storage_elements = std::max(parent_numel, storage_needed(layout));
    return layout;
  }
  if (kind == 3 && ndim < 8 && !keep_shape) {
    std::vector<std::pair<int, std::int64_t>> splits;
    for (int d = 0; d < ndim; ++d) {
      for (std::int64_t k = 2; k <= std::min<std::int64_t>(sizes[d], 8); ++k) {
        if (sizes[d] % k == 0) splits.push_back({d, k});
      }
    }
    if (!splits.empty()) {
      const auto [dim, k] = *rc::gen::elementOf(splits);
      layout = chunk_gather_layout(sizes, dim, k);
    }
  }
  if (layout.sizes.empty() && kind != 0) {
    // Strided: a storage order of the dimensions, steps (slices with step), padding, broadcasts.
    const auto keys = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(ndim), rc::gen::inRange(0, 1000));
    const auto steps = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(ndim), rc::gen::inRange(1, 4));
    const auto pads = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(ndim), rc::gen::inRange(0, 4));
    std::vector<int> broadcast(ndim, 0);
    if (allow_broadcast) {
      broadcast = *rc::gen::container<std::vector<int>>(static_cast<std::size_t>(ndim),
                                                         rc::gen::weightedElement<int>({{5, 0}, {1, 1}}));
    }
    std::vector<int> order(ndim);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return keys[a] > keys[b]; });  // innermost first
    layout.sizes = sizes;
    layout.strides.assign(ndim, 0);
    std::int64_t running = 1;
    for (int d : order) {
      layout.strides[d] = broadcast[d] ? 0 : running * steps[d];
      if (!broadcast[d]) running = running * steps[d] * std::max<std::int64_t>(1, sizes[d]) + pads[d];
    }
    layout.recipe = "strided(order=";
    for (int d : order) layout.recipe += std::to_string(d);
    layout.recipe += ")";
  }
  if (layout.sizes.empty()) layout = contiguous_layout(sizes);
  layout.offset = kind == 0 ? 0 : *rc::gen::inRange(0, 9);
  layout.storage_elements = storage_needed(layout) + (kind == 0 ? 0 : *rc::gen::inRange(0, 4));
  return layout;
}

ValueRecipe draw_values(bool nonfinite) {
  ValueRecipe recipe;
  recipe.profile = *rc::gen::element(ValueProfile::mixed, ValueProfile::mixed, ValueProfile::near_midpoints,
                                     ValueProfile::on_codes, ValueProfile::tiny, ValueProfile::uniform,
                                     ValueProfile::zeros);
  recipe.seed = *rc::gen::arbitrary<std::uint64_t>();
  recipe.nonfinite = nonfinite;
  return recipe;
}

LaunchConfig draw_launch() {
  LaunchConfig launch;
  launch.threads = *rc::gen::element(1, 2, 3, 7, 32, 64, 96, 256, 1024);
  launch.max_grid = *rc::gen::element<std::int64_t>(0, 1, 2, 5, 64);
  launch.blocks_per_launch = *rc::gen::element<std::int64_t>(0, 1, 2, 3, 7);
  return launch;
}

LaunchConfig draw_launch_or_default() {
  if (*rc::gen::inRange(0, 3) == 0) return {};
  return draw_launch();
}

std::vector<float> synthesize_values(const ValueRecipe& recipe, std::int64_t n, std::int64_t blocksize,
                                     const CodeTable& table, DType dtype) {
  Synthesizer synth(recipe, table, dtype);
  std::vector<float> values(static_cast<std::size_t>(n));
  for (std::int64_t begin = 0; begin < n; begin += blocksize) {
    const std::int64_t end = std::min(n, begin + blocksize);
    const bool zero_block = recipe.profile == ValueProfile::zeros || synth.uniform_int(0, 15) == 0;
    const float absmax = zero_block ? 0.0f : synth.block_maximum();
    for (std::int64_t i = begin; i < end; ++i) values[i] = zero_block ? synth.element(0.0f) * 0.0f : synth.element(absmax);
    if (!zero_block) values[begin + synth.uniform_int(0, static_cast<int>(end - begin - 1))] = absmax;
    if (recipe.nonfinite && synth.uniform_int(0, 2) == 0) {
      const int planted = synth.uniform_int(1, 2);
      for (int p = 0; p < planted; ++p) values[begin + synth.uniform_int(0, static_cast<int>(end - begin - 1))] = synth.nonfinite();
    }
  }
  return values;
}

void fill_storage(fixtures::HostTensor& tensor, DType dtype, const ValueRecipe& recipe, std::int64_t blocksize,
                  const CodeTable& table) {
  const TensorView view = tensor.view();
  const std::vector<float> values = synthesize_values(recipe, view.storage_elements, blocksize, table, dtype);
  TensorView flat = view;
  flat.index = make_index({view.storage_elements}, {1}, 0);
  fixtures::write_logical(flat, values);
}

fixtures::HostTensor make_tensor(DType dtype, const Layout& layout, std::uint8_t fill_byte) {
  return fixtures::HostTensor(dtype, layout.storage_elements, make_index(layout.sizes, layout.strides, layout.offset),
                              fill_byte);
}

}  // namespace bitparity::properties
