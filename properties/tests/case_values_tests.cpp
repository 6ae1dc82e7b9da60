// A one-process case's values made simpler after shrinking: every float of its value arrays, in
// its own dtype, while the case still fails; what the fault needs stays, and nothing else of the
// case (hyperparameters, shapes, layouts, integers) changes.
#include <gtest/gtest.h>

#include <cmath>

#include "bitparity/properties/case_tape.hpp"
#include "bitparity/properties/case_values.hpp"

namespace bitparity::properties {
namespace {

using json = nlohmann::json;

RecordedCase a_case() {
  RecordedCase recorded;
  std::vector<float> grad, param;
  for (int i = 0; i < 20; ++i) grad.push_back(0.3f + 0.11f * static_cast<float>(i) * (i % 2 ? -1.0f : 1.0f));
  for (int i = 0; i < 6; ++i) param.push_back(1.7f * static_cast<float>(i));
  json c = json::object();  // built key by key: nested brace lists are ambiguous in nlohmann::json
  c["grad"] = encode_floats(grad, DType::f32);
  c["param"] = encode_floats(param, DType::bf16);
  c["states"] = json::array({encode_floats({0.75f, -3.0f}, DType::f16), encode_floats({0.0f, INFINITY}, DType::f16)});
  c["hyperparameters"] = json::object({{"lr", encode_float(0.1f)}, {"step", 3}});
  c["shape"] = json::array({20});
  recorded.inputs["case"] = c;
  recorded.notes["case"] = "shape=[20] grad f32 value seed 0";
  return recorded;
}

float value(const RecordedCase& c, const json::json_pointer& at, DType dtype) { return decode_float(c.inputs[at], dtype); }

TEST(CaseValues, KeepOnlyTheOddValueTheFaultNeedsInEachDtype) {
  RecordedCase c = a_case();
  const json::json_pointer needed("/case/grad/13");
  const float odd = value(c, needed, DType::f32);
  int calls = 0;
  const auto kept = simplify_case_values(c, [&](const RecordedCase& trial) {
    ++calls;
    return value(trial, needed, DType::f32) == odd;
  }, 200);
  ASSERT_FALSE(kept.empty());
  EXPECT_LT(calls, 40) << "halving, not one value at a time";
  EXPECT_EQ(value(c, needed, DType::f32), odd);
  for (std::size_t i = 0; i < 20; ++i) {
    const float v = decode_float(c.inputs["case"]["grad"][i], DType::f32);
    if (i != 13) {
      EXPECT_EQ(std::fabs(v), 1.0f) << i;
    }
  }
  // bf16 and f16 values simplified in their own dtype (the bits say so); zero and infinity kept.
  EXPECT_EQ(c.inputs["case"]["param"][0], encode_float(0.0f, DType::bf16));
  EXPECT_EQ(c.inputs["case"]["param"][1], encode_float(1.0f, DType::bf16));
  EXPECT_EQ(c.inputs["case"]["states"][0][1], encode_float(-1.0f, DType::f16));
  EXPECT_EQ(c.inputs["case"]["states"][1][1], encode_float(INFINITY, DType::f16));
  // The rest of the case is as it was.
  EXPECT_EQ(c.inputs["case"]["hyperparameters"], a_case().inputs["case"]["hyperparameters"]);
  EXPECT_EQ(c.inputs["case"]["shape"], json::array({20}));
  EXPECT_EQ(c.notes["case"], "shape=[20] grad f32 value seed 0; values made simpler after shrinking") << "marked once";
}

TEST(CaseValues, ACaseThatNeedsEveryValueIsLeftAsItWasWithinItsTries) {
  RecordedCase c = a_case();
  int calls = 0;
  const auto kept = simplify_case_values(c, [&](const RecordedCase&) { return ++calls, false; }, 5);
  EXPECT_TRUE(kept.empty());
  EXPECT_EQ(calls, 5);
  EXPECT_EQ(c.inputs, a_case().inputs);
  EXPECT_EQ(c.notes, a_case().notes);
}

}  // namespace
}  // namespace bitparity::properties
