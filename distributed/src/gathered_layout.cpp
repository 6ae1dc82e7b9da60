#include "bitparity/distributed/gathered_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <set>

#include "bitparity/distributed/hyperparameter_draw.hpp"
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/distributed/value_source.hpp"
#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer_state.hpp"
#include "bitparity/properties/generators.hpp"

namespace bitparity::distributed {

namespace {

using fixtures::HostTensor;
using fixtures::OperationFamily;
using properties::Layout;

constexpr std::uint8_t kFillByte = 0x5A;  // output storage outside a view must keep it
constexpr std::uint64_t kParameterId = 0x5EED000;

// The tensor's values are those of parameter kParameterId at seed + step; the optimizers' initial
// parameter is parameter kParameterId + 1 at the seed (a prefix of it is the shorter draw).
GatheredCase draw_case(const GatheredTarget& target, std::uint64_t seed, int world) {
  std::mt19937_64 random(seed * 0x2545F4914F6CDD1Dull + static_cast<std::uint64_t>(world));
  GatheredCase c;
  c.target = target;
  const int ndim = 1 + static_cast<int>(random() % 4);
  c.dim = static_cast<int>(random() % static_cast<std::uint64_t>(ndim));
  for (int d = 0; d < ndim; ++d) c.sizes.push_back(1 + static_cast<std::int64_t>(random() % 5));
  if (ndim <= 2) c.sizes.back() = 1 + static_cast<std::int64_t>(random() % 70);  // rows that span blocks
  c.sizes[c.dim] = world * (1 + static_cast<std::int64_t>(random() % (ndim == 1 ? 200 : 3)));
  if (random() % 2 == 0) {
    c.piece_dim = static_cast<int>(random() % static_cast<std::uint64_t>(ndim + 1));  // the split view has ndim + 1 dims
    c.pieces = 2 + static_cast<std::int64_t>(random() % 3);
  }
  int steps = 1;
  if (target.family == OperationFamily::quantize || target.family == OperationFamily::dequantize) {
    c.blocksize = supported_block_sizes(target.format).front();  // small blocks: many of them
  } else {
    c.blocksize = std::array<std::int64_t, 2>{64, 128}[random() % 2];
  }
  if (is_optimizer_family(target.family)) {
    steps = 2;
    c.hyper = draw_hyperparameters(target.kind, target.family == OperationFamily::optimizer8_step, random);
  }
  const DType others[] = {DType::f32, DType::f16, DType::bf16};
  do c.convert_to = others[random() % 3]; while (c.convert_to == target.dtype);
  for (int step = 1; step <= steps; ++step) {
    c.tensors.push_back(initial_parameter(seed + static_cast<std::uint64_t>(step), kParameterId, c.numel(), target.dtype));
  }
  if (is_optimizer_family(target.family)) c.initial = initial_parameter(seed, kParameterId + 1, c.numel(), target.dtype);
  return c;
}

// torch.chunk(view, pieces, dim): pieces of ceil(size / pieces), the last ones shorter or absent.
std::vector<Layout> chunk_pieces(const Layout& view, int dim, std::int64_t pieces) {
  const std::int64_t size = view.sizes[static_cast<std::size_t>(dim)];
  const std::int64_t step = (size + pieces - 1) / pieces;
  std::vector<Layout> out;
  for (std::int64_t start = 0; start < size; start += step) {
    Layout piece = view;
    piece.sizes[static_cast<std::size_t>(dim)] = std::min(step, size - start);
    piece.offset = view.offset + start * view.strides[static_cast<std::size_t>(dim)];
    piece.recipe = view.recipe + " piece " + std::to_string(out.size()) + " along dim " + std::to_string(dim);
    out.push_back(piece);
  }
  return out;
}

TensorView view_of(const HostTensor& storage, const Layout& layout) {
  TensorView view = storage.view();
  view.index = make_index(layout.sizes, layout.strides, layout.offset);
  return view;
}

TensorView reshaped(const TensorView& buffer, const std::vector<std::int64_t>& sizes) {
  TensorView view = buffer;
  view.index = make_index(sizes, contiguous_strides(sizes), 0);
  return view;
}

// The tensor of step `step`, exchanged for real: each rank sends the chunk it holds and receives
// every rank's into the gathered buffer (the chunks one after another).
HostTensor gather_tensor(const Layout& gathered, DType dtype, const std::vector<float>& values, Communicator& communicator) {
  const std::int64_t numel = gathered.storage_elements;
  // Every rank knows the whole tensor; it sends only the chunk it holds (chunk r is storage
  // elements [r * chunk, (r + 1) * chunk) of the gathered view).
  HostTensor whole = properties::make_tensor(dtype, gathered);
  fixtures::write_logical(whole.view(), values);
  const std::int64_t chunk = numel / communicator.size();
  const auto chunk_bytes = static_cast<std::size_t>(dtype_storage_bytes(dtype, chunk));
  std::vector<std::uint8_t> mine(whole.bytes().begin() + static_cast<std::ptrdiff_t>(chunk_bytes) * communicator.rank(),
                                 whole.bytes().begin() + static_cast<std::ptrdiff_t>(chunk_bytes) * (communicator.rank() + 1));
  HostTensor received = properties::make_tensor(dtype, gathered, kFillByte);
  communicator.all_gather(mine.data(), chunk_bytes, received.bytes().data());
  return received;
}

// Named sections of a result, compared element by element.
struct Result {
  std::vector<std::pair<std::string, std::vector<std::uint32_t>>> sections;
  void add(std::string name, std::vector<std::uint32_t> values) { sections.emplace_back(std::move(name), std::move(values)); }
};

std::vector<std::uint32_t> byte_values(const std::uint8_t* data, std::int64_t count) {
  return std::vector<std::uint32_t>(data, data + count);
}

std::vector<std::uint32_t> float_bits(const TensorView& buffer) {
  std::vector<std::uint32_t> bits(static_cast<std::size_t>(buffer.numel()));
  std::memcpy(bits.data(), buffer.data, bits.size() * sizeof(std::uint32_t));
  return bits;
}

std::vector<std::uint32_t> code_values(const TensorView& codes, std::int64_t numel) {
  const auto* bytes = static_cast<const std::uint8_t*>(codes.data);
  if (codes.dtype != DType::packed4) return byte_values(bytes, numel);
  std::vector<std::uint32_t> nibbles(static_cast<std::size_t>(numel));
  for (std::int64_t i = 0; i < numel; ++i) nibbles[static_cast<std::size_t>(i)] = i % 2 == 0 ? bytes[i / 2] >> 4 : bytes[i / 2] & 15u;
  return nibbles;
}

// Storage elements of `storage` outside `view` that no longer hold the fill byte.
std::vector<std::uint32_t> written_outside(const HostTensor& storage, const TensorView& view) {
  std::set<std::int64_t> inside;
  for (std::int64_t i = 0; i < view.numel(); ++i) inside.insert(view.index.storage(i));
  const std::int64_t element_bytes = dtype_storage_bytes(view.dtype, 1);
  std::vector<std::uint32_t> outside;
  for (std::int64_t e = 0; e < view.storage_elements; ++e) {
    if (inside.count(e) != 0) continue;
    bool kept = true;
    for (std::int64_t b = 0; b < element_bytes; ++b) kept = kept && storage.bytes()[static_cast<std::size_t>(e * element_bytes + b)] == kFillByte;
    outside.push_back(kept ? 0u : 1u);
  }
  return outside;
}

class PieceRun {
 public:
  // One piece of the gathered view: `strided` is that view, the contiguous run gets the same values.
  PieceRun(const GatheredCase& c, const Layout& piece) : target_(c.target), case_(c), piece_(piece) {
    const GatheredTarget& target = c.target;
    const std::int64_t numel = make_index(piece.sizes, piece.strides, 0).numel();
    if (is_optimizer_family(target.family)) {
      const bool eight_bit = target.family == OperationFamily::optimizer8_step;
      const std::vector<float> initial(c.initial.begin(), c.initial.begin() + numel);
      for (int run = 0; run < 2; ++run) {
        params_[run] = HostTensor::contiguous(target.dtype, piece.sizes);
        fixtures::write_logical(params_[run].view(), initial);
        states_[run] = std::make_unique<OptimizerState>(target.kind, numel, Device::cpu(),
                                                        StateOptions{eight_bit, c.blocksize, 0});
      }
    }
  }

  // One step (or the single call) on the strided view and on its contiguous copy. Returns false
  // when the implementation refused the strided view.
  bool run(fixtures::Implementation& iut, const HostTensor& gathered, int step) {
    const TensorView strided = view_of(gathered, piece_);
    HostTensor contiguous = HostTensor::contiguous(strided.dtype, piece_.sizes);
    fixtures::write_logical(contiguous.view(), fixtures::read_logical(strided));
    // Dequantize reads codes: the view is its output, and both runs quantize the contiguous values.
    const bool view_is_output = target_.family == OperationFamily::dequantize;
    results_[1] = call(iut, contiguous.view(), 1, step, nullptr);
    try {
      results_[0] = call(iut, view_is_output ? contiguous.view() : strided, 0, step, &gathered);
    } catch (const Error&) {
      return false;
    }
    return true;
  }

  const Result& strided_result() const { return results_[0]; }
  const Result& contiguous_result() const { return results_[1]; }
  const Layout& piece() const { return piece_; }

 private:
  Result call(fixtures::Implementation& iut, const TensorView& input, int run, int step, const HostTensor* gathered) {
    Result result;
    const std::int64_t numel = input.numel();
    switch (target_.family) {
      case OperationFamily::quantize: {
        const int bits = quant_format_info(target_.format).bits;
        const std::int64_t blocks = block_count(numel, case_.blocksize);
        HostTensor codes = HostTensor::buffer(bits == 4 ? DType::packed4 : DType::u8, numel);
        HostTensor absmax = HostTensor::buffer(DType::f32, blocks), flags = HostTensor::buffer(DType::u8, blocks);
        iut.quantize(input, target_.format, case_.blocksize, {codes.view(), absmax.view(), flags.view()}, {}, {});
        result.add("code", code_values(codes.view(), numel));
        result.add("absmax", float_bits(absmax.view()));
        result.add("non-finite flag", byte_values(flags.bytes().data(), blocks));
        break;
      }
      case OperationFamily::dequantize: {
        // The codes of the tensor, dequantized into the view (an output) or into a contiguous tensor.
        const int bits = quant_format_info(target_.format).bits;
        const std::int64_t blocks = block_count(numel, case_.blocksize);
        HostTensor codes = HostTensor::buffer(bits == 4 ? DType::packed4 : DType::u8, numel);
        HostTensor absmax = HostTensor::buffer(DType::f32, blocks), flags = HostTensor::buffer(DType::u8, blocks);
        iut.quantize(input, target_.format, case_.blocksize, {codes.view(), absmax.view(), flags.view()}, {}, {});
        if (gathered == nullptr) {
          HostTensor out = HostTensor::contiguous(input.dtype, piece_.sizes);
          iut.dequantize(codes.view(), absmax.view(), target_.format, case_.blocksize, out.view(), {});
          result.add("value", fixtures::read_logical_bits(out.view()));
          result.add("storage element outside the view", {});
        } else {
          HostTensor out(input.dtype, gathered->view().storage_elements, make_index(piece_.sizes, piece_.strides, piece_.offset), kFillByte);
          iut.dequantize(codes.view(), absmax.view(), target_.format, case_.blocksize, out.view(), {});
          result.add("value", fixtures::read_logical_bits(out.view()));
          // Compared with an all-kept list: any write outside the view is a wrong element.
          result.add("storage element outside the view", written_outside(out, out.view()));
        }
        break;
      }
      case OperationFamily::convert: {
        HostTensor out = HostTensor::contiguous(case_.convert_to, piece_.sizes);
        iut.convert(input, out.view(), {});
        result.add("value", fixtures::read_logical_bits(out.view()));
        break;
      }
      case OperationFamily::optimizer_step:
      case OperationFamily::optimizer8_step: {
        Hyperparameters h = case_.hyper;
        h.step = step;
        const TensorView param = params_[run].view();
        if (target_.family == OperationFamily::optimizer_step) {
          std::vector<TensorView> states;
          for (const TensorView& state : states_[run]->fp32_states()) states.push_back(reshaped(state, piece_.sizes));
          iut.optimizer_step(target_.kind, h, param, input, states, {});
          result.add("parameter", fixtures::read_logical_bits(param));
          for (std::size_t k = 0; k < states.size(); ++k) result.add("state " + std::to_string(k), float_bits(states[k]));
        } else {
          const auto states = states_[run]->quantized_states();
          iut.optimizer8_step(target_.kind, h, param, input, states, case_.blocksize, {});
          result.add("parameter", fixtures::read_logical_bits(param));
          for (std::size_t k = 0; k < states.size(); ++k) {
            result.add("state " + std::to_string(k) + " code", code_values(states[k].codes, numel));
            result.add("state " + std::to_string(k) + " absmax", float_bits(states[k].absmax));
          }
        }
        break;
      }
      case OperationFamily::stochastic_rounding:
      case OperationFamily::nonfinite_blocks:
        break;  // conventions of quantize, never a P2r target family
    }
    return result;
  }

  GatheredTarget target_;
  const GatheredCase& case_;  // outlives the runs
  Layout piece_;
  HostTensor params_[2];
  std::unique_ptr<OptimizerState> states_[2];
  Result results_[2];
};

std::string hex(std::uint32_t bits) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", bits);
  return text;
}

std::uint64_t fnv1a(std::uint64_t hash, std::uint32_t value) {
  for (int b = 0; b < 4; ++b) hash = (hash ^ ((value >> (8 * b)) & 0xFFu)) * 0x100000001B3ull;
  return hash;
}

}  // namespace

std::int64_t GatheredCase::numel() const {
  std::int64_t n = 1;
  for (std::int64_t size : sizes) n *= size;
  return n;
}

std::string GatheredCase::describe() const {
  std::string text = properties::describe_shape(sizes) + ", chunked along dim " + std::to_string(dim);
  if (piece_dim >= 0) text += ", used in " + std::to_string(pieces) + " torch.chunk pieces along dim " + std::to_string(piece_dim) + " of the gathered view";
  return text + ", blocksize " + std::to_string(blocksize);
}

bool is_optimizer_family(OperationFamily family) {
  return family == OperationFamily::optimizer_step || family == OperationFamily::optimizer8_step;
}

GatheredCase draw_gathered_case(const GatheredTarget& target, std::uint64_t seed, int world) { return draw_case(target, seed, world); }

void check_gathered_world(const GatheredCase& c, int world) {
  if (world < 1 || c.sizes[static_cast<std::size_t>(c.dim)] % world != 0) {
    throw Error(ErrorCode::invalid_argument, "the case chunks dim " + std::to_string(c.dim) + " of size " +
                                                 std::to_string(c.sizes[static_cast<std::size_t>(c.dim)]) + " over the ranks, which " +
                                                 std::to_string(world) + " ranks do not divide; run it on a world size that does");
  }
}

GatheredTally run_gathered_layout(const GatheredCase& c, Communicator& communicator, fixtures::Implementation& implementation) {
  const int world = communicator.size(), rank = communicator.rank();
  check_gathered_world(c, world);
  const GatheredTarget& target = c.target;
  const Layout gathered = properties::chunk_gather_layout(c.sizes, c.dim, world);
  const std::vector<Layout> pieces = c.piece_dim < 0 ? std::vector<Layout>{gathered} : chunk_pieces(gathered, c.piece_dim, c.pieces);
  std::vector<PieceRun> runs;
  for (const Layout& piece : pieces) runs.emplace_back(c, piece);
  GatheredTally tally;
  std::vector<bool> refused(runs.size(), false);
  for (int step = 1; step <= c.steps(); ++step) {
    set_activity("seed-000: all_gather of step " + std::to_string(step));
    const HostTensor received = gather_tensor(gathered, target.dtype, c.tensors[static_cast<std::size_t>(step - 1)], communicator);
    set_activity("seed-000: " + std::string(fixtures::operation_family_name(target.family)) +
                 " on the gathered view, step " + std::to_string(step));
    // Each rank visits the pieces in its own order, as ranks stepping their own piece first would.
    for (std::size_t k = 0; k < runs.size(); ++k) {
      const std::size_t at = (k + static_cast<std::size_t>(rank)) % runs.size();
      if (!refused[at] && !runs[at].run(implementation, received, step)) refused[at] = true;
    }
  }
  std::uint64_t hash = 0xCBF29CE484222325ull;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    if (refused[k]) {
      ++tally.refused;
      continue;
    }
    const Result &strided = runs[k].strided_result(), &contiguous = runs[k].contiguous_result();
    for (std::size_t s = 0; s < contiguous.sections.size(); ++s) {
      const auto& [name, expected] = contiguous.sections[s];
      const auto& actual = strided.sections[s].second;
      const std::size_t count = std::max(expected.size(), actual.size());
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t want = i < expected.size() ? expected[i] : 0u, got = i < actual.size() ? actual[i] : 0u;
        hash = fnv1a(hash, got);
        ++tally.checked;
        if (want == got) continue;
        if (tally.first_wrong.empty()) {
          tally.first_wrong = std::string(fixtures::operation_family_name(target.family)) + " on rank " + std::to_string(rank) +
                              ": " + name + " " + std::to_string(i) + " is " + hex(got) + ", contiguous gives " + hex(want) +
                              "; view " + properties::describe(runs[k].piece()) + "; " + c.describe();
        }
        ++tally.wrong;
      }
    }
  }
  set_activity("seed-000: comparing ranks");
  std::vector<std::uint64_t> hashes(static_cast<std::size_t>(world));
  communicator.all_gather(&hash, sizeof hash, hashes.data());
  std::int64_t disagreeing = 0;
  for (std::uint64_t other : hashes) disagreeing += other != hashes[0] ? 1 : 0;
  GatheredTally total = tally;
  total.wrong = communicator.all_reduce_sum(tally.wrong);
  total.refused = communicator.all_reduce_sum(tally.refused);
  total.checked = communicator.all_reduce_sum(tally.checked);
  total.disagreeing_ranks = disagreeing;
  return total;
}

}  // namespace bitparity::distributed
