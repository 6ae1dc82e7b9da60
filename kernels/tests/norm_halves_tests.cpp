// The norm-based step in halves (optimizer_norm_sums, optimizer_step_with_norms) on pieces of one
// tensor, with every piece's sums merged, is bitwise the whole tensor's optimizer_step: the sums
// are exact, so neither the cut nor the merge order can change a trust ratio or a clipping factor.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "bitparity/kernels/errors.hpp"
#include "bitparity/kernels/optimizer.hpp"

namespace bitparity {
namespace {

constexpr std::int64_t kElements = 1000;

struct Tensors {
  std::vector<float> param, grad;
  std::vector<std::vector<float>> states;
};

Tensors make_tensors(OptimizerKind kind) {
  Tensors t;
  for (std::int64_t i = 0; i < kElements; ++i) {
    t.param.push_back(0.75f - 0.0031f * static_cast<float>(i % 211));
    t.grad.push_back(0.013f * static_cast<float>((i * 37) % 29) - 0.17f);
  }
  for (int k = 0; k < optimizer_info(kind).states; ++k) {
    std::vector<float> state;
    for (std::int64_t i = 0; i < kElements; ++i) state.push_back(1e-3f * static_cast<float>((i + 3 * k) % 13));
    t.states.push_back(state);
  }
  return t;
}

TensorView piece(std::vector<float>& values, std::int64_t first, std::int64_t length) {
  return contiguous_view(values.data() + first, DType::f32, Device::cpu(), {length});
}

std::vector<TensorView> state_pieces(Tensors& t, std::int64_t first, std::int64_t length) {
  std::vector<TensorView> views;
  for (auto& state : t.states) views.push_back(piece(state, first, length));
  return views;
}

void expect_halves_equal_whole(OptimizerKind kind, Hyperparameters h) {
  Tensors whole = make_tensors(kind), pieces = make_tensors(kind);
  optimizer_step(kind, h, piece(whole.param, 0, kElements), piece(whole.grad, 0, kElements),
                 state_pieces(whole, 0, kElements));
  const std::int64_t cuts[] = {0, 1, 377, 640, kElements};  // uneven pieces, one of a single element
  NormSums merged;
  for (int p = 3; p >= 0; --p) {  // merged in reverse order: exact sums do not care
    const NormSums part = optimizer_norm_sums(kind, h, piece(pieces.param, cuts[p], cuts[p + 1] - cuts[p]),
                                              piece(pieces.grad, cuts[p], cuts[p + 1] - cuts[p]),
                                              state_pieces(pieces, cuts[p], cuts[p + 1] - cuts[p]));
    merged.param.merge(part.param);
    merged.direction.merge(part.direction);
  }
  for (int p = 0; p < 4; ++p) {
    optimizer_step_with_norms(kind, h, piece(pieces.param, cuts[p], cuts[p + 1] - cuts[p]),
                              piece(pieces.grad, cuts[p], cuts[p + 1] - cuts[p]),
                              state_pieces(pieces, cuts[p], cuts[p + 1] - cuts[p]), merged);
  }
  EXPECT_EQ(0, std::memcmp(whole.param.data(), pieces.param.data(), kElements * sizeof(float))) << optimizer_info(kind).name;
  for (std::size_t k = 0; k < whole.states.size(); ++k) {
    EXPECT_EQ(0, std::memcmp(whole.states[k].data(), pieces.states[k].data(), kElements * sizeof(float)))
        << optimizer_info(kind).name << " state " << k;
  }
}

TEST(NormHalves, LambAndLarsInPiecesEqualTheWholeStep) {
  for (OptimizerKind kind : {OptimizerKind::lamb, OptimizerKind::lars}) {
    Hyperparameters h = typical_hyperparameters(kind);
    h.step = 2;
    h.lr = 1e-2f;
    h.weight_decay = 0.01f;
    expect_halves_equal_whole(kind, h);
  }
}

TEST(NormHalves, UpdateClippingInPiecesEqualsTheWholeStep) {
  Hyperparameters h = typical_hyperparameters(OptimizerKind::adam);
  h.step = 2;
  h.lr = 1e-2f;
  h.max_unorm = 0.01f;  // small enough to clip: the step differs from the unclipped one
  expect_halves_equal_whole(OptimizerKind::adam, h);
  Tensors clipped = make_tensors(OptimizerKind::adam), unclipped = make_tensors(OptimizerKind::adam);
  optimizer_step(OptimizerKind::adam, h, piece(clipped.param, 0, kElements), piece(clipped.grad, 0, kElements),
                 state_pieces(clipped, 0, kElements));
  Hyperparameters free = h;
  free.max_unorm = 0.0f;
  optimizer_step(OptimizerKind::adam, free, piece(unclipped.param, 0, kElements), piece(unclipped.grad, 0, kElements),
                 state_pieces(unclipped, 0, kElements));
  EXPECT_NE(0, std::memcmp(clipped.param.data(), unclipped.param.data(), kElements * sizeof(float)));
}

TEST(NormHalves, AStepWithoutNormsIsRefused) {
  Tensors t = make_tensors(OptimizerKind::adam);
  const Hyperparameters h = typical_hyperparameters(OptimizerKind::adam);
  try {
    (void)optimizer_norm_sums(OptimizerKind::adam, h, piece(t.param, 0, 10), piece(t.grad, 0, 10), state_pieces(t, 0, 10));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("takes no norms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace bitparity
