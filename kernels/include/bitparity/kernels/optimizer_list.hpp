#pragma once
// The optimizer catalogue: one line per optimizer, naming its id and its descriptor. Everything
// else (the enum, the registry, the launchers' dispatch, the reference table, the CLI) is generated
// from this list or reads the descriptors. To add an optimizer: a descriptor under optimizers/, a
// line here, a reference under reference/src/optimizers/ and mutants under fixtures/mutants/optimizers/.
#include <cstdint>
#include <type_traits>

#include "bitparity/kernels/optimizers/adagrad.hpp"
#include "bitparity/kernels/optimizers/adam.hpp"
#include "bitparity/kernels/optimizers/amsgrad.hpp"
#include "bitparity/kernels/optimizers/adamw.hpp"
#include "bitparity/kernels/optimizers/ademamix.hpp"
#include "bitparity/kernels/optimizers/lamb.hpp"
#include "bitparity/kernels/optimizers/lars.hpp"
#include "bitparity/kernels/optimizers/lion.hpp"
#include "bitparity/kernels/optimizers/nadam.hpp"
#include "bitparity/kernels/optimizers/radam.hpp"
#include "bitparity/kernels/optimizers/rmsprop.hpp"
#include "bitparity/kernels/optimizers/sgd.hpp"

// X(id, descriptor)
#define BITPARITY_OPTIMIZERS(X)   \
  X(adam, descriptors::Adam)       \
  X(adamw, descriptors::AdamW)     \
  X(sgd, descriptors::Sgd)         \
  X(rmsprop, descriptors::Rmsprop) \
  X(adagrad, descriptors::Adagrad) \
  X(lion, descriptors::Lion)       \
  X(ademamix, descriptors::Ademamix) \
  X(lamb, descriptors::Lamb)       \
  X(lars, descriptors::Lars) \
  X(nadam, descriptors::Nadam) \
  X(radam, descriptors::Radam) \
  X(amsgrad, descriptors::Amsgrad)

namespace bitparity {

#define BITPARITY_ENUMERATOR(id, descriptor) id,
enum class OptimizerKind : std::uint8_t { BITPARITY_OPTIMIZERS(BITPARITY_ENUMERATOR) };
#undef BITPARITY_ENUMERATOR

#define BITPARITY_COUNT(id, descriptor) +1
inline constexpr int kOptimizerCount = 0 BITPARITY_OPTIMIZERS(BITPARITY_COUNT);
#undef BITPARITY_COUNT

// The descriptor of an optimizer known at compile time.
template <OptimizerKind K>
struct DescriptorOf;
#define BITPARITY_DESCRIPTOR_OF(id, descriptor) \
  template <>                                   \
  struct DescriptorOf<OptimizerKind::id> {      \
    using type = descriptor;                    \
  };
BITPARITY_OPTIMIZERS(BITPARITY_DESCRIPTOR_OF)
#undef BITPARITY_DESCRIPTOR_OF

template <OptimizerKind K>
using Descriptor = typename DescriptorOf<K>::type;

// Calls f(std::integral_constant<OptimizerKind, kind>{}): the launchers pick the element body once
// per launch, not once per element.
template <class F>
BP_HD void with_optimizer_kind(OptimizerKind kind, F&& f) {
#define BITPARITY_DISPATCH(id, descriptor) \
  if (kind == OptimizerKind::id) return static_cast<void>(f(std::integral_constant<OptimizerKind, OptimizerKind::id>{}));
  BITPARITY_OPTIMIZERS(BITPARITY_DISPATCH)
#undef BITPARITY_DISPATCH
}

// Calls f(std::integral_constant<OptimizerKind, kind>{}) for every optimizer, in catalogue order.
template <class F>
void for_each_optimizer(F&& f) {
#define BITPARITY_VISIT(id, descriptor) f(std::integral_constant<OptimizerKind, OptimizerKind::id>{});
  BITPARITY_OPTIMIZERS(BITPARITY_VISIT)
#undef BITPARITY_VISIT
}

}  // namespace bitparity
