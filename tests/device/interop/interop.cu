// Device check for gpu-aligned's CUDA interop (issue 5).
//   ./interop check            every generated type through gpu_load/gpu_store, verified
//   ./interop patterns FILE    one warp-wide load per line of the model table (for ncu)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>
#include "gpu_types.cuh"

#define CHECK(x)                                                                       \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__,  \
                        __LINE__);                                                     \
            std::exit(2);                                                              \
        }                                                                              \
    } while (0)

// What each kernel does to an element: every data field changes, pads stay.
__host__ __device__ inline void change(Flags& v) { v.bits ^= 0x5a; }
__host__ __device__ inline void change(Texel& v) { v.luma += 3; v.alpha = (int8_t)(-v.alpha); }
__host__ __device__ inline void change(Rgba8& v) { uint8_t r = v.r; v.r = v.b; v.b = r; v.a = 255 - v.a; v.g += 1; }
__host__ __device__ inline void change(Vec2& v) { v.x = v.x * 2.0f; v.y = v.y + 1.0f; }
__host__ __device__ inline void change(Sample& v) { v.value += 1.0f; v.time *= 2.0; }
__host__ __device__ inline void change(Particle& v) { v.position.x += 1.0f; v.position.y *= 2.0f; v.position.z = -v.position.z; }
__host__ __device__ inline void change(Segment& v) { Vec2 t = v.from; v.from = v.to; v.to = t; v.to.x += 0.5f; }

static void init(Flags& v, int i) { v.bits = (uint8_t)(i * 7); }
static void init(Texel& v, int i) { v.luma = (uint8_t)i; v.alpha = (int8_t)(i * 3); }
static void init(Rgba8& v, int i) { v.r = (uint8_t)i; v.g = (uint8_t)(i >> 3); v.b = (uint8_t)(i * 5); v.a = (uint8_t)(i >> 8); }
static void init(Vec2& v, int i) { v.x = (float)i * 0.25f; v.y = -(float)i; }
static void init(Sample& v, int i) { v.value = (float)i * 0.5f; v.pad = 0; v.time = (double)i * 1.25; }
static void init(Particle& v, int i) { v.position.x = (float)i; v.position.y = 0.5f * i; v.position.z = 3.0f - i; std::memset(v.__pad_tail, 0, sizeof v.__pad_tail); }
static void init(Segment& v, int i) { v.from.x = (float)i; v.from.y = 1.0f; v.to.x = -1.0f; v.to.y = (float)(i & 1023); }

// The one-instruction path: one gpu_load, one gpu_store per element.
template <class T>
__global__ void via_accessors(const T* __restrict__ in, T* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = gpu_load(in + i);
        change(v);
        gpu_store(out + i, v);
    }
}

// The plain struct copy nvcc is free to split, for contrast.
template <class T>
__global__ void plain_copy(const T* __restrict__ in, T* __restrict__ out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        T v = in[i];
        change(v);
        out[i] = v;
    }
}

template <class T>
static int check(const char* name) {
    const int n = 1 << 20;
    std::vector<T> host(n), expected(n), got(n);
    std::memset(host.data(), 0, sizeof(T) * n);
    for (int i = 0; i < n; ++i) init(host[i], i);
    expected = host;
    for (int i = 0; i < n; ++i) change(expected[i]);
    T *in, *out;
    CHECK(cudaMalloc(&in, sizeof(T) * n));
    CHECK(cudaMalloc(&out, sizeof(T) * n));
    CHECK(cudaMemcpy(in, host.data(), sizeof(T) * n, cudaMemcpyHostToDevice));
    int failures = 0;
    for (int variant = 0; variant < 2; ++variant) {
        CHECK(cudaMemset(out, 0xff, sizeof(T) * n));
        if (variant == 0) via_accessors<T><<<(n + 255) / 256, 256>>>(in, out, n);
        else plain_copy<T><<<(n + 255) / 256, 256>>>(in, out, n);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(got.data(), out, sizeof(T) * n, cudaMemcpyDeviceToHost));
        int wrong = 0;
        for (int i = 0; i < n; ++i) wrong += std::memcmp(&got[i], &expected[i], sizeof(T)) != 0;
        std::printf("%-9s %2zu B  %-13s %d elements, %d wrong\n", name, sizeof(T),
                    variant == 0 ? "gpu_load/store" : "plain copy", n, wrong);
        failures += wrong;
    }
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return failures;
}

template <class W>
__global__ void pattern(const unsigned char* base, unsigned long long offset, unsigned long long stride,
                        int scatter, W* sink) {
    unsigned long long lane = threadIdx.x;
    unsigned long long at = scatter ? offset + ((lane * 7919ull) % 32ull) * 4096ull : offset + lane * stride;
    sink[lane] = *reinterpret_cast<const W*>(base + at);
}

static int patterns(const char* path) {
    FILE* f = std::fopen(path, "r");
    if (!f) { std::printf("cannot open %s\n", path); return 2; }
    unsigned char* base;
    uint4* sink;
    CHECK(cudaMalloc(&base, 1 << 20));
    CHECK(cudaMemset(base, 1, 1 << 20));
    CHECK(cudaMalloc(&sink, 32 * sizeof(uint4)));
    char line[256], name[64], stride_text[32];
    unsigned long long width, offset;
    if (!std::fgets(line, sizeof line, f)) return 2;  // header row
    while (std::fgets(line, sizeof line, f)) {
        if (std::sscanf(line, "%63s %llu %llu %31s", name, &width, &offset, stride_text) != 4) continue;
        int scatter = std::strcmp(stride_text, "scatter") == 0;
        unsigned long long stride = scatter ? 0 : std::strtoull(stride_text, nullptr, 10);
        switch (width) {
            case 1: pattern<unsigned char><<<1, 32>>>(base, offset, stride, scatter, (unsigned char*)sink); break;
            case 2: pattern<unsigned short><<<1, 32>>>(base, offset, stride, scatter, (unsigned short*)sink); break;
            case 4: pattern<unsigned int><<<1, 32>>>(base, offset, stride, scatter, (unsigned int*)sink); break;
            case 8: pattern<uint2><<<1, 32>>>(base, offset, stride, scatter, (uint2*)sink); break;
            case 16: pattern<uint4><<<1, 32>>>(base, offset, stride, scatter, sink); break;
            default: std::printf("%s: width %llu is not a GPU word\n", name, width); continue;
        }
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceSynchronize());
        std::printf("launched %s\n", name);
    }
    // The generated accessor over an array of Sample, and one field of it.
    Sample* samples;
    CHECK(cudaMalloc(&samples, 64 * sizeof(Sample)));
    CHECK(cudaMemset(samples, 0, 64 * sizeof(Sample)));
    via_accessors<Sample><<<1, 32>>>(samples, samples + 32, 32);
    CHECK(cudaDeviceSynchronize());
    std::printf("launched sample-gpu_load\n");
    std::fclose(f);
    return 0;
}

int main(int argc, char** argv) {
    if (argc >= 3 && std::strcmp(argv[1], "patterns") == 0) return patterns(argv[2]);
    int failures = 0;
    failures += check<Flags>("Flags");
    failures += check<Texel>("Texel");
    failures += check<Rgba8>("Rgba8");
    failures += check<Vec2>("Vec2");
    failures += check<Sample>("Sample");
    failures += check<Particle>("Particle");
    failures += check<Segment>("Segment");
    std::printf("%s\n", failures == 0 ? "ALL RESULTS RIGHT" : "WRONG RESULTS");
    return failures != 0;
}
