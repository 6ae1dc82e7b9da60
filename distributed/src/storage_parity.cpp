#include "bitparity/distributed/storage_parity.hpp"

#include <cstring>
#include <random>

#include "bitparity/distributed/adapter_step.hpp"
#include "bitparity/distributed/mpi_world.hpp"
#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/quantize.hpp"

namespace bitparity::distributed {

namespace {

bool four_bit(QuantFormat format) { return quant_format_info(format).bits == 4; }

// Byte patterns that are special in the storage dtype: NaNs with any payload (signalling ones
// included) and sign, infinities, subnormals, zeros of either sign, the largest finite values.
void write_special_pattern(std::uint8_t* element, DType dtype, std::mt19937_64& random) {
  const std::uint64_t pick = random() % 6, r = random();
  if (dtype == DType::u8) {
    *element = static_cast<std::uint8_t>(r);
    return;
  }
  if (dtype == DType::f32) {
    const std::uint32_t sign = (r & 1u) << 31, payload = 1u + static_cast<std::uint32_t>((r >> 1) % 0x7FFFFFu);
    const std::uint32_t patterns[] = {sign | 0x7F800000u | payload,        sign | 0x7F800000u | (payload & 0x3FFFFFu) | 1u,
                                      sign | 0x7F800000u,                  sign | (payload & 0x7FFFFFu),
                                      sign,                                sign | 0x7F7FFFFFu};
    std::memcpy(element, &patterns[pick], 4);
    return;
  }
  const bool half = dtype == DType::f16;
  const std::uint16_t sign = static_cast<std::uint16_t>((r & 1u) << 15);
  const std::uint16_t exponent = half ? 0x7C00u : 0x7F80u, mantissa = half ? 0x03FFu : 0x007Fu;
  const std::uint16_t payload = static_cast<std::uint16_t>(1u + (r >> 1) % mantissa);
  const std::uint16_t quiet_bit = half ? 0x0200u : 0x0040u;
  const std::uint16_t patterns[] = {static_cast<std::uint16_t>(sign | exponent | payload),
                                    static_cast<std::uint16_t>(sign | exponent | ((payload & ~quiet_bit) | 1u)),  // signalling
                                    static_cast<std::uint16_t>(sign | exponent),
                                    static_cast<std::uint16_t>(sign | payload),
                                    sign,
                                    static_cast<std::uint16_t>(sign | (exponent - (half ? 0x0400u : 0x0080u)) | mantissa)};
  std::memcpy(element, &patterns[pick], 2);
}

fixtures::HostTensor dequantized(const StoredWeight& weight, DType compute_dtype, fixtures::Implementation& implementation) {
  fixtures::HostTensor codes = fixtures::HostTensor::buffer(four_bit(weight.format) ? DType::packed4 : DType::u8, weight.numel);
  std::memcpy(codes.bytes().data(), weight.storage.data(), weight.storage.size());
  fixtures::HostTensor absmax = fixtures::HostTensor::buffer(DType::f32, static_cast<std::int64_t>(weight.absmax.size()));
  std::memcpy(absmax.bytes().data(), weight.absmax.data(), weight.absmax.size() * sizeof(float));
  fixtures::HostTensor out = fixtures::HostTensor::buffer(compute_dtype, weight.numel);
  implementation.dequantize(codes.view(), absmax.view(), weight.format, weight.blocksize, out.view(), {});
  return out;
}

StoredWeight draw_weight(const StorageTarget& target, std::uint64_t seed, int world, fixtures::Implementation& implementation) {
  std::mt19937_64 random(seed * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(world));
  const std::int64_t blocksize = std::array<std::int64_t, 3>{64, 128, 256}[random() % 3];
  const std::int64_t storage_bytes = dtype_storage_bytes(target.storage_dtype, 1);
  // Elements per whole storage element: 2 codes per byte for 4-bit formats.
  const std::int64_t unit = storage_bytes * (four_bit(target.format) ? 2 : 1);
  // Now and then fewer storage elements than ranks; mostly several blocks with a ragged tail.
  const std::int64_t units = random() % 5 == 0 ? 1 + static_cast<std::int64_t>(random() % 6)
                                               : 1 + static_cast<std::int64_t>(random() % (4 * blocksize / unit + 40));
  const std::int64_t numel = units * unit;
  std::normal_distribution<float> normal(0.0f, std::ldexp(1.0f, static_cast<int>(random() % 12) - 6));
  std::vector<float> values(static_cast<std::size_t>(numel));
  for (auto& v : values) v = random() % 16 == 0 ? 0.0f : normal(random);
  if (random() % 4 == 0) values[random() % values.size()] = random() % 2 ? NAN : INFINITY;  // a non-finite block
  fixtures::HostTensor input = fixtures::HostTensor::buffer(target.compute_dtype, numel);
  fixtures::write_logical(input.view(), values);
  const std::int64_t blocks = block_count(numel, blocksize);
  fixtures::HostTensor codes = fixtures::HostTensor::buffer(four_bit(target.format) ? DType::packed4 : DType::u8, numel);
  fixtures::HostTensor absmax = fixtures::HostTensor::buffer(DType::f32, blocks);
  fixtures::HostTensor nonfinite = fixtures::HostTensor::buffer(DType::u8, blocks);
  implementation.quantize(input.view(), target.format, blocksize, {codes.view(), absmax.view(), nonfinite.view()}, {}, {});
  std::vector<float> absmax_values(static_cast<std::size_t>(blocks));
  std::memcpy(absmax_values.data(), absmax.bytes().data(), absmax_values.size() * sizeof(float));
  const std::int64_t elements = numel / unit;
  // Columns: 1 (bitsandbytes' [n, 1]) or another divisor of the storage elements.
  std::vector<std::int64_t> divisors;
  for (std::int64_t d = 1; d <= elements && d <= 64; ++d) {
    if (elements % d == 0) divisors.push_back(d);
  }
  const std::int64_t columns = random() % 2 == 0 ? 1 : divisors[random() % divisors.size()];
  StoredWeight weight = store_packed_codes(std::move(codes.bytes()), std::move(absmax_values), target.format, numel, blocksize,
                                           target.storage_dtype, columns, false);
  // Special byte patterns over about one storage element in five (at least one).
  for (std::int64_t i = 0; i < elements; ++i) {
    if (i == 0 || random() % 5 == 0) write_special_pattern(&weight.storage[static_cast<std::size_t>(i * storage_bytes)], target.storage_dtype, random);
  }
  return weight;
}

void note(StorageTally& tally, const std::string& what) {
  if (tally.first_wrong.empty()) tally.first_wrong = what;
}

// Every storage byte against the original's; `after` says what the bytes went through.
void compare_storage(const std::vector<std::uint8_t>& original, const std::vector<std::uint8_t>& now, const char* after, int rank,
                     const std::string& what, StorageTally& tally) {
  for (std::size_t i = 0; i < original.size(); ++i) {
    ++tally.checked;
    if (original[i] == now[i]) continue;
    ++tally.wrong_bytes;
    char text[160];
    std::snprintf(text, sizeof text, "storage byte %zu is 0x%02x, was 0x%02x after %s on rank %d", i, now[i], original[i], after, rank);
    note(tally, std::string(text) + " (" + what + ")");
  }
}

}  // namespace

StorageCase draw_storage_case(const StorageTarget& target, std::uint64_t seed, int world, fixtures::Implementation& implementation) {
  check_compute_dtype(target.compute_dtype);
  if (target.grad_dtype) check_trainable_unit(target.storage_dtype, *target.grad_dtype);
  StorageCase drawn{target, draw_weight(target, seed, world, implementation), {}};
  if (target.grad_dtype) drawn.adapter = draw_adapter(seed, target.storage_dtype, *target.grad_dtype);
  return drawn;
}

StorageTally run_storage_parity(const StorageCase& storage_case, Communicator& communicator, fixtures::Implementation& implementation,
                                StorageFault fault) {
  const StorageTarget& target = storage_case.target;
  check_compute_dtype(target.compute_dtype);
  if (target.grad_dtype) check_trainable_unit(target.storage_dtype, *target.grad_dtype);
  const StoredWeight& original = storage_case.weight;
  const StoredWeight regathered = shard_and_regather(original, target.layout, communicator, fault);
  StorageTally tally;
  const int rank = communicator.rank();
  const std::string shape = "storage [" + std::to_string(original.rows) + ", " + std::to_string(original.columns) + "] " +
                            dtype_name(original.storage_dtype) + ", " + std::to_string(original.numel) + " codes, block " +
                            std::to_string(original.blocksize);
  compare_storage(original.storage, regathered.storage, "regathering", rank, shape, tally);
  for (std::size_t b = 0; b < original.absmax.size(); ++b) {
    ++tally.checked;
    if (std::memcmp(&original.absmax[b], &regathered.absmax[b], sizeof(float)) != 0) {
      ++tally.wrong_bytes;
      note(tally, "absmax of block " + std::to_string(b) + " changed by regathering on rank " + std::to_string(rank) + " (" + shape + ")");
    }
  }
  const auto before = fixtures::read_logical_bits(dequantized(original, target.compute_dtype, implementation).view());
  const auto after = fixtures::read_logical_bits(dequantized(regathered, target.compute_dtype, implementation).view());
  for (std::size_t i = 0; i < before.size(); ++i) {
    ++tally.checked;
    if (before[i] != after[i]) {
      ++tally.wrong_dequantized;
      note(tally, "dequantized element " + std::to_string(i) + " changed on rank " + std::to_string(rank) + " (" + shape + ")");
    }
  }
  if (target.grad_dtype) {
    set_activity("a training step of the unit's adapter");
    const AdapterStepResult step = step_unit_with_adapter(original, target.layout, *target.grad_dtype, storage_case.adapter, communicator,
                                                          implementation, fault);
    const std::string unit = shape + ", adapter of " + std::to_string(step.adapter_numel) + " with " + dtype_name(*target.grad_dtype) + " gradients";
    compare_storage(original.storage, step.storage, "the adapter's step", rank, unit, tally);
    const std::size_t size = static_cast<std::size_t>(dtype_storage_bytes(original.storage_dtype, 1));
    for (std::size_t i = 0; i < step.adapter.size(); i += size) {
      ++tally.checked;
      if (std::memcmp(&step.adapter[i], &step.expected[i], size) != 0) {
        ++tally.wrong_adapter;
        note(tally, "adapter element " + std::to_string(i / size) + " differs from the unsharded step on rank " + std::to_string(rank) +
                        " (" + unit + ")");
      }
    }
  }
  set_activity("summing the wrong bytes of every rank");
  StorageTally total = tally;
  total.wrong_bytes = communicator.all_reduce_sum(tally.wrong_bytes);
  total.wrong_dequantized = communicator.all_reduce_sum(tally.wrong_dequantized);
  total.wrong_adapter = communicator.all_reduce_sum(tally.wrong_adapter);
  total.checked = communicator.all_reduce_sum(tally.checked);
  return total;
}

}  // namespace bitparity::distributed
