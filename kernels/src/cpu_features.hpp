#pragma once
// What the CPU offers beyond the ISA a launcher file is compiled for, asked once.
namespace bitparity::cpu {

bool cpu_has_avx512bw();  // AVX-512 F and BW: the permute paths (nibble_select_cpu, nearest_vector_cpu)
// AVX-512 F, BW, VL, DQ, VBMI (byte permutes) and VBMI2 (the 16-bit search's concatenating shifts):
// the decisions on keys (input_keys_cpu) and the code values by permutes (state_values_cpu)
bool cpu_has_avx512vbmi2();
bool cpu_has_avx2();      // AVX2: the 64-bit gathers of the finer index (nearest_vector_cpu)
bool cpu_has_f16c();      // AVX2 and F16C: f16 conversions by instruction (half_runs_cpu)

}  // namespace bitparity::cpu
