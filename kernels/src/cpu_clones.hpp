#pragma once
// BITPARITY_CPU_CLONES: a CPU launcher's loop function compiled for the baseline ISA, AVX2 and
// AVX-512, picked at load time by the CPU (GCC function multiversioning), with everything it calls
// inlined (flatten), so that the kernel body's loops vectorize for that ISA. Vector IEEE arithmetic
// gives the scalar bits and nothing contracts (-ffp-contract=off): the choice changes speed only;
// P2 and P5 compare. The files that use it are compiled with -fno-trapping-math (CMakeLists.txt).
#define BITPARITY_CPU_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4"), flatten))
