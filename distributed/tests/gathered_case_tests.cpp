// A P2r case (seed 000 over ranks) as data: it round-trips through JSON, runs on its recorded values
// (not the generator's), refuses malformed files, and every shrinking step gives a smaller valid
// case that keeps the values at the indices it keeps.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "bitparity/distributed/gathered_case.hpp"
#include "bitparity/distributed/solo_communicator.hpp"
#include "bitparity/kernels/errors.hpp"
#include "bitparity/properties/case_tape.hpp"

namespace bitparity::distributed {
namespace {

using fixtures::OperationFamily;

const GatheredTarget kTargets[] = {
    {OperationFamily::quantize, OptimizerKind::adam, QuantFormat::nf4, DType::bf16},
    {OperationFamily::dequantize, OptimizerKind::adam, QuantFormat::dynamic8_signed, DType::f16},
    {OperationFamily::convert, OptimizerKind::adam, QuantFormat::dynamic8_signed, DType::f32},
    {OperationFamily::optimizer_step, OptimizerKind::adamw, QuantFormat::dynamic8_signed, DType::bf16},
    {OperationFamily::optimizer8_step, OptimizerKind::adam, QuantFormat::dynamic8_signed, DType::f32},
};

// A case of `target` on one rank whose view is cut in pieces, so that a mutant ignoring strides shows.
GatheredCase drawn_in_pieces(const GatheredTarget& target, std::uint64_t first_seed = 1) {
  for (std::uint64_t seed = first_seed;; ++seed) {
    GatheredCase c = draw_gathered_case(target, seed, 1);
    if (c.piece_dim >= 0 && c.sizes.size() >= 2 && c.numel() >= 8) return c;
  }
}

GatheredTally run_on(const GatheredCase& c, const std::string& implementation) {
  SoloCommunicator solo;
  const auto iut = fixtures::make_implementation(implementation);
  return run_gathered_layout(c, solo, *iut);
}

std::string mutant_of(OperationFamily family) {
  if (family == OperationFamily::optimizer_step) return "mutant:optim-ignore-strides";
  if (family == OperationFamily::optimizer8_step) return "mutant:optim8-ignore-strides";
  return "mutant:ignore-strides";
}

TEST(GatheredCase, RoundTripsAndRunsAsDrawn) {
  for (const GatheredTarget& target : kTargets) {
    for (std::uint64_t seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(gathered_entry_name(target.family) + " seed " + std::to_string(seed));
      const GatheredCase c = draw_gathered_case(target, seed, 3);
      ASSERT_EQ(c.steps(), is_optimizer_family(target.family) ? 2 : 1);
      ASSERT_EQ(c.sizes[static_cast<std::size_t>(c.dim)] % 3, 0) << "one chunk per rank";
      const nlohmann::json encoded = encode_gathered_case(c);
      const GatheredCase decoded = decode_gathered_case(nlohmann::json::parse(encoded.dump()));
      EXPECT_EQ(encode_gathered_case(decoded), encoded);
      EXPECT_EQ(decoded.tensors, c.tensors);
      EXPECT_EQ(decoded.initial, c.initial);
      if (c.sizes[static_cast<std::size_t>(c.dim)] % 2 != 0) {
        EXPECT_THROW(check_gathered_world(decoded, 2), Error) << "two ranks cannot hold one chunk each";
      } else {
        EXPECT_NO_THROW(check_gathered_world(decoded, 2));
      }
    }
  }
}

TEST(GatheredCase, TheRecordedValuesAreWhatRuns) {
  for (const GatheredTarget& target : kTargets) {
    if (target.family == OperationFamily::convert) continue;  // no mutant of convert ignores strides
    SCOPED_TRACE(gathered_entry_name(target.family));
    // The first case whose pieces are not contiguous (on one rank, only pieces can make them so).
    GatheredCase c;
    GatheredTally drawn;
    for (std::uint64_t seed = 1; seed < 200 && drawn.wrong == 0; ++seed) {
      c = drawn_in_pieces(target, seed);
      drawn = run_on(c, mutant_of(target.family));
    }
    ASSERT_GT(drawn.wrong, 0) << "no case shows the mutant";
    EXPECT_EQ(run_on(c, "cpu").wrong, 0);
    const GatheredTally read = run_on(decode_gathered_case(encode_gathered_case(c)), mutant_of(target.family));
    EXPECT_EQ(read.wrong, drawn.wrong);
    EXPECT_EQ(read.first_wrong, drawn.first_wrong);
    // Where the view is read (not written, as dequantize's output is), a mutant that reads the wrong
    // elements of a tensor of one value reads the same values: it cannot show.
    if (target.family == OperationFamily::dequantize) continue;
    GatheredCase flat = c;
    for (auto& tensor : flat.tensors) std::fill(tensor.begin(), tensor.end(), 0.5f);
    std::fill(flat.initial.begin(), flat.initial.end(), 0.25f);
    EXPECT_EQ(run_on(flat, mutant_of(target.family)).wrong, 0);
  }
}

TEST(GatheredCase, RefusesMalformedCases) {
  const nlohmann::json good = encode_gathered_case(drawn_in_pieces(kTargets[3]));
  const auto refusal = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json bad = good;
    edit(bad);
    try {
      decode_gathered_case(bad);
    } catch (const properties::CaseFileError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  ASSERT_EQ(refusal([](auto&) {}), "accepted");
  EXPECT_NE(refusal([](auto& j) { j["entry"] = "4-bit step"; }).find("not a P2r entry point"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["sizes"] = nlohmann::json::array(); }).find("'sizes' must list 1 to 6"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["sizes"][0] = 0; }).find("whole numbers from 1"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["dim"] = j["sizes"].size(); }).find("'dim'"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["pieces"] = 1; }).find("'pieces'"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["blocksize"] = 100; }).find("'blocksize'"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["tensors"].push_back(j["tensors"][0]); }).find("one or two"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["tensors"][1].erase(0); }).find("the tensor of step 2 holds"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["initial"].erase(0); }).find("'initial' holds"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j.erase("hyperparameters"); }).find("'hyperparameters' is missing"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["hyperparameters"]["lr"] = properties::encode_float(0.0f); }).find("lr is 0, which hides every error"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["strides"] = nlohmann::json::array(); }).find("the case has no field 'strides'"), std::string::npos);
  nlohmann::json lamb = encode_gathered_case(draw_gathered_case({OperationFamily::optimizer_step, OptimizerKind::lamb}, 1, 1));
  ASSERT_NO_THROW(decode_gathered_case(lamb));
  lamb["entry"] = "8-bit step";
  EXPECT_THROW(decode_gathered_case(lamb), properties::CaseFileError);
  const nlohmann::json convert = encode_gathered_case(draw_gathered_case(kTargets[2], 1, 2));
  nlohmann::json same = convert;
  same["convert_to"] = same["dtype"];
  EXPECT_THROW(decode_gathered_case(same), properties::CaseFileError);
  nlohmann::json with_initial = convert;
  with_initial["initial"] = with_initial["tensors"][0];
  EXPECT_THROW(decode_gathered_case(with_initial), properties::CaseFileError);
}

TEST(GatheredCase, EveryShrinkingStepIsASmallerValidCaseOfTheSameValues) {
  for (const GatheredTarget& target : kTargets) {
    const std::pair<GatheredCase, int> cases[] = {{drawn_in_pieces(target), 1}, {draw_gathered_case(target, 5, 4), 4}};
    for (const auto& [original, world] : cases) {
      const auto kinds = smaller_gathered_cases(original, world);
      ASSERT_FALSE(kinds.empty());
      int exponent = 0;
      for (const SmallerGatheredCase& s : kinds) {
        SCOPED_TRACE(gathered_entry_name(target.family) + ": " + s.change);
        const GatheredCase again = decode_gathered_case(encode_gathered_case(s.smaller));  // valid
        EXPECT_NO_THROW(check_gathered_world(again, s.world));
        if (s.change.starts_with("values ")) {
          ASSERT_EQ(again.sizes, original.sizes);
          for (std::size_t i = 0; i < again.tensors[0].size(); ++i) {
            const float v = again.tensors[0][i], before = original.tensors[0][i];
            EXPECT_TRUE(v == before || std::fabs(v) == 1.0f || std::frexp(v, &exponent) == std::copysign(0.5f, v)) << v << " " << before;
            EXPECT_EQ(std::signbit(v), std::signbit(before));
          }
          EXPECT_EQ(run_on(again, "cpu").wrong, 0);
          continue;
        }
        EXPECT_TRUE(s.world < world || again.steps() < original.steps() || again.pieces < original.pieces ||
                    again.sizes.size() < original.sizes.size() || again.numel() < original.numel() || again.blocksize < original.blocksize);
        // Every value left is the original's at the same index of the dimensions kept.
        if (again.sizes.size() == original.sizes.size()) {
          std::vector<std::int64_t> index(again.sizes.size(), 0);
          for (std::int64_t i = 0; i < again.numel(); ++i) {
            std::int64_t at = 0;
            for (std::size_t d = 0; d < index.size(); ++d) at = at * original.sizes[d] + index[d];
            ASSERT_EQ(again.tensors[0][static_cast<std::size_t>(i)], original.tensors[0][static_cast<std::size_t>(at)]) << i;
            for (std::size_t d = index.size(); d-- > 0;) {
              if (++index[d] < again.sizes[d]) break;
              index[d] = 0;
            }
          }
        } else {
          EXPECT_EQ(again.tensors, original.tensors) << "a dimension of 1 dropped keeps every value in order";
        }
        EXPECT_EQ(run_on(again, "cpu").wrong, 0);
      }
    }
  }
}

// Shrinking's value steps, taken greedily as the shrinker does, on a fault that needs two odd values
// among many (one in the first step's tensor, one in the initial parameter): everything else ends at
// -1 or 1, and those two keep their drawn values.
TEST(GatheredCase, ValueShrinkingKeepsOnlyTheOddValuesAFaultNeeds) {
  GatheredCase c = draw_gathered_case(kTargets[3], 2, 1);
  ASSERT_GE(c.numel(), 8);
  const std::size_t odd_at = static_cast<std::size_t>(c.numel()) - 3;
  const float odd = c.tensors[0][odd_at], odd_initial = c.initial[1];
  ASSERT_NE(std::fabs(odd), 1.0f);
  ASSERT_NE(std::fabs(odd_initial), 1.0f);
  const auto fails = [&](const GatheredCase& k) { return k.tensors[0][odd_at] == odd && k.initial[1] == odd_initial; };
  int steps = 0;
  for (bool kept = true; kept && steps < 100;) {
    kept = false;
    for (const SmallerGatheredCase& s : smaller_gathered_cases(c, 1)) {
      if (!s.change.starts_with("values ") || !fails(s.smaller)) continue;
      c = s.smaller, kept = true, ++steps;
      break;
    }
  }
  EXPECT_LT(steps, 40) << "halving, not one value at a time";
  EXPECT_EQ(c.tensors[0][odd_at], odd);
  EXPECT_EQ(c.initial[1], odd_initial);
  int left = 0;
  for (const auto* values : {&c.initial, &c.tensors[0], &c.tensors[1]}) {
    for (const float v : *values) left += (v != 0.0f && std::isfinite(v) && std::fabs(v) != 1.0f) ? 1 : 0;
  }
  EXPECT_EQ(left, 2) << "only the two values the fault needs stay odd";
}

}  // namespace
}  // namespace bitparity::distributed
