#include "bitparity/distributed/adapter_step.hpp"

#include <algorithm>
#include <cstring>
#include <random>
#include <string>

#include "bitparity/fixtures/host_tensor.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {

namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

Hyperparameters adapter_hyperparameters() {
  Hyperparameters h = typical_hyperparameters(OptimizerKind::adamw);
  h.weight_decay = 0.1f;  // decoupled decay: what rewrites a frozen weight stepped with a zero gradient
  h.step = 1;
  return h;
}

// Steps `count` elements of dtype `param_dtype` at `param` with fp32 states of zeros.
void step_elements(std::uint8_t* param, DType param_dtype, const fixtures::HostTensor& grad, std::int64_t count,
                   fixtures::Implementation& implementation) {
  if (count == 0) return;
  std::vector<float> m(static_cast<std::size_t>(count), 0.0f), v(static_cast<std::size_t>(count), 0.0f);
  const std::vector<TensorView> states = {contiguous_view(m.data(), DType::f32, Device::cpu(), {count}),
                                          contiguous_view(v.data(), DType::f32, Device::cpu(), {count})};
  implementation.optimizer_step(OptimizerKind::adamw, adapter_hyperparameters(), contiguous_view(param, param_dtype, Device::cpu(), {count}),
                                grad.view(), states, {});
}

// The gradient of `count` elements starting at element `from` of a unit whose gradient is
// `adapter_grad` over [adapter_begin, adapter_begin + n) and zero elsewhere.
fixtures::HostTensor gradient_slice(const std::vector<float>& adapter_grad, std::int64_t adapter_begin, std::int64_t from,
                                    std::int64_t count, DType grad_dtype) {
  std::vector<float> values(static_cast<std::size_t>(count), 0.0f);
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t a = from + i - adapter_begin;
    if (a >= 0 && a < static_cast<std::int64_t>(adapter_grad.size())) values[static_cast<std::size_t>(i)] = adapter_grad[static_cast<std::size_t>(a)];
  }
  fixtures::HostTensor grad = fixtures::HostTensor::buffer(grad_dtype, count);
  fixtures::write_logical(grad.view(), values);
  return grad;
}

// A flat buffer of `elements` elements of `size` bytes, partitioned in `shard`-element pieces:
// this rank steps the elements [begin, end) of its piece that `steps` says, then all pieces are
// all-gathered and the padding dropped.
struct FlatUnit {
  std::vector<std::uint8_t> bytes;  // the unsharded buffer
  std::int64_t elements = 0, size = 0;
};

std::vector<std::uint8_t> step_and_gather(const FlatUnit& unit, std::int64_t shard, std::int64_t step_begin, std::int64_t step_end,
                                          DType param_dtype, const std::vector<float>& adapter_grad, std::int64_t adapter_begin,
                                          DType grad_dtype, Communicator& communicator, fixtures::Implementation& implementation) {
  const int rank = communicator.rank(), world = communicator.size();
  const std::int64_t begin = std::min(unit.elements, rank * shard), end = std::min(unit.elements, begin + shard);
  std::vector<std::uint8_t> piece(static_cast<std::size_t>(shard * unit.size), 0);
  std::memcpy(piece.data(), unit.bytes.data() + begin * unit.size, static_cast<std::size_t>((end - begin) * unit.size));
  const std::int64_t from = std::max(begin, step_begin), to = std::min(end, step_end);
  if (from < to) {
    const fixtures::HostTensor grad = gradient_slice(adapter_grad, adapter_begin, from, to - from, grad_dtype);
    step_elements(piece.data() + (from - begin) * unit.size, param_dtype, grad, to - from, implementation);
  }
  std::vector<std::uint8_t> all(static_cast<std::size_t>(shard * unit.size * world));
  communicator.all_gather(piece.data(), piece.size(), all.data());
  all.resize(static_cast<std::size_t>(unit.elements * unit.size));
  return all;
}

}  // namespace

void check_trainable_unit(DType storage_dtype, DType grad_dtype) {
  if (storage_dtype == DType::u8) {
    throw Error(ErrorCode::invalid_argument,
                "gradients on integer storage: an FSDP unit that trains an adapter flattens it with the quantized weight into "
                "one buffer of one dtype, and u8 cannot carry a gradient; set quant_storage to the adapter's dtype (f16, bf16 "
                "or f32)");
  }
  if (grad_dtype != DType::f32 && grad_dtype != DType::f16 && grad_dtype != DType::bf16) {
    throw Error(ErrorCode::invalid_argument, std::string("grad dtype ") + dtype_name(grad_dtype) + " is not a float dtype; use f32, f16 or bf16");
  }
}

AdapterValues draw_adapter(std::uint64_t seed, DType storage_dtype, DType grad_dtype) {
  std::mt19937_64 random(seed ^ 0xA0761D6478BD642Full);
  const std::int64_t n = 1 + static_cast<std::int64_t>(random() % 300);
  std::normal_distribution<float> normal(0.0f, 0.05f);
  std::vector<float> adapter_values(static_cast<std::size_t>(n)), grad_values(static_cast<std::size_t>(n));
  for (auto& a : adapter_values) a = normal(random);
  for (auto& g : grad_values) g = normal(random);
  fixtures::HostTensor adapter = fixtures::HostTensor::buffer(storage_dtype, n);
  fixtures::write_logical(adapter.view(), adapter_values);
  fixtures::HostTensor grad = fixtures::HostTensor::buffer(grad_dtype, n);
  fixtures::write_logical(grad.view(), grad_values);
  return {fixtures::read_logical(adapter.view()), fixtures::read_logical(grad.view())};
}

AdapterStepResult step_unit_with_adapter(const StoredWeight& weight, StorageLayout layout, DType grad_dtype, const AdapterValues& values,
                                         Communicator& communicator, fixtures::Implementation& implementation, StorageFault fault) {
  check_trainable_unit(weight.storage_dtype, grad_dtype);
  const DType dtype = weight.storage_dtype;  // the adapter's dtype: FSDP1 flattens one dtype
  const std::int64_t size = dtype_storage_bytes(dtype, 1);
  const int world = communicator.size();
  const std::int64_t n = static_cast<std::int64_t>(values.adapter.size());
  fixtures::HostTensor adapter = fixtures::HostTensor::buffer(dtype, n);
  fixtures::write_logical(adapter.view(), values.adapter);
  fixtures::HostTensor grad = fixtures::HostTensor::buffer(grad_dtype, n);
  fixtures::write_logical(grad.view(), values.grad);
  const std::vector<float> grad_rounded = fixtures::read_logical(grad.view());  // as the reduce-scatter delivers it

  AdapterStepResult result;
  result.adapter_numel = n;
  result.expected = adapter.bytes();
  step_elements(result.expected.data(), dtype, grad, n, implementation);

  const std::int64_t storage_elements = weight.rows * weight.columns;
  const bool stepped_storage = fault == StorageFault::frozen_weight_stepped;
  if (layout == StorageLayout::fsdp1_flat) {
    // One flat buffer: the quantized weight's storage elements, then the adapter's.
    FlatUnit unit{weight.storage, storage_elements + n, size};
    unit.bytes.insert(unit.bytes.end(), adapter.bytes().begin(), adapter.bytes().end());
    const std::int64_t shard = std::max<std::int64_t>(ceil_div(unit.elements, world), 1);
    const auto all = step_and_gather(unit, shard, stepped_storage ? 0 : storage_elements, unit.elements, dtype, grad_rounded,
                                     storage_elements, grad_dtype, communicator, implementation);
    result.storage.assign(all.begin(), all.begin() + storage_elements * size);
    result.adapter.assign(all.begin() + storage_elements * size, all.end());
  } else {
    // Two parameters, each a dim-0 chunk per rank: the storage by rows, the adapter ([n, 1]) by elements.
    const FlatUnit storage{weight.storage, storage_elements, size};
    const std::int64_t storage_shard = std::max<std::int64_t>(ceil_div(weight.rows, world), 1) * weight.columns;
    result.storage = step_and_gather(storage, storage_shard, 0, stepped_storage ? storage_elements : 0, dtype, {}, 0, grad_dtype,
                                     communicator, implementation);
    const FlatUnit trained{adapter.bytes(), n, size};
    result.adapter = step_and_gather(trained, std::max<std::int64_t>(ceil_div(n, world), 1), 0, n, dtype, grad_rounded, 0, grad_dtype,
                                     communicator, implementation);
  }
  return result;
}

}  // namespace bitparity::distributed
