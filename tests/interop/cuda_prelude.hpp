// What nvcc provides and g++ lacks, so that g++ can check a generated header:
// its static_asserts are evaluated at compile time and, with __device__ gone,
// its gpu_load/gpu_store run on the host. The vector types copy CUDA's
// vector_types.h: the same members and the same __align__.
#pragma once
#define __align__(n) alignas(n)
#define __device__
#define __host__
#define __forceinline__

struct alignas(2) char2 { signed char x, y; };
struct alignas(2) uchar2 { unsigned char x, y; };
struct char3 { signed char x, y, z; };
struct uchar3 { unsigned char x, y, z; };
struct alignas(4) char4 { signed char x, y, z, w; };
struct alignas(4) uchar4 { unsigned char x, y, z, w; };
struct alignas(4) short2 { short x, y; };
struct alignas(4) ushort2 { unsigned short x, y; };
struct short3 { short x, y, z; };
struct ushort3 { unsigned short x, y, z; };
struct alignas(8) short4 { short x, y, z, w; };
struct alignas(8) ushort4 { unsigned short x, y, z, w; };
struct alignas(8) int2 { int x, y; };
struct alignas(8) uint2 { unsigned int x, y; };
struct int3 { int x, y, z; };
struct uint3 { unsigned int x, y, z; };
struct alignas(16) int4 { int x, y, z, w; };
struct alignas(16) uint4 { unsigned int x, y, z, w; };
struct alignas(8) float2 { float x, y; };
struct float3 { float x, y, z; };
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(16) longlong2 { long long x, y; };
struct alignas(16) ulonglong2 { unsigned long long x, y; };
struct longlong3 { long long x, y, z; };
struct ulonglong3 { unsigned long long x, y, z; };
struct alignas(16) double2 { double x, y; };
struct double3 { double x, y, z; };
