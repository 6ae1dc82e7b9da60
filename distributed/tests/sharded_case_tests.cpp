// A P6/P11 and a P10 case as data: they round-trip through JSON, run on their recorded values (not
// the generator's), refuse malformed files, and every shrinking step gives a smaller valid case.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <cstring>

#include "bitparity/distributed/rank_parity.hpp"
#include "bitparity/distributed/sharded_case.hpp"
#include "bitparity/distributed/storage_case.hpp"
#include "bitparity/distributed/solo_communicator.hpp"
#include "bitparity/distributed/unsharded_optimizer.hpp"
#include "bitparity/properties/case_tape.hpp"

namespace bitparity::distributed {
namespace {

ShardedCase drawn(std::uint64_t seed, bool eight_bit = false, bool with_resume = false) {
  ShardedCase c;
  c.config = draw_sharded_config(OptimizerKind::adam, eight_bit, DType::bf16, ShardLayout::zero3, seed, 3);
  c.steps = 3;
  if (with_resume) c.resume = ResumeCase{2, 3, 2, 1};
  return c;
}

// The case's seed drawing a regrouping and several groups, so that every kind of shrink applies.
ShardedCase drawn_with_regrouping(bool eight_bit = false) {
  for (std::uint64_t seed = 1;; ++seed) {
    ShardedCase c = drawn(seed, eight_bit);
    if (c.config.regroup_step != 0 && c.config.groups.size() > 1) return c;
  }
}

std::map<std::uint64_t, std::vector<std::uint32_t>> parameters_after(const ShardedCase& c) {
  UnshardedOptimizer unsharded(c.config);
  for (std::int64_t step = 1; step <= c.total_steps(); ++step) unsharded.step(step);
  std::map<std::uint64_t, std::vector<std::uint32_t>> out;
  for (const auto& group : c.config.groups) {
    for (const auto& p : group.parameters) out[p.id] = fixtures::read_logical_bits(unsharded.parameter(p.id).param.view());
  }
  return out;
}

// Whether `simpler` is `value` made simpler by a shrinking step: the same, or its power of two or
// its sign times 1 (zeros and non-finite values kept).
bool simpler_or_same(float simpler, float value) {
  if (simpler == value || (std::isnan(simpler) && std::isnan(value))) return true;
  if (value == 0.0f || !std::isfinite(value) || std::signbit(simpler) != std::signbit(value)) return false;
  if (std::fabs(simpler) == 1.0f) return true;
  int exponent = 0;
  return std::frexp(simpler, &exponent) == (simpler < 0 ? -0.5f : 0.5f) && std::fabs(simpler) <= std::fabs(value) &&
         std::fabs(value) < 2 * std::fabs(simpler);
}

std::int64_t elements(const ShardedCase& c) {
  std::int64_t n = 0;
  for (const auto& group : c.config.groups) {
    for (const auto& p : group.parameters) n += p.numel;
  }
  return n;
}

TEST(ShardedCase, RoundTripsAndRunsOnTheRecordedValues) {
  for (bool eight_bit : {false, true}) {
    const ShardedCase c = drawn_with_regrouping(eight_bit);
    const nlohmann::json encoded = encode_sharded_case(c);
    const ShardedCase decoded = decode_sharded_case(nlohmann::json::parse(encoded.dump()));
    ASSERT_TRUE(decoded.config.recorded);
    EXPECT_EQ(encode_sharded_case(decoded), encoded);
    EXPECT_EQ(parameters_after(decoded), parameters_after(c)) << "the recorded values are the generator's";
  }
}

TEST(ShardedCase, TheRecordedValuesAreWhatRuns) {
  ShardedCase c = drawn(5);
  nlohmann::json encoded = encode_sharded_case(c);
  const std::string id = encoded["initial"].begin().key();
  encoded["initial"][id][0] = properties::encode_float(1.0f, DType::bf16);  // not what the seed draws
  const ShardedCase edited = decode_sharded_case(encoded);
  EXPECT_FLOAT_EQ(edited.config.recorded->initial.at(std::stoull(id))[0], 1.0f);
  EXPECT_NE(parameters_after(edited), parameters_after(c));
}

TEST(ShardedCase, RefusesMalformedCases) {
  const nlohmann::json good = encode_sharded_case(drawn_with_regrouping());
  const auto refusal = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json bad = good;
    edit(bad);
    try {
      decode_sharded_case(bad);
    } catch (const properties::CaseFileError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal([](auto& j) { j["gradients"].erase(0); }).find("'gradients' lacks the gradient of parameter"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["initial"].erase(j["initial"].begin().key()); }).find("'initial' has no values of parameter"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["initial"].begin().value().push_back("0x0p+0 0x0000"); }).find("more than"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["gradients"].push_back(j["gradients"][0]); }).find("given twice"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["regrouped"][0]["parameters"][0]["id"] = "999999999"; }).find("same parameter ids"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["microbatches"] = 64; }).find("'microbatches' is 64, outside 1..63"), std::string::npos);
  // 2^64 - 1 read through int64 is -1: named as written ("is -1" misled).
  EXPECT_NE(refusal([](auto& j) { j["steps"] = std::uint64_t{18446744073709551615ull}; }).find("'steps' is 18446744073709551615, outside 1..1000"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["blocksize"] = 100; }).find("power of two"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["optimizer"] = "lion"; }).find("not the case's optimizer"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["states"] = 16; }).find("'states' is 16; it must be 32"), std::string::npos);
  // "outside 8..32" suggested that 16 was one.
  EXPECT_NE(refusal([](auto& j) { j["states"] = 7; }).find("'states' is 7; it must be 32 (fp32 states) or 8"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["groups"][0]["hyperparameters"]["lr"] = properties::encode_float(0.0f); }).find("lr is 0, which hides every error"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["regroup_step"] = 1; }).find("'regroup_step' must be 0"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j.erase("steps"); }).find("the case has neither 'steps' (a P6 case) nor 'resume'"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["steps"] = "2"; }).find("'steps' must be a whole number"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["groups"][0]["param_dtype"] = "u8"; }).find("must be f32, f16 or bf16"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["groups"][0]["hyperparameters"]["lr"] = properties::encode_float(-1.0f); }).find("hyperparameters outside the optimizer's domain"),
            std::string::npos);
  // Fields and values no run reads were accepted and ignored: an edit there changed nothing.
  EXPECT_NE(refusal([](auto& j) { j["step"] = 3; }).find("the case has no field 'step'; its fields are optimizer,"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["groups"][0]["extra"] = 1; }).find("groups[0]: the case has no field 'extra'"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["groups"][0]["parameters"][0]["extra"] = 1; }).find("the case has no field 'extra'; its fields are id, numel"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["gradients"][0]["extra"] = 1; }).find("its fields are step, microbatch, parameter, values"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["initial"]["424242"] = j["initial"].begin().value(); }).find("'initial' holds values of '424242', which is no parameter"),
            std::string::npos);
  EXPECT_NE(refusal([](auto& j) {
              nlohmann::json extra = j["gradients"][0];
              extra["step"] = 999;
              j["gradients"].push_back(extra);
            }).find("at step 999, microbatch 0, which no step of the case reads"),
            std::string::npos);
}

TEST(ShardedCase, EveryShrinkingStepIsASmallerValidCase) {
  for (const ShardedCase& c : {drawn_with_regrouping(), drawn(7, true, true)}) {
    const int world = 4;
    const RecordedValues original = record_values(c);
    const std::vector<SmallerCase> candidates = smaller_cases(c, world);
    ASSERT_GT(candidates.size(), 10u);
    int simpler_values = 0;
    for (const SmallerCase& s : candidates) {
      SCOPED_TRACE(s.change);
      const ShardedCase again = decode_sharded_case(encode_sharded_case(s.smaller));  // valid
      if (s.change.starts_with("values ")) {
        // The same case, every value the original's made simpler (the planted infinities kept).
        ++simpler_values;
        EXPECT_EQ(again.total_steps(), c.total_steps());
        EXPECT_EQ(elements(again), elements(c));
        for (const auto& [key, values] : again.config.recorded->gradients) {
          const auto& before = original.gradients.at(key);
          for (std::size_t i = 0; i < values.size(); ++i) ASSERT_TRUE(simpler_or_same(values[i], before[i])) << values[i] << " " << before[i];
        }
        continue;
      }
      const bool smaller = s.world < world || again.total_steps() < c.total_steps() ||
                           again.config.microbatches < c.config.microbatches || elements(again) < elements(c) ||
                           (c.config.regroup_step != 0 && again.config.regroup_step == 0) ||
                           (c.resume && (again.resume->save_world < c.resume->save_world || again.resume->load_world < c.resume->load_world));
      EXPECT_TRUE(smaller);
      if (c.resume) {
        EXPECT_GE(s.world, std::max(again.resume->save_world, again.resume->load_world));
      }
      // What remains keeps its values: the first elements of every parameter are the original's.
      for (const auto& [id, values] : again.config.recorded->initial) {
        const auto& before = original.initial.at(id);
        EXPECT_TRUE(std::equal(values.begin(), values.end(), before.begin()));
      }
    }
    // Powers of two for all values, their halves and their quarters; -1 and 1 only where a value is
    // already a power of two.
    EXPECT_GE(simpler_values, 7);
    EXPECT_TRUE(std::any_of(candidates.begin(), candidates.end(),
                            [](const SmallerCase& s) { return s.change == "values rounded down to powers of two"; }));
  }
}

StorageCase drawn_storage(DType storage_dtype, std::optional<DType> grad, std::uint64_t seed) {
  const auto cpu = fixtures::make_implementation("cpu");
  return draw_storage_case({QuantFormat::nf4, storage_dtype, DType::bf16, StorageLayout::fsdp2_dim0, grad}, seed, 3, *cpu);
}

TEST(StorageCase, RoundTripsBitForBitSpecialPatternsIncluded) {
  for (DType storage : {DType::u8, DType::f16, DType::bf16, DType::f32}) {
    const std::optional<DType> grad = storage == DType::u8 ? std::nullopt : std::optional<DType>(DType::bf16);
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      const StorageCase c = drawn_storage(storage, grad, seed);
      const nlohmann::json encoded = encode_storage_case(c);
      const StorageCase decoded = decode_storage_case(nlohmann::json::parse(encoded.dump()));
      EXPECT_EQ(decoded.weight.storage, c.weight.storage);  // NaN payloads and all
      EXPECT_EQ(encode_storage_case(decoded), encoded);
      EXPECT_EQ(decoded.adapter.adapter.size(), grad ? c.adapter.adapter.size() : 0u);
      // Run on one rank, the decoded case gives what the drawn one gives: nothing wrong.
      SoloCommunicator solo;
      const auto cpu = fixtures::make_implementation("cpu");
      EXPECT_EQ(run_storage_parity(decoded, solo, *cpu, StorageFault::none).wrong(), 0);
      EXPECT_EQ(run_storage_parity(decoded, solo, *cpu, StorageFault::nan_canonicalising_copy).wrong(),
                run_storage_parity(c, solo, *cpu, StorageFault::nan_canonicalising_copy).wrong())
          << "the recorded NaN patterns meet the copy as the drawn ones do";
    }
  }
}

TEST(StorageCase, RefusesMalformedCases) {
  const nlohmann::json good = encode_storage_case(drawn_storage(DType::f16, DType::f32, 2));
  const auto refusal = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json bad = good;
    edit(bad);
    try {
      decode_storage_case(bad);
    } catch (const properties::CaseFileError& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(refusal([](auto& j) { j["storage"].erase(0); }).find("'storage' must list rows x columns"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["storage"][0] = "0x7e0"; }).find("4 hex digits"), std::string::npos);
  EXPECT_NE(refusal([](nlohmann::json& j) { j["numel"] = j["numel"].get<int>() + 1; }).find("is not the codes of"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["absmax"].erase(0); }).find("one value per block"), std::string::npos);
  // A kill of a storage mutant was counted on an absmax no quantizer stores.
  EXPECT_NE(refusal([](auto& j) { j["absmax"][0] = properties::encode_float(-1.0f); }).find("absmax of block 0 is -0x1p+0"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["absmax"][0] = properties::encode_float(INFINITY); }).find("a quantizer stores +0 or more, or NaN"),
            std::string::npos);
  EXPECT_EQ(refusal([](auto& j) { j["absmax"][0] = properties::encode_float(NAN); }), "accepted");
  EXPECT_NE(refusal([](auto& j) { j["blocksize"] = 100; }).find("is not a block size of nf4"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["adapter_grad"].erase(0); }).find("the same number of values"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["storage_dtype"] = "u8"; }).find("u8"), std::string::npos);  // a gradient on integer storage
  EXPECT_NE(refusal([](auto& j) { j["grad_dtype"] = "none"; }).find("an adapter is given"), std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["layout"] = "fsdp3"; }).find("'layout' must be fsdp1-flat or fsdp2-dim0"), std::string::npos);
  // The dtype parser's refusal ("invalid_argument: ... packed4") named dtypes storage does not take.
  EXPECT_NE(refusal([](auto& j) { j["storage_dtype"] = "f64"; }).find("'storage_dtype' must be u8, f16, bf16 or f32, not \"f64\""),
            std::string::npos);
  EXPECT_NE(refusal([](auto& j) { j["quant_storage"] = "u8"; }).find("the case has no field 'quant_storage'"), std::string::npos);
}

TEST(StorageCase, EveryShrinkingStepIsASmallerValidCase) {
  const StorageCase c = drawn_storage(DType::bf16, DType::f16, 3);
  const std::int64_t elements = c.weight.rows * c.weight.columns;
  for (const SmallerStorageCase& s : smaller_storage_cases(c, 4)) {
    SCOPED_TRACE(s.change);
    const StorageCase again = decode_storage_case(encode_storage_case(s.smaller));  // valid
    const std::int64_t left = again.weight.rows * again.weight.columns;
    if (s.change.starts_with("values ")) {
      EXPECT_EQ(again.weight.storage, c.weight.storage) << "the stored bytes are the case";
      for (std::size_t i = 0; i < again.adapter.grad.size(); ++i) EXPECT_TRUE(simpler_or_same(again.adapter.grad[i], c.adapter.grad[i]));
      for (std::size_t i = 0; i < again.weight.absmax.size(); ++i) EXPECT_TRUE(simpler_or_same(again.weight.absmax[i], c.weight.absmax[i]));
      continue;
    }
    EXPECT_TRUE(s.world < 4 || left < elements || again.weight.columns < c.weight.columns ||
                again.adapter.adapter.size() < c.adapter.adapter.size());
    // What is left is a run of the original's bytes: the first elements or the last.
    const std::size_t kept = again.weight.storage.size(), all = c.weight.storage.size();
    EXPECT_TRUE(std::equal(again.weight.storage.begin(), again.weight.storage.end(), c.weight.storage.begin()) ||
                std::equal(again.weight.storage.begin(), again.weight.storage.end(), c.weight.storage.begin() + (all - kept)));
  }
}

}  // namespace
}  // namespace bitparity::distributed
