// Quantized storage: invalid combinations are refused before anything is stored, and the byte copy
// moves every pattern (NaN payloads included) while the faulty copies do not.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "bitparity/distributed/adapter_step.hpp"
#include "bitparity/distributed/quant_storage.hpp"
#include "bitparity/kernels/errors.hpp"

namespace bitparity::distributed {
namespace {

std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(QuantStorage, RefusesGradientsOnIntegerStorage) {
  const std::string why = refusal([] { store_packed_codes(std::vector<std::uint8_t>(8), {1.0f}, QuantFormat::nf4, 16, 64, DType::u8, 1, true); });
  EXPECT_NE(why.find("gradients on integer storage"), std::string::npos) << why;
  EXPECT_NE(why.find("f16, bf16 or f32"), std::string::npos) << why;
  EXPECT_EQ(refusal([] { store_packed_codes(std::vector<std::uint8_t>(8), {1.0f}, QuantFormat::nf4, 16, 64, DType::bf16, 1, true); }), "");
}

// An FSDP unit that trains an adapter beside the quantized weight: u8 storage and non-float grad
// dtypes are refused before anything is stepped.
TEST(QuantStorage, RefusesATrainableUnitOnIntegerStorage) {
  const std::string why = refusal([] { check_trainable_unit(DType::u8, DType::f32); });
  EXPECT_NE(why.find("gradients on integer storage"), std::string::npos) << why;
  EXPECT_NE(why.find("set quant_storage to the adapter's dtype"), std::string::npos) << why;
  EXPECT_NE(refusal([] { check_trainable_unit(DType::bf16, DType::u8); }).find("not a float dtype"), std::string::npos);
  EXPECT_EQ(refusal([] { check_trainable_unit(DType::f16, DType::bf16); }), "");
}

TEST(QuantStorage, RefusesPackedBytesThatTheStorageElementDoesNotDivide) {
  // 6 nf4 codes are 3 bytes: not a whole number of f16 (2) or f32 (4) elements.
  for (DType storage : {DType::f16, DType::f32}) {
    const std::string why = refusal([&] { store_packed_codes(std::vector<std::uint8_t>(3), {1.0f}, QuantFormat::nf4, 6, 64, storage, 1, false); });
    EXPECT_NE(why.find("3 packed bytes are not a whole number of"), std::string::npos) << why;
  }
  EXPECT_EQ(refusal([] { store_packed_codes(std::vector<std::uint8_t>(3), {1.0f}, QuantFormat::nf4, 6, 64, DType::u8, 1, false); }), "");
  const std::string columns = refusal([] { store_packed_codes(std::vector<std::uint8_t>(12), {1.0f}, QuantFormat::linear8, 12, 64, DType::f32, 2, false); });
  EXPECT_NE(columns.find("2 columns do not divide the 3 storage elements"), std::string::npos) << columns;
}

TEST(QuantStorage, RefusesComputeDTypesThatCannotHoldDequantizedValues) {
  EXPECT_NE(refusal([] { check_compute_dtype(DType::u8); }).find("use f32, f16 or bf16"), std::string::npos);
  EXPECT_NE(refusal([] { check_compute_dtype(DType::packed4); }).find("cannot hold dequantized values"), std::string::npos);
  for (DType ok : {DType::f32, DType::f16, DType::bf16}) EXPECT_EQ(refusal([&] { check_compute_dtype(ok); }), "");
}

// Every 16-bit pattern, as f16 and bf16, and a sweep of f32 NaN payloads: the byte copy keeps them
// all; the float-conversion and NaN-canonicalising copies change signalling or non-canonical NaNs.
TEST(QuantStorage, ByteCopyKeepsEveryPatternAndTheFaultyCopiesDoNot) {
  for (DType dtype : {DType::f16, DType::bf16}) {
    std::vector<std::uint16_t> all(65536), copied(65536);
    for (std::uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<std::uint16_t>(i);
    const auto* from = reinterpret_cast<const std::uint8_t*>(all.data());
    auto* to = reinterpret_cast<std::uint8_t*>(copied.data());
    copy_storage(to, from, 65536, dtype, StorageFault::none);
    EXPECT_EQ(all, copied);
    copy_storage(to, from, 65536, dtype, StorageFault::float_conversion_copy);
    EXPECT_NE(all, copied) << dtype_name(dtype);
    copy_storage(to, from, 65536, dtype, StorageFault::nan_canonicalising_copy);
    EXPECT_NE(all, copied) << dtype_name(dtype);
  }
  std::vector<std::uint32_t> nans = {0x7F800001u, 0xFF800001u, 0x7FC00001u, 0x7FBFFFFFu, 0x7FFFFFFFu}, copied(nans.size());
  const auto* from = reinterpret_cast<const std::uint8_t*>(nans.data());
  auto* to = reinterpret_cast<std::uint8_t*>(copied.data());
  copy_storage(to, from, 5, DType::f32, StorageFault::none);
  EXPECT_EQ(nans, copied);
  copy_storage(to, from, 5, DType::f32, StorageFault::float_conversion_copy);
  EXPECT_NE(nans, copied);  // the signalling ones are quieted
  copy_storage(to, from, 5, DType::f32, StorageFault::nan_canonicalising_copy);
  EXPECT_EQ(copied, std::vector<std::uint32_t>(5, 0x7FC00000u));
}

TEST(QuantStorage, NamesFaultsAndLayouts) {
  EXPECT_EQ(parse_storage_fault("storage-absmax-wrong-block-map"), StorageFault::absmax_wrong_block_map);
  EXPECT_NE(refusal([] { parse_storage_fault("storage-nope"); }).find("expected one of storage-float-conversion-copy"), std::string::npos);
  EXPECT_EQ(storage_layout_name(StorageLayout::fsdp2_dim0), "fsdp2-dim0");
}

}  // namespace
}  // namespace bitparity::distributed
