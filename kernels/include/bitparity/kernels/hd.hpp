#pragma once
// One kernel body for host and device: functions marked BP_HD compile for both.
#if defined(__CUDACC__)
#define BP_HD __host__ __device__ __forceinline__
#else
#define BP_HD inline
#endif
