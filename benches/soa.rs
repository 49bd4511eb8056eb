//! The structure-of-arrays benchmark from Rust: the same three kernels, one
//! source each, over a `#[derive(GpuSoa)]` struct stored as columns
//! (`Arena::alloc_soa`), as an array of structs and in padded 16-byte
//! slots, all in one device arena; printed beside the layout advisor's
//! predictions. Runs on an NVIDIA GPU (build here with `cargo bench -p
//! gpu-aligned-benches --features cuda --bench soa --no-run`, carry the binary
//! there).
//!
//! `Body` is 52 bytes of thirteen 4-byte fields: 52 bytes a slot packed, 64
//! padded, 4 a column. Kernels: (1) read and write one field, (2) read and
//! write every field, (3) gather whole elements at random indices. 32 M
//! elements (far larger than the H100's 50 MB L2), 8 per thread, the median
//! of 11 launches after a warm-up, timed with CUDA events.

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc;
use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
use gpu_aligned::header::CudaHeader;
use gpu_aligned::soa::{GpuSoa, SoaView};

use cudarc::driver::{sys, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

// The tests' launch grid.
#[path = "../tests/support/address.rs"]
mod address;
use address::address_of;
#[path = "../tests/support/launch.rs"]
mod launch;

/// A particle of thirteen 4-byte fields.
#[derive(Clone, Copy, Debug, gpu_aligned::GpuSoa)]
pub struct Body {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub vx: f32,
    pub vy: f32,
    pub vz: f32,
    pub ax: f32,
    pub ay: f32,
    pub az: f32,
    pub mass: f32,
    pub charge: f32,
    pub energy: f32,
    pub id: u32,
}

const N: usize = 1 << 25;
const PER_THREAD: usize = 8;
const BLOCK: u32 = 256;
const REPEATS: usize = 11;

const KERNELS: &str = r#"
#define PER_THREAD 8
#define BLOCK 256
__device__ __forceinline__ unsigned long long first(void) {
    return (unsigned long long)blockIdx.x * BLOCK * PER_THREAD + threadIdx.x;
}
template <class View> __device__ void fill(View v) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.len) return;
    float f = (float)(i % 1000);
    Body b;
    b.x = f; b.y = 2 * f; b.z = 3 * f; b.vx = 0.5f; b.vy = -0.25f; b.vz = 0.125f;
    b.ax = 0.01f * f; b.ay = 0.02f; b.az = -0.03f; b.mass = 1.0f + f;
    b.charge = (i & 1) ? 1.0f : -1.0f; b.energy = 0.0f; b.id = (unsigned)i;
    v.store(i, b);
}
template <class View> __device__ void one_field(View v) {
    unsigned long long base = first();
    float m[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        m[k] = i < v.len ? v.mass[i] : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) v.mass[i] = m[k] * 0.999f + 1.0f;
    }
}
template <class View> __device__ void all_fields(View v) {
    unsigned long long base = first();
    Body b[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) b[k] = v.load(i);
    }
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) {
            Body& e = b[k];
            const float dt = 0.01f;
            e.vx += e.ax * dt; e.vy += e.ay * dt; e.vz += e.az * dt;
            e.x += e.vx * dt; e.y += e.vy * dt; e.z += e.vz * dt;
            e.ax *= 0.99f; e.ay *= 0.99f; e.az *= 0.99f;
            e.mass *= 0.9999f; e.charge = -e.charge;
            e.energy = 0.5f * e.mass * (e.vx * e.vx + e.vy * e.vy + e.vz * e.vz);
            e.id += 1;
            v.store(i, e);
        }
    }
}
template <class View> __device__ void gather(View v, const unsigned* idx, float* out) {
    unsigned long long base = first();
    Body b[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) b[k] = v.load(idx[i]);
    }
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        unsigned long long i = base + (unsigned long long)k * BLOCK;
        if (i < v.len) {
            const Body& e = b[k];
            out[i] = e.x + e.y + e.z + e.vx + e.vy + e.vz + e.ax + e.ay + e.az + e.mass + e.charge
                   + e.energy + (float)e.id;
        }
    }
}
#define ENTRY(View, tag) \
    extern "C" __global__ void fill_##tag(View v) { fill(v); } \
    extern "C" __global__ void one_field_##tag(View v) { one_field(v); } \
    extern "C" __global__ void all_fields_##tag(View v) { all_fields(v); } \
    extern "C" __global__ void gather_##tag(View v, const unsigned* idx, float* out) { gather(v, idx, out); }
ENTRY(Body_soa, soa)
ENTRY(Body_aos, aos)
ENTRY(Body_aos16, aos16)
"#;

type View = <Body as GpuSoa>::View;

/// The view of an array of structs at `base`: element 0's field addresses.
fn struct_view(base: u64) -> View {
    let mut columns = [0u64; 13];
    for (column, field) in columns.iter_mut().zip(Body::COLUMNS) {
        *column = base + field.offset as u64;
    }
    SoaView {
        columns,
        len: N as u64,
    }
}

/// One thread per `per_thread` elements of the `N`.
fn grid(per_thread: usize) -> LaunchConfig {
    launch::grid(N.div_ceil(per_thread), BLOCK)
}

/// Median microseconds of `REPEATS` launches after one warm-up.
fn time(stream: &CudaStream, mut launch: impl FnMut()) -> f64 {
    launch();
    stream.synchronize().unwrap();
    let mut times = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let start = stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .unwrap();
        launch();
        let end = stream
            .record_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
            .unwrap();
        end.synchronize().unwrap();
        times.push(f64::from(start.elapsed_ms(&end).unwrap()) * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    times[REPEATS / 2]
}

fn launch_view(
    stream: &CudaStream,
    function: &CudaFunction,
    view: &View,
    extra: &[u64],
    cfg: LaunchConfig,
) {
    let mut launch = stream.launch_builder(function);
    launch.arg(view);
    for value in extra {
        launch.arg(value);
    }
    // SAFETY: every kernel takes one `Body_*` view (the `SoaView` layout the
    // header asserts) and, for the gather, two device pointers into arrays
    // of `N` elements; each touches elements below `len` only.
    unsafe { launch.launch(cfg) }.unwrap();
}

fn main() {
    let stream = CudaContext::new(0)
        .expect("a CUDA GPU")
        .new_stream()
        .expect("a stream");
    let mut header = CudaHeader::new();
    header.add_soa::<Body>().unwrap();
    let source = format!("{}\n{KERNELS}", header.render());
    let options = CompileOptions {
        arch: Some("compute_90"),
        ..Default::default()
    };
    let ptx = compile_ptx_with_opts(&source, options).unwrap_or_else(|e| panic!("NVRTC: {e:?}"));
    let module = stream.context().load_module(ptx).unwrap();
    let function = |name: &str| module.load_function(name).unwrap();

    let bytes = N * (52 + 52 + 64 + 4 + 4 * 3) + (64 << 20);
    let mut arena = Arena::device(&stream, bytes).unwrap();
    let mut soa = arena.alloc_soa::<Body>(N).unwrap();
    let packed = arena.alloc::<u32>(N * 13).unwrap();
    let slots = arena.alloc::<u32>(N * 16).unwrap();
    let mut idx = arena.alloc::<u32>(N).unwrap();
    let outs = [
        arena.alloc::<f32>(N).unwrap(),
        arena.alloc::<f32>(N).unwrap(),
        arena.alloc::<f32>(N).unwrap(),
    ];
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let indices: Vec<u32> = (0..N)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % N as u64) as u32
        })
        .collect();
    arena.write(&mut idx, .., &indices).unwrap();
    let views = [
        // A bare copy of the lent view: every launch below is on the
        // arena's stream, which orders it.
        *arena.soa_view(&mut soa, &stream).unwrap(),
        struct_view(address_of(&arena, &packed).unwrap()),
        struct_view(address_of(&arena, &slots).unwrap()),
    ];
    let tags = ["soa", "aos", "aos16"];
    let idx_address = address_of(&arena, &idx).unwrap();
    let out_addresses: Vec<u64> = outs
        .iter()
        .map(|o| address_of(&arena, o).unwrap())
        .collect();

    let fills: Vec<CudaFunction> = tags
        .iter()
        .map(|t| function(&format!("fill_{t}")))
        .collect();
    for (fill, view) in fills.iter().zip(&views) {
        launch_view(&stream, fill, view, &[], grid(1));
    }
    stream.synchronize().unwrap();

    let kernels = [
        (
            "(1) read+write one field",
            "one_field",
            Access::streaming(Fields::Only(&["mass"]), Fields::Only(&["mass"])),
        ),
        (
            "(2) read+write every field",
            "all_fields",
            Access::streaming(Fields::All, Fields::All),
        ),
        (
            "(3) random gather, whole elements",
            "gather",
            Access::gather(Fields::All, Fields::None),
        ),
    ];
    let storages = [Storage::Soa, Storage::Aos, Storage::PaddedAos];
    println!(
        "{} elements of {} bytes, {PER_THREAD} per thread, median of {REPEATS}; \
         us measured (advisor's predicted time relative to its pick)",
        N,
        size_of::<Body>()
    );
    println!(
        "{:<36}{:>20}{:>20}{:>20}  {:<12}advisor",
        "kernel", "SoA", "AoS", "padded AoS", "fastest"
    );
    let mut all_picked = true;
    for (label, name, access) in kernels {
        let advice = advise(&Body::LAYOUT, &access).unwrap();
        let mut measured = [0.0f64; 3];
        for (k, tag) in tags.iter().enumerate() {
            let kernel = function(&format!("{name}_{tag}"));
            let extra: Vec<u64> = if name == "gather" {
                vec![idx_address, out_addresses[k]]
            } else {
                Vec::new()
            };
            measured[k] = time(&stream, || {
                launch_view(&stream, &kernel, &views[k], &extra, grid(PER_THREAD))
            });
        }
        let fastest = (0..3)
            .min_by(|&a, &b| measured[a].total_cmp(&measured[b]))
            .unwrap();
        let cells: Vec<String> = (0..3)
            .map(|k| format!("{:.1} ({:.2}x)", measured[k], advice.ratio(storages[k])))
            .collect();
        let name_of = |s: Storage| match s {
            Storage::Soa => "SoA",
            Storage::Aos => "AoS",
            Storage::PaddedAos => "padded AoS",
        };
        all_picked &= storages[fastest] == advice.best;
        println!(
            "{label:<36}{:>20}{:>20}{:>20}  {:<12}{}",
            cells[0],
            cells[1],
            cells[2],
            name_of(storages[fastest]),
            name_of(advice.best)
        );
    }
    let gathered: Vec<Vec<f32>> = outs.iter().map(|o| arena.to_vec(o).unwrap()).collect();
    let same = gathered[0] == gathered[1] && gathered[0] == gathered[2];
    println!(
        "gather outputs over the three layouts: {}",
        if same { "identical" } else { "DIFFER" }
    );
    println!(
        "{}",
        if all_picked {
            "the advisor picked the measured fastest layout for every kernel"
        } else {
            "the advisor missed the measured fastest layout for a kernel"
        }
    );
}
