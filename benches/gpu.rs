//! The device benchmark: what the arena's 256-byte starts buy on a
//! real GPU, what padding costs, and how fast the arena allocates compared to
//! the driver. Runs on an NVIDIA GPU (build here, carry the binary there);
//! prints a table and writes `gpu_bench.csv` into the folder named by
//! `GPU_BENCH_OUT` (default: the current directory). `plot_gpu.py`
//! beside this file turns the CSV into the PNG in `docs/RESULTS.md`.
//!
//! Every kernel handles 8 elements per thread, every array is 1 GiB (far
//! larger than the H100's 50 MB L2), and every kernel figure is the median
//! of repeated launches timed with CUDA events after warm-up launches (the
//! allocation figures are host-timed, medians of rounds of many pairs that
//! take turns with the driver's). The
//! carved arrays come from a device [`Arena`]; the padded `float3` is a
//! `#[gpu_aligned::padded]` type, declared to the kernels by
//! `gpu_aligned::header`. `--alloc-only` runs the allocation section alone;
//! `--pairs N`, `--sync-pairs N`, `--rounds N` and `--warmup N` size it.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc;
use gpu_aligned::backend::Buffer;
use gpu_aligned::header::CudaHeader;
use gpu_aligned::vector::float4;

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};

// Alternating rounds and medians, shared with the other device benches and
// `trace_replay`.
#[path = "../tests/support/address.rs"]
mod address;
use address::address_of;
#[path = "../runtime/examples/support/rounds.rs"]
#[allow(dead_code)]
mod rounds;

/// `float3` made a legal element: `{x, y, z, __pad_tail[4]}`, 16 bytes,
/// aligned to 16, the pad zeroed.
#[gpu_aligned::padded]
#[derive(Clone, Copy, Debug)]
pub struct Float3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

const ELEMS_PER_THREAD: u32 = 8;
const BLOCK: u32 = 256;
const ARRAY_BYTES: usize = 1 << 30;
const WARMUP: usize = 3;
const REPEATS: usize = 21;

const KERNELS: &str = r#"
#define EPT 8
typedef Float3 f3_padded;
struct f3_packed { float x, y, z; };
struct __align__(16) f3_hole { float x, y, z; };

__device__ __forceinline__ float bump(float v) { return v * 0.5f + 1.0f; }
__device__ __forceinline__ float  rmw(float v)  { return bump(v); }
__device__ __forceinline__ float4 rmw(float4 v) { v.x = bump(v.x); v.y = bump(v.y); v.z = bump(v.z); v.w = bump(v.w); return v; }
__device__ __forceinline__ f3_padded rmw(f3_padded v) { v.x = bump(v.x); v.y = bump(v.y); v.z = bump(v.z); return v; }
__device__ __forceinline__ f3_packed rmw(f3_packed v) { v.x = bump(v.x); v.y = bump(v.y); v.z = bump(v.z); return v; }
__device__ __forceinline__ f3_hole   rmw(f3_hole v)   { v.x = bump(v.x); v.y = bump(v.y); v.z = bump(v.z); return v; }
__device__ __forceinline__ float total(float v)     { return v; }
__device__ __forceinline__ float total(float4 v)    { return v.x + v.y + v.z + v.w; }
__device__ __forceinline__ float total(f3_padded v) { return v.x + v.y + v.z; }
__device__ __forceinline__ float total(f3_packed v) { return v.x + v.y + v.z; }
__device__ __forceinline__ float total(f3_hole v)   { return v.x + v.y + v.z; }

// Element moves: plain for most types; the padded type goes through the
// header's one-instruction gpu_load/gpu_store.
template <typename T> __device__ __forceinline__ T load(const T* p) { return *p; }
template <typename T> __device__ __forceinline__ void store(T* p, const T& v) { *p = v; }
template <> __device__ __forceinline__ Float3 load(const Float3* p) { return gpu_load(p); }
template <> __device__ __forceinline__ void store(Float3* p, const Float3& v) { gpu_store(p, v); }

template <typename T>
__device__ __forceinline__ void rmw_body(T* __restrict__ a, unsigned long long n) {
    unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * EPT + threadIdx.x;
    T v[EPT];
#pragma unroll
    for (int k = 0; k < EPT; ++k) { unsigned long long i = base + (unsigned long long)k * blockDim.x; if (i < n) v[k] = load(a + i); }
#pragma unroll
    for (int k = 0; k < EPT; ++k) { unsigned long long i = base + (unsigned long long)k * blockDim.x; if (i < n) store(a + i, rmw(v[k])); }
}

// Writes the three lanes one by one, as `a[i].x = ...` code does: whatever
// the pad or hole holds is left alone, so each element's store covers 12 of
// its 16 bytes.
template <typename T>
__device__ __forceinline__ void rmw_fields_body(T* __restrict__ a, unsigned long long n) {
    unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * EPT + threadIdx.x;
    T v[EPT];
#pragma unroll
    for (int k = 0; k < EPT; ++k) { unsigned long long i = base + (unsigned long long)k * blockDim.x; if (i < n) v[k] = load(a + i); }
#pragma unroll
    for (int k = 0; k < EPT; ++k) {
        unsigned long long i = base + (unsigned long long)k * blockDim.x;
        if (i < n) { a[i].x = bump(v[k].x); a[i].y = bump(v[k].y); a[i].z = bump(v[k].z); }
    }
}

template <typename T>
__device__ __forceinline__ void read_body(const T* __restrict__ a, unsigned long long n, float* sink) {
    unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * EPT + threadIdx.x;
    float acc = 0.0f;
#pragma unroll
    for (int k = 0; k < EPT; ++k) { unsigned long long i = base + (unsigned long long)k * blockDim.x; if (i < n) acc += total(load(a + i)); }
    // Never true for the benchmark's data; keeps the loads alive.
    if (acc == -1.0f) sink[0] = acc;
}

extern "C" __global__ void copy_float4(const float4* __restrict__ src, float4* __restrict__ dst, unsigned long long n) {
    unsigned long long base = (unsigned long long)blockIdx.x * blockDim.x * EPT + threadIdx.x;
    float4 v[EPT];
#pragma unroll
    for (int k = 0; k < EPT; ++k) { unsigned long long i = base + (unsigned long long)k * blockDim.x; if (i < n) v[k] = src[i]; }
#pragma unroll
    for (int k = 0; k < EPT; ++k) { unsigned long long i = base + (unsigned long long)k * blockDim.x; if (i < n) dst[i] = v[k]; }
}
extern "C" __global__ void rmw_float(float* a, unsigned long long n) { rmw_body(a, n); }
extern "C" __global__ void rmw_float4(float4* a, unsigned long long n) { rmw_body(a, n); }
extern "C" __global__ void rmw_f3_padded(f3_padded* a, unsigned long long n) { rmw_body(a, n); }
extern "C" __global__ void rmw_f3_packed(f3_packed* a, unsigned long long n) { rmw_body(a, n); }
extern "C" __global__ void rmw_f3_hole(f3_hole* a, unsigned long long n) { rmw_body(a, n); }
extern "C" __global__ void fields_f3_padded(f3_padded* a, unsigned long long n) { rmw_fields_body(a, n); }
extern "C" __global__ void fields_f3_packed(f3_packed* a, unsigned long long n) { rmw_fields_body(a, n); }
extern "C" __global__ void fields_f3_hole(f3_hole* a, unsigned long long n) { rmw_fields_body(a, n); }
extern "C" __global__ void read_f3_padded(const f3_padded* a, unsigned long long n, float* sink) { read_body(a, n, sink); }
extern "C" __global__ void read_f3_packed(const f3_packed* a, unsigned long long n, float* sink) { read_body(a, n, sink); }
extern "C" __global__ void read_f3_hole(const f3_hole* a, unsigned long long n, float* sink) { read_body(a, n, sink); }
extern "C" __global__ void fill_float(float* a, unsigned long long n_floats) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_floats) a[i] = (float)(i % 1000) * 0.001f + 0.25f;
}
"#;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

struct Bench {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<cudarc::driver::CudaModule>,
    csv: String,
}

fn launch_config(n: u64) -> LaunchConfig {
    let per_block = u64::from(BLOCK * ELEMS_PER_THREAD);
    LaunchConfig {
        grid_dim: (
            u32::try_from(n.div_ceil(per_block)).expect("grid fits u32"),
            1,
            1,
        ),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl Bench {
    /// Writes `gpu_bench.csv` into `out_dir`.
    fn write(&self, out_dir: &str) -> Res<()> {
        let path = std::path::Path::new(out_dir).join("gpu_bench.csv");
        std::fs::write(&path, &self.csv)?;
        println!("\nwrote {}", path.display());
        Ok(())
    }

    fn func(&self, name: &str) -> Res<CudaFunction> {
        Ok(self.module.load_function(name)?)
    }

    /// Median milliseconds of one launch of `kernel` with raw device-pointer
    /// arguments: `arrays`, then `n`, then `sink` if given.
    fn time(&self, kernel: &str, arrays: &[u64], n: u64, sink: Option<&u64>) -> Res<f64> {
        let func = self.func(kernel)?;
        let start = self
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        let end = self
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))?;
        let mut samples = Vec::with_capacity(REPEATS);
        for rep in 0..WARMUP + REPEATS {
            let mut args = self.stream.launch_builder(&func);
            for p in arrays {
                args.arg(p);
            }
            args.arg(&n);
            if let Some(sink) = sink {
                args.arg(sink);
            }
            start.record(&self.stream)?;
            // SAFETY: every kernel above takes its arrays, then `n`, then an
            // optional sink, and touches elements `[0, n)` only; the caller
            // passes pointers to at least `n` elements of the kernel's type.
            unsafe { args.launch(launch_config(n)) }?;
            end.record(&self.stream)?;
            end.synchronize()?;
            if rep >= WARMUP {
                samples.push(f64::from(start.elapsed_ms(&end)?));
            }
        }
        samples.sort_by(f64::total_cmp);
        Ok(samples[samples.len() / 2])
    }

    fn fill(&self, ptr: u64, bytes: usize) -> Res<()> {
        let func = self.func("fill_float")?;
        let n = (bytes / 4) as u64;
        let mut args = self.stream.launch_builder(&func);
        args.arg(&ptr).arg(&n);
        let cfg = LaunchConfig {
            grid_dim: (u32::try_from(n.div_ceil(256))?, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: `fill_float` writes floats `[0, n)`; `ptr` points to `bytes`
        // bytes of device memory, 4-aligned.
        unsafe { args.launch(cfg) }?;
        self.stream.synchronize()?;
        Ok(())
    }

    fn row(
        &mut self,
        section: &str,
        case: &str,
        value: f64,
        unit: &str,
        pct_peak: f64,
        note: &str,
    ) {
        let _ = writeln!(
            self.csv,
            "{section},{case},{value:.4},{unit},{pct_peak:.2},{note}"
        );
    }
}

fn gbps(bytes: f64, ms: f64) -> f64 {
    bytes / (ms * 1e-3) / 1e9
}

fn raw_alloc(bytes: usize) -> Res<u64> {
    let mut ptr = 0;
    // SAFETY: `cuMemAlloc` writes one device pointer into `ptr`.
    unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes) }.result()?;
    Ok(ptr)
}

fn raw_free(ptr: u64) -> Res<()> {
    // SAFETY: `ptr` came from `cuMemAlloc` and is freed once.
    unsafe { sys::cuMemFree_v2(ptr) }.result()?;
    Ok(())
}

fn civil_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Howard Hinnant's days-to-civil conversion.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

fn main() -> Res<()> {
    let out_dir = std::env::var("GPU_BENCH_OUT").unwrap_or_else(|_| ".".into());
    // NVRTC needs no GPU: `--compile-only` checks the kernels on any machine
    // that has libnvrtc, and prints their PTX.
    let opts = cudarc::nvrtc::CompileOptions {
        arch: Some("compute_90"),
        ..Default::default()
    };
    let mut header = CudaHeader::new();
    header.add::<Float3>()?;
    let source = format!("{}\n{KERNELS}", header.render());
    let ptx = cudarc::nvrtc::compile_ptx_with_opts(&source, opts)?;
    if std::env::args().any(|a| a == "--compile-only") {
        println!("{}", ptx.to_src());
        return Ok(());
    }
    let ctx = CudaContext::new(0)?;
    let stream = ctx.new_stream()?;
    let module = ctx.load_module(ptx)?;
    let mut driver = 0;
    // SAFETY: writes one int.
    unsafe { sys::cuDriverGetVersion(&mut driver) }.result()?;
    let name = ctx.name()?;
    let sms = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
    let l2 = ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?;
    let pitch_align =
        ctx.attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT)?;
    let date = civil_date();
    println!(
        "device: {name}, {sms} SMs, L2 {} MB, CUDA driver API {driver}, date {date}",
        l2 >> 20
    );
    let mut b = Bench {
        ctx: ctx.clone(),
        stream: stream.clone(),
        module,
        csv: String::new(),
    };
    b.csv
        .push_str("section,case,value,unit,pct_of_copy_peak,note\n");
    b.row("meta", "device", 0.0, "", 0.0, &name.replace(',', " "));
    b.row("meta", "driver_api", f64::from(driver), "", 0.0, &date);
    // `--alloc-only`: section 4 alone, a few seconds instead of minutes.
    if std::env::args().any(|a| a == "--alloc-only") {
        allocation_speed(&mut b)?;
        return b.write(&out_dir);
    }

    // ---- pitches: what cuMemAllocPitch picks
    println!("\n## cuMemAllocPitch (height 16); CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = {pitch_align}");
    println!("{:>10} {:>6} {:>8}", "width B", "elem", "pitch");
    for &elem in &[4u32, 8, 16] {
        for &width in &[
            1usize, 12, 16, 100, 256, 500, 511, 512, 513, 1000, 1024, 1500, 2048, 4097, 7680,
            65_536,
        ] {
            let mut ptr = 0;
            let mut pitch = 0;
            // SAFETY: writes one pointer and one pitch.
            unsafe { sys::cuMemAllocPitch_v2(&mut ptr, &mut pitch, width, 16, elem) }.result()?;
            raw_free(ptr)?;
            println!("{width:>10} {elem:>6} {pitch:>8}");
            b.row(
                "pitch",
                &format!("w{width}_e{elem}"),
                pitch as f64,
                "bytes",
                0.0,
                "",
            );
        }
    }

    // ---- base alignment of driver allocations
    let mut min_tz = 64;
    for &bytes in &[1usize, 100, 4096, 1 << 20] {
        let p = raw_alloc(bytes)?;
        min_tz = min_tz.min(p.trailing_zeros());
        raw_free(p)?;
    }
    println!(
        "\ncuMemAlloc base alignment: every pointer a multiple of {}",
        1u64 << min_tz
    );

    // ---- 1. peak
    let n4 = (ARRAY_BYTES / 16) as u64;
    let src = raw_alloc(ARRAY_BYTES)?;
    let dst = raw_alloc(ARRAY_BYTES)?;
    b.fill(src, ARRAY_BYTES)?;
    b.fill(dst, ARRAY_BYTES)?;
    let ms = b.time("copy_float4", &[src, dst], n4, None)?;
    let peak = gbps(2.0 * ARRAY_BYTES as f64, ms);
    println!(
        "\n## 1. peak: float4 copy, {} MiB -> {} MiB: {ms:.3} ms, {peak:.1} GB/s (read + written)",
        ARRAY_BYTES >> 20,
        ARRAY_BYTES >> 20
    );
    b.row("peak", "copy_float4", peak, "GB/s", 100.0, "read+written");
    raw_free(src)?;
    raw_free(dst)?;

    // ---- 2. RMW: carved by the arena (256) vs separate vs naive offsets
    // One arena holds everything below: a small array first (so the carved
    // arrays are not at offset 0), a float and a float4 array, a scratch
    // region for the naive carves, and the padded float3 array.
    let n3 = (ARRAY_BYTES / 16) as u64;
    let arena_bytes = 5 * ARRAY_BYTES + (1 << 20);
    let mut arena = Arena::device(&stream, arena_bytes)?;
    let head = arena.alloc::<u8>(1000)?;
    let carved_f32 = arena.alloc::<f32>(ARRAY_BYTES / 4)?;
    let carved_f4 = arena.alloc::<float4>(ARRAY_BYTES / 16)?;
    let scratch = arena.alloc::<u8>(ARRAY_BYTES + 256)?;
    let padded = arena.alloc::<Float3>(n3 as usize)?;
    println!(
        "\narena: {} MiB at {:#x} (base alignment {}), float array at offset {}, float4 at {}",
        arena_bytes >> 20,
        arena.backend().base_address(),
        arena.backend().base_alignment(),
        arena.offset(&carved_f32)?,
        arena.offset(&carved_f4)?
    );
    b.fill(arena.backend().base_address(), arena_bytes)?;

    println!(
        "\n## 2. in-place read-modify-write, {} MiB per array",
        ARRAY_BYTES >> 20
    );
    println!(
        "{:<8} {:<26} {:>9} {:>9} {:>8}",
        "type", "placement", "ms", "GB/s", "% peak"
    );
    let carved = [
        address_of(&arena, &carved_f32)?,
        address_of(&arena, &carved_f4)?,
    ];
    let scratch_at = address_of(&arena, &scratch)?;
    for (ti, (ty, kernel, size)) in [("float", "rmw_float", 4usize), ("float4", "rmw_float4", 16)]
        .into_iter()
        .enumerate()
    {
        let n = (ARRAY_BYTES / size) as u64;
        // Separate: one driver allocation for the array alone.
        let sep = raw_alloc(ARRAY_BYTES)?;
        b.fill(sep, ARRAY_BYTES)?;
        let ms = b.time(kernel, &[sep], n, None)?;
        raw_free(sep)?;
        let separate = gbps(2.0 * ARRAY_BYTES as f64, ms);
        println!(
            "{ty:<8} {:<26} {ms:>9.3} {separate:>9.1} {:>7.1}%",
            "separate allocation",
            100.0 * separate / peak
        );
        b.row(
            "rmw",
            &format!("{ty}_separate"),
            separate,
            "GB/s",
            100.0 * separate / peak,
            "",
        );
        let mut placements = vec![("carved by the arena".to_string(), carved[ti])];
        for &off in &[4u64, 16, 64] {
            // A float4 at +4 is not slow but illegal: it faults.
            if off as usize % size == 0 {
                placements.push((format!("naive carve +{off}"), scratch_at + off));
            }
        }
        for (label, ptr) in placements {
            let ms = b.time(kernel, &[ptr], n, None)?;
            let g = gbps(2.0 * ARRAY_BYTES as f64, ms);
            println!(
                "{ty:<8} {label:<26} {ms:>9.3} {g:>9.1} {:>7.1}%  ({:.3}x separate)",
                100.0 * g / peak,
                g / separate
            );
            b.row(
                "rmw",
                &format!("{ty}_{}", label.replace(' ', "_")),
                g,
                "GB/s",
                100.0 * g / peak,
                &format!("{:.4}x separate", g / separate),
            );
        }
    }

    // ---- 3. padded float3 vs packed vs implicit hole
    println!("\n## 3. float3 layouts, {} M elements each", n3 >> 20);
    println!(
        "{:<28} {:>5} {:>9} {:>12} {:>10} {:>8}",
        "layout / op", "B/el", "ms", "GB/s moved", "Gelem/s", "% peak"
    );
    let sink = raw_alloc(256)?;
    let padded_at = address_of(&arena, &padded)?;
    // The packed and implicit-hole layouts are not legal elements, so the
    // arena cannot type them: they live in the scratch bytes.
    for (label, suffix, size, ptr) in [
        ("padded (explicit pad)", "f3_padded", 16u64, padded_at),
        ("packed 12-byte", "f3_packed", 12, scratch_at),
        ("implicit hole 16-byte", "f3_hole", 16, scratch_at),
    ] {
        for op in ["read", "rmw", "fields"] {
            let ms = match op {
                "read" => b.time(&format!("read_{suffix}"), &[ptr], n3, Some(&sink))?,
                _ => b.time(&format!("{op}_{suffix}"), &[ptr], n3, None)?,
            };
            let passes = if op == "read" { 1.0 } else { 2.0 };
            let g = gbps(passes * (n3 * size) as f64, ms);
            let gel = n3 as f64 / (ms * 1e-3) / 1e9;
            println!(
                "{:<28} {size:>5} {ms:>9.3} {g:>12.1} {gel:>10.2} {:>7.1}%",
                format!("{label} {op}"),
                100.0 * g / peak
            );
            b.row(
                "float3",
                &format!("{suffix}_{op}"),
                gel,
                "Gelem/s",
                100.0 * g / peak,
                &format!("{g:.1} GB/s moved"),
            );
        }
    }
    raw_free(sink)?;
    arena.free(padded)?;
    arena.free(scratch)?;
    arena.free(carved_f4)?;
    arena.free(carved_f32)?;

    arena.free(head)?;
    drop(arena);

    allocation_speed(&mut b)?;
    b.write(&out_dir)
}

/// Section 4: the arena's alloc+free and alloc+drop pairs against the
/// driver's allocators, and a host arena's alloc+drop (the same code over
/// host memory: what the device path adds), raced fairly (`rounds.rs`): on
/// a stream of its own (never the legacy default stream), the pool warmed,
/// the same pairs per round on every side, sides taking turns, medians.
/// `cuMemAlloc` + `cuMemFree` is raced against the arena apart, with fewer
/// pairs (`--sync-pairs`), since it is a thousand times slower.
fn allocation_speed(b: &mut Bench) -> Res<()> {
    let pairs = rounds::flag("--pairs").unwrap_or(100_000);
    let sync_pairs = rounds::flag("--sync-pairs").unwrap_or(1000);
    let laps = rounds::Rounds::from_args(1, 7);
    println!(
        "\n## 4. allocation speed: ns per pair, on a new stream, the pool warmed; {pairs} pairs per round ({sync_pairs} against cuMemAlloc), {} timed rounds after {} warm-up, sides taking turns, medians",
        laps.timed, laps.warmup
    );
    let stream = b.ctx.new_stream()?;
    let cu_stream = stream.cu_stream();
    // A device arena with one small array live in front, as a program
    // that keeps some; a host arena of the same shape beside it.
    // Room for the arrays a batch of drops holds back at 16 MiB.
    let mut arena = Arena::device(&stream, 1 << 30)?;
    let head = arena.alloc::<u8>(1000)?;
    let mut host = Arena::host(1 << 30)?;
    let host_head = host.alloc::<u8>(1000)?;
    let mut summary = Vec::new();
    for &bytes in &[256usize, 4096, 65_536, 1 << 20, 16 << 20] {
        rounds::warm_pool(&stream, bytes)?;
        let sides = [
            "cuMemAllocAsync",
            "cudarc alloc",
            "arena",
            "arena drop",
            "host drop",
        ];
        let samples = rounds::race(
            &format!("{bytes} B: alloc + free pairs"),
            "ns per pair",
            &sides,
            laps,
            |side| {
                let t = Instant::now();
                match side {
                    0 => {
                        for _ in 0..pairs {
                            let mut p = 0;
                            // SAFETY: writes one pointer; freed below on the same stream.
                            unsafe { sys::cuMemAllocAsync(&mut p, bytes, cu_stream) }.result()?;
                            // SAFETY: `p` came from `cuMemAllocAsync` on this stream.
                            unsafe { sys::cuMemFreeAsync(p, cu_stream) }.result()?;
                        }
                        stream.synchronize()?;
                    }
                    1 => {
                        for _ in 0..pairs {
                            // SAFETY: the memory is never read.
                            let s = unsafe { stream.alloc::<u8>(bytes) }?;
                            drop(s);
                        }
                        stream.synchronize()?;
                    }
                    // The arena: typed alloc + free of the same size,
                    // 256-aligned, while `head` stays live in front.
                    2 => {
                        for _ in 0..pairs {
                            let h = arena.alloc::<u8>(bytes)?;
                            arena.free(std::hint::black_box(h))?;
                        }
                    }
                    // The same, dropping the handle: its bytes come back at
                    // the next allocation.
                    3 => {
                        for _ in 0..pairs {
                            drop(std::hint::black_box(arena.alloc::<u8>(bytes)?));
                        }
                    }
                    _ => {
                        for _ in 0..pairs {
                            drop(std::hint::black_box(host.alloc::<u8>(bytes)?));
                        }
                    }
                }
                Ok(t.elapsed().as_nanos() as f64 / pairs as f64)
            },
        )?;
        let sync = rounds::race(
            &format!("{bytes} B: alloc + free pairs against cuMemAlloc"),
            "ns per pair",
            &["cuMemAlloc", "arena"],
            laps,
            |side| {
                let t = Instant::now();
                for _ in 0..sync_pairs {
                    if side == 0 {
                        let p = raw_alloc(bytes)?;
                        raw_free(p)?;
                    } else {
                        let h = arena.alloc::<u8>(bytes)?;
                        arena.free(std::hint::black_box(h))?;
                    }
                }
                Ok(t.elapsed().as_nanos() as f64 / sync_pairs as f64)
            },
        )?;
        let median = |samples: &[Vec<f64>], side: usize| {
            rounds::median(&samples.iter().map(|f| f[side]).collect::<Vec<_>>())
        };
        let (pool, cudarc, ours, dropped, host_ns) = (
            median(&samples, 0),
            median(&samples, 1),
            median(&samples, 2),
            median(&samples, 3),
            median(&samples, 4),
        );
        let (sync_ns, sync_ours) = (median(&sync, 0), median(&sync, 1));
        summary.push((
            bytes, sync_ns, sync_ours, pool, cudarc, ours, dropped, host_ns,
        ));
        for (case, value) in [
            (format!("cuMemAlloc_{bytes}"), sync_ns),
            (format!("arena_vs_cuMemAlloc_{bytes}"), sync_ours),
            (format!("cuMemAllocAsync_{bytes}"), pool),
            (format!("cudarc_{bytes}"), cudarc),
            (format!("arena_{bytes}"), ours),
            (format!("arena_drop_{bytes}"), dropped),
            (format!("host_arena_drop_{bytes}"), host_ns),
        ] {
            b.row("alloc", &case, value, "ns", 0.0, "median of rounds");
        }
    }
    println!("\n## 4. summary: medians of rounds, ns per pair (ratios: the driver's time over the arena's, same run)");
    println!(
        "{:>10} {:>12} {:>16} {:>13} {:>10} {:>11} {:>10} {:>10} {:>11} {:>15} {:>10}",
        "bytes",
        "cuMemAlloc",
        "cuMemAllocAsync",
        "cudarc alloc",
        "arena",
        "arena drop",
        "host drop",
        "vs cuMem",
        "vs async",
        "drop vs async",
        "vs cudarc"
    );
    for (bytes, sync_ns, sync_ours, pool, cudarc, ours, dropped, host_ns) in summary {
        println!(
            "{bytes:>10} {sync_ns:>12.0} {pool:>16.0} {cudarc:>13.0} {ours:>10.1} {dropped:>11.1} {host_ns:>10.1} {:>9.0}x {:>10.1}x {:>14.1}x {:>9.1}x",
            sync_ns / sync_ours,
            pool / ours,
            pool / dropped,
            cudarc / ours
        );
    }
    arena.free(head)?;
    host.free(host_head)?;
    arena.backend().synchronize()?;
    Ok(())
}
