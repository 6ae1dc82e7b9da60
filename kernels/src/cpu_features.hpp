#pragma once
// What the CPU offers beyond the ISA a launcher file is compiled for, asked once.
namespace bitparity::cpu {

bool cpu_has_avx512bw();  // AVX-512 F and BW: the permute paths (nibble_select_cpu, nearest_vector_cpu)
bool cpu_has_avx512vbmi();  // AVX-512 F, BW, VL, DQ and VBMI (byte permutes): the decisions on 16-bit inputs (input_keys_cpu)
bool cpu_has_avx2();      // AVX2: the 64-bit gathers of the finer index (nearest_vector_cpu)
bool cpu_has_f16c();      // AVX2 and F16C: f16 conversions by instruction (half_runs_cpu)

}  // namespace bitparity::cpu
