// One kernel source, three layouts: the views gpu-aligned emits for a struct
// as a structure of arrays (T_soa), an array of structs (T_aos) and a padded
// array of structs (T_aos16). For each struct (Body: 52 bytes of thirteen
// 4-byte fields; Eight: 32 bytes; Float3: 12 bytes) the program runs every
// kernel over every layout from the same data and counts elements that
// differ, then times (1) read+write one field, (2) read+write every field,
// (3) a random gather of whole elements. The `probe` kernels are there for the
// SASS count of loads and stores per element.
#include "types.cuh"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t err_ = (call);                                                   \
        if (err_ != cudaSuccess) {                                                   \
            std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #call,                 \
                        cudaGetErrorString(err_));                                   \
            std::exit(1);                                                            \
        }                                                                            \
    } while (0)

constexpr int PER_THREAD = 8;
constexpr int BLOCK = 256;

__host__ __device__ inline unsigned long long first_index(unsigned block, unsigned thread) {
    return (unsigned long long)block * BLOCK * PER_THREAD + thread;
}

// What each kernel does to one element, per struct.
template <class T> struct Ops;
template <> struct Ops<Body> {
    static __device__ Body init(unsigned long long i) {
        float f = (float)(i % 1000);
        Body b;
        b.x = f; b.y = 2 * f; b.z = 3 * f;
        b.vx = 0.5f; b.vy = -0.25f; b.vz = 0.125f;
        b.ax = 0.01f * f; b.ay = 0.02f; b.az = -0.03f;
        b.mass = 1.0f + f; b.charge = (i & 1) ? 1.0f : -1.0f; b.energy = 0.0f;
        b.id = (uint32_t)i;
        return b;
    }
    static __device__ void advance(Body& b) {
        const float dt = 0.01f;
        b.vx += b.ax * dt; b.vy += b.ay * dt; b.vz += b.az * dt;
        b.x += b.vx * dt; b.y += b.vy * dt; b.z += b.vz * dt;
        b.ax *= 0.99f; b.ay *= 0.99f; b.az *= 0.99f;
        b.mass *= 0.9999f;
        b.charge = -b.charge;
        b.energy = 0.5f * b.mass * (b.vx * b.vx + b.vy * b.vy + b.vz * b.vz);
        b.id += 1;
    }
    static __device__ float total(const Body& e) {
        return e.x + e.y + e.z + e.vx + e.vy + e.vz + e.ax + e.ay + e.az + e.mass + e.charge +
               e.energy + (float)e.id;
    }
};
template <> struct Ops<Eight> {
    static __device__ Eight init(unsigned long long i) {
        float f = (float)(i % 1000);
        Eight e = {f, f + 1, f + 2, f + 3, f + 4, f + 5, f + 6, f + 7};
        return e;
    }
    static __device__ void advance(Eight& e) {
        e.a += e.h; e.b *= 0.5f; e.c -= e.a; e.d += 1.0f; e.e = -e.e; e.f *= e.b; e.g += 2.0f; e.h *= 0.99f;
    }
    static __device__ float total(const Eight& e) {
        return e.a + e.b + e.c + e.d + e.e + e.f + e.g + e.h;
    }
};
template <> struct Ops<Float3> {
    static __device__ Float3 init(unsigned long long i) {
        float f = (float)(i % 1000);
        Float3 p = {f, 2 * f, 3 * f};
        return p;
    }
    static __device__ void advance(Float3& p) {
        p.x += 0.5f; p.y *= 0.99f; p.z -= p.x;
    }
    static __device__ float total(const Float3& p) { return p.x + p.y + p.z; }
};

// The one field kernel (1) touches: Body::mass, Eight::g, Float3::y.
#define ONE_FIELD(View, member) \
    __device__ __forceinline__ float& one(const View& v, unsigned long long i) { return v.member[i]; }
ONE_FIELD(Body_soa, mass) ONE_FIELD(Body_aos, mass) ONE_FIELD(Body_aos16, mass)
ONE_FIELD(Eight_soa, g) ONE_FIELD(Eight_aos, g) ONE_FIELD(Eight_aos16, g)
ONE_FIELD(Float3_soa, y) ONE_FIELD(Float3_aos, y) ONE_FIELD(Float3_aos16, y)

template <class View>
__global__ void fill(View v) {
    typedef decltype(v.load(0)) T;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < v.len) v.store(i, Ops<T>::init(i));
}

// (1) Read and write one field.
template <class View>
__global__ void one_field(View v) {
    unsigned long long base = first_index(blockIdx.x, threadIdx.x);
    float m[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        m[k] = i < v.len ? one(v, i) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) one(v, i) = m[k] * 0.999f + 1.0f;
    }
}

// (2) Read and write every field.
template <class View>
__global__ void all_fields(View v) {
    typedef decltype(v.load(0)) T;
    unsigned long long base = first_index(blockIdx.x, threadIdx.x);
    T b[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) b[k] = v.load(i);
    }
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) {
            Ops<T>::advance(b[k]);
            v.store(i, b[k]);
        }
    }
}

// (3) Gather whole elements at random indices; the output is the same array
// for every layout.
template <class View>
__global__ void gather(View v, const unsigned* idx, float* out) {
    typedef decltype(v.load(0)) T;
    unsigned long long base = first_index(blockIdx.x, threadIdx.x);
    T b[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) b[k] = v.load(idx[i]);
    }
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) out[i] = Ops<T>::total(b[k]);
    }
}

// Counts elements whose bytes differ between two layouts.
template <class A, class B>
__global__ void differ(A a, B b, unsigned long long* count) {
    typedef decltype(a.load(0)) T;
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= a.len) return;
    T x = a.load(i), y = b.load(i);
    const unsigned* px = reinterpret_cast<const unsigned*>(&x);
    const unsigned* py = reinterpret_cast<const unsigned*>(&y);
    bool same = true;
    for (unsigned k = 0; k < sizeof(T) / 4; ++k) same = same && px[k] == py[k];
    if (!same) atomicAdd(count, 1ull);
}

// For the SASS count: one element copied whole, and one field updated.
template <class View>
__global__ void probe_copy(View v) {
    v.store(threadIdx.x + 4096, v.load(threadIdx.x));
}
template <class View>
__global__ void probe_field(View v) {
    one(v, threadIdx.x) += 1.0f;
}
template <class View>
__global__ void probe_copy_particle(View v) {
    v.store(threadIdx.x + 4096, v.load(threadIdx.x));
}
template __global__ void probe_copy<Body_soa>(Body_soa);
template __global__ void probe_copy<Body_aos>(Body_aos);
template __global__ void probe_copy<Body_aos16>(Body_aos16);
template __global__ void probe_field<Body_soa>(Body_soa);
template __global__ void probe_field<Body_aos>(Body_aos);
template __global__ void probe_field<Body_aos16>(Body_aos16);
template __global__ void probe_copy_particle<Particle_soa>(Particle_soa);
template __global__ void probe_copy_particle<Particle_aos>(Particle_aos);
template __global__ void probe_copy_particle<Particle_aos16>(Particle_aos16);

static unsigned blocks_for(unsigned long long n, int per_thread) {
    return (unsigned)((n + (unsigned long long)BLOCK * per_thread - 1) / ((unsigned long long)BLOCK * per_thread));
}

template <class A, class B>
static unsigned long long count_differ(A a, B b) {
    unsigned long long* d;
    CHECK(cudaMalloc(&d, sizeof *d));
    CHECK(cudaMemset(d, 0, sizeof *d));
    differ<<<blocks_for(a.len, 1), BLOCK>>>(a, b, d);
    unsigned long long h = 0;
    CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d));
    return h;
}

static std::vector<unsigned> random_indices(unsigned long long n) {
    std::vector<unsigned> idx(n);
    unsigned long long state = 0x9E3779B97F4A7C15ull;
    for (unsigned long long i = 0; i < n; ++i) {
        state ^= state << 13; state ^= state >> 7; state ^= state << 17;
        idx[i] = (unsigned)(state % n);
    }
    return idx;
}

template <class F>
static float median_us(F launch, int reps) {
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    launch();  // warm-up
    CHECK(cudaDeviceSynchronize());
    std::vector<float> times;
    for (int r = 0; r < reps; ++r) {
        CHECK(cudaEventRecord(start));
        launch();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms * 1000.0f);
    }
    CHECK(cudaGetLastError());
    std::sort(times.begin(), times.end());
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return times[times.size() / 2];
}

// Checks and times one struct's three layouts; false if they disagree.
template <class T, class Soa, class Aos, class Aos16>
static bool run(const char* name, unsigned long long n, int reps, const unsigned* idx, float* const out[3]) {
    void* buffers[3];
    CHECK(cudaMalloc(&buffers[0], Soa::bytes(n)));
    CHECK(cudaMalloc(&buffers[1], Aos::bytes(n)));
    CHECK(cudaMalloc(&buffers[2], Aos16::bytes(n)));
    Soa soa = Soa::carve(buffers[0], n);
    Aos aos = Aos::over(buffers[1], n);
    Aos16 aos16 = Aos16::over(buffers[2], n);
    std::printf("\n%s: %llu elements of %zu bytes (AoS %.2f GB, padded %.2f GB, SoA %.2f GB)\n", name, n,
                sizeof(T), Aos::bytes(n) / 1e9, Aos16::bytes(n) / 1e9, Soa::bytes(n) / 1e9);

    // Identical results: same data in, every kernel once, compare.
    fill<<<blocks_for(n, 1), BLOCK>>>(soa);
    fill<<<blocks_for(n, 1), BLOCK>>>(aos);
    fill<<<blocks_for(n, 1), BLOCK>>>(aos16);
    unsigned grid = blocks_for(n, PER_THREAD);
    one_field<<<grid, BLOCK>>>(soa); one_field<<<grid, BLOCK>>>(aos); one_field<<<grid, BLOCK>>>(aos16);
    all_fields<<<grid, BLOCK>>>(soa); all_fields<<<grid, BLOCK>>>(aos); all_fields<<<grid, BLOCK>>>(aos16);
    gather<<<grid, BLOCK>>>(soa, idx, out[0]);
    gather<<<grid, BLOCK>>>(aos, idx, out[1]);
    gather<<<grid, BLOCK>>>(aos16, idx, out[2]);
    CHECK(cudaDeviceSynchronize());
    unsigned long long d1 = count_differ(soa, aos), d2 = count_differ(soa, aos16);
    std::vector<float> g0(n), g1(n), g2(n);
    CHECK(cudaMemcpy(g0.data(), out[0], n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(g1.data(), out[1], n * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(g2.data(), out[2], n * sizeof(float), cudaMemcpyDeviceToHost));
    bool gathers_equal = std::memcmp(g0.data(), g1.data(), n * sizeof(float)) == 0 &&
                         std::memcmp(g0.data(), g2.data(), n * sizeof(float)) == 0;
    std::printf("check: elements differing SoA/AoS %llu, SoA/padded %llu; gather outputs %s\n", d1, d2,
                gathers_equal ? "identical" : "DIFFER");

    const char* names[3] = {"SoA", "AoS", "padded AoS"};
    float t[3][3];
    t[0][0] = median_us([&] { one_field<<<grid, BLOCK>>>(soa); }, reps);
    t[0][1] = median_us([&] { one_field<<<grid, BLOCK>>>(aos); }, reps);
    t[0][2] = median_us([&] { one_field<<<grid, BLOCK>>>(aos16); }, reps);
    t[1][0] = median_us([&] { all_fields<<<grid, BLOCK>>>(soa); }, reps);
    t[1][1] = median_us([&] { all_fields<<<grid, BLOCK>>>(aos); }, reps);
    t[1][2] = median_us([&] { all_fields<<<grid, BLOCK>>>(aos16); }, reps);
    t[2][0] = median_us([&] { gather<<<grid, BLOCK>>>(soa, idx, out[0]); }, reps);
    t[2][1] = median_us([&] { gather<<<grid, BLOCK>>>(aos, idx, out[1]); }, reps);
    t[2][2] = median_us([&] { gather<<<grid, BLOCK>>>(aos16, idx, out[2]); }, reps);
    const char* kernels[3] = {"(1) read+write one field", "(2) read+write every field",
                              "(3) random gather, whole elements"};
    std::printf("%-36s %12s %12s %12s  fastest\n", "kernel (us, median)", names[0], names[1], names[2]);
    for (int k = 0; k < 3; ++k) {
        int best = 0;
        for (int j = 1; j < 3; ++j)
            if (t[k][j] < t[k][best]) best = j;
        std::printf("%-36s %12.1f %12.1f %12.1f  %s\n", kernels[k], t[k][0], t[k][1], t[k][2], names[best]);
    }
    std::printf("ratios: (1) AoS/SoA %.2fx, padded/SoA %.2fx; (2) fastest/SoA %.3f, AoS/SoA %.2fx, "
                "padded/SoA %.2fx; (3) SoA/padded %.2fx, AoS/padded %.2fx\n",
                t[0][1] / t[0][0], t[0][2] / t[0][0],
                std::min(t[1][0], std::min(t[1][1], t[1][2])) / t[1][0], t[1][1] / t[1][0],
                t[1][2] / t[1][0], t[2][0] / t[2][2], t[2][1] / t[2][2]);
    std::printf("(2) bandwidth of the data (2 x %zu bytes an element): SoA %.0f GB/s, AoS %.0f GB/s\n",
                sizeof(T), 2.0 * sizeof(T) * n / t[1][0] / 1e3, 2.0 * sizeof(T) * n / t[1][1] / 1e3);
    for (void* b : buffers) CHECK(cudaFree(b));
    return d1 == 0 && d2 == 0 && gathers_equal;
}

int main(int argc, char** argv) {
    unsigned long long n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : (1ull << 25);
    int reps = argc > 2 ? std::atoi(argv[2]) : 11;
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, L2 %d MiB; %d elements per thread, median of %d runs after one warm-up\n",
                prop.name, prop.l2CacheSize >> 20, PER_THREAD, reps);
    std::vector<unsigned> h_idx = random_indices(n);
    unsigned* idx;
    float* out[3];
    CHECK(cudaMalloc(&idx, n * sizeof(unsigned)));
    CHECK(cudaMemcpy(idx, h_idx.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    for (auto& o : out) CHECK(cudaMalloc(&o, n * sizeof(float)));
    bool ok = run<Body, Body_soa, Body_aos, Body_aos16>("Body", n, reps, idx, out);
    ok = run<Eight, Eight_soa, Eight_aos, Eight_aos16>("Eight", n, reps, idx, out) && ok;
    ok = run<Float3, Float3_soa, Float3_aos, Float3_aos16>("Float3", n, reps, idx, out) && ok;
    std::printf("\n%s\n", ok ? "IDENTICAL RESULTS OVER EVERY LAYOUT" : "LAYOUTS DISAGREE");
    return ok ? 0 : 1;
}
