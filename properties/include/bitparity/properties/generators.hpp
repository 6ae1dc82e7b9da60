#pragma once
// Generators that reach the hard regions on purpose: sizes around block boundaries, values on and
// near code midpoints, subnormals, huge and zero blocks, non-finite values when asked, and layouts
// (permutations, padded and stepped slices, offsets, broadcasts, chunk + all_gather reassembly).
// The draw_* functions run inside a RapidCheck property (they use *gen, so they shrink); value
// synthesis is deterministic from a drawn seed, so counterexamples shrink in shape and layout.
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/launch.hpp"
#include "bitparity/kernels/quant_format.hpp"

namespace bitparity::properties {

enum class ValueProfile { mixed, near_midpoints, on_codes, tiny, uniform, zeros };

struct ValueRecipe {
  ValueProfile profile = ValueProfile::mixed;
  std::uint64_t seed = 0;
  bool nonfinite = false;  // plant NaN and infinities in some blocks
};

struct Layout {
  std::vector<std::int64_t> sizes;
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::int64_t storage_elements = 0;
  std::string recipe;  // how it was built: "contiguous", "permuted+stepped", "chunk(dim=1,k=3)"...
};

void showValue(ValueProfile profile, std::ostream& os);
void showValue(const ValueRecipe& recipe, std::ostream& os);
std::string describe(const ValueRecipe& recipe);
std::string describe(const Layout& layout);
std::string describe_shape(const std::vector<std::int64_t>& shape);
void showValue(const Layout& layout, std::ostream& os);

// Element counts around multiples of the block size: k*bs, k*bs +- 1, a single element, empty,
// and arbitrary counts below max_blocks * bs.
std::int64_t draw_numel(std::int64_t blocksize, std::int64_t max_blocks, bool allow_empty);
// true in one case of eight, whatever the size: the layout properties then draw a launch-sized count.
bool draw_launch_sized();
// A count from which a CPU launch takes every path it has (launch.hpp): at least `min_blocks` quant
// blocks of `blocksize` (1 for tensors without blocks) and kElementsForEveryCpuPath elements, about a
// block multiple (k*bs, k*bs +- 1). Small tensors never reach a launcher's per-launch tables or its
// second thread, so the comparison with the strided run would never check them.
std::int64_t draw_launch_sized_numel(std::int64_t blocksize, std::int64_t min_blocks);
std::vector<std::int64_t> draw_shape(std::int64_t numel, int max_dims);
// keep_shape: only layouts with exactly `sizes` (no chunk + all_gather split of a dimension).
Layout draw_layout(const std::vector<std::int64_t>& sizes, bool allow_broadcast, bool keep_shape = false);
Layout contiguous_layout(const std::vector<std::int64_t>& sizes);
// The buffer of an all_gather of k equal torch.chunk pieces along `dim` (each sent contiguous),
// viewed with the chunks moved back into place: `dim` splits into (k, size/k), the chunks lie one
// after another in storage. `sizes[dim]` must be a multiple of k.
Layout chunk_gather_layout(const std::vector<std::int64_t>& sizes, int dim, std::int64_t k);
ValueRecipe draw_values(bool nonfinite);
// A block's absmax as any implementation may be handed one: an fp32 value with a full mantissa
// (an 8-bit optimizer state's), one of a 16-bit input dtype's values, a power of two, a subnormal,
// zero, or one so large that code * absmax overflows the output dtype.
float draw_block_absmax(DType input_dtype);
LaunchConfig draw_launch();
LaunchConfig draw_launch_or_default();  // the default launch (the fast paths) one time in three, else draw_launch

// n values in logical order, each exactly representable in dtype, built per block of `blocksize`
// around a planted block maximum so that values land on codes and near decision midpoints.
std::vector<float> synthesize_values(const ValueRecipe& recipe, std::int64_t n, std::int64_t blocksize,
                                     const CodeTable& table, DType dtype);
// Fill every storage element (also those outside the view) with values of the recipe.
void fill_storage(fixtures::HostTensor& tensor, DType dtype, const ValueRecipe& recipe, std::int64_t blocksize,
                  const CodeTable& table);

fixtures::HostTensor make_tensor(DType dtype, const Layout& layout, std::uint8_t fill_byte = 0);
// fp32 value rounded once to dtype (then widened back exactly).
float round_to_dtype(double value, DType dtype);

}  // namespace bitparity::properties
