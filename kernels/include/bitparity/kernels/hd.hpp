#pragma once
// One kernel body for host and device: functions marked BP_HD compile for both.
#if defined(__CUDACC__)
#define BP_HD __host__ __device__ __forceinline__
#else
#define BP_HD inline
#endif

// Before a loop whose stores alias none of its loads, where GCC cannot prove it (a gather from a
// table behind a reference, stores through a pointer of an inlined caller) and keeps it scalar.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define BP_LOOP_INDEPENDENT _Pragma("GCC ivdep")
#else
#define BP_LOOP_INDEPENDENT
#endif

// Before a loop of constant trip count whose arrays must stay in registers on the device.
#if defined(__CUDACC__)
#define BP_UNROLL _Pragma("unroll")
#else
#define BP_UNROLL
#endif
