//! Uniform reads on the device: every thread walks a small table of 32-byte
//! structs (a path tracer's spheres: centre, radius, colour, roughness) and
//! every lane of a warp reads the same element each iteration, stored three
//! ways: as columns (`Sphere_soa`, eight arrays of floats), packed and moved
//! field by field (`Sphere_aos`: the struct is aligned to 4, so eight 4-byte
//! loads), and in 16-aligned slots moved as two 16-byte words
//! (`Sphere_aos16`). One kernel source, templated on the header's views,
//! runs over all three; the layout advisor's uniform-read prediction
//! (`Access::uniform`) is printed beside the measured times. Runs on an
//! NVIDIA GPU: build here with `cargo build --release -p gpu-aligned-benches
//! --features cuda --benches`, carry the binary there, and run it with
//! `benches/uniform.sh` (flags: `--spheres N`, `--threads N`, `--rounds N`).
//!
//! Timing: CUDA events on a stream of its own (`new_stream`), one launch per
//! sample, the three layouts taking turns within each round and the first
//! of them rotating from round to round (so drift in clocks or temperature
//! lands on all three alike), warm-up rounds first, medians reported. The
//! three outputs are compared bit for bit; the PTX load instructions of each
//! kernel are counted, so a layout that did not compile to the loads it
//! stands for is seen in the output.

use gpu_aligned::arena::Arena;
use gpu_aligned::backend::cuda::cudarc;
use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
use gpu_aligned::header::CudaHeader;
use gpu_aligned::soa::{GpuSoa, SoaView};

use cudarc::driver::{sys, CudaFunction, CudaStream, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions};

// The tests' launch grid and median of samples.
#[path = "../tests/support/address.rs"]
mod address;
use address::address_of;
#[path = "../tests/support/launch.rs"]
mod launch;
#[path = "../tests/support/median.rs"]
mod median;
use launch::grid;
use median::median;

/// A sphere and its material: eight floats, 32 bytes, aligned to 4.
#[derive(Clone, Copy, Debug, gpu_aligned::GpuSoa)]
pub struct Sphere {
    pub x: f32,
    pub y: f32,
    pub z: f32,
    pub radius: f32,
    pub red: f32,
    pub green: f32,
    pub blue: f32,
    pub roughness: f32,
}

/// The table of the path tracer in issue 28.
const SPHERES: u64 = 485;
/// Enough warps to fill an H100 many times over.
const THREADS: u64 = 1 << 20;
const ROUNDS: usize = 21;
const WARMUP_ROUNDS: usize = 3;
const BLOCK: u32 = 256;

const KERNELS: &str = r#"
template <class View> __device__ void fill(View v) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= v.len) return;
    Sphere s;
    s.x = (float)i * 0.25f - 60.0f;
    s.y = (float)(i % 7) - 3.0f;
    s.z = 10.0f + (float)(i % 13);
    s.radius = 0.5f + (float)(i % 5) * 0.25f;
    s.red = (float)(i % 3) * 0.5f;
    s.green = (float)(i % 11) * 0.1f;
    s.blue = 0.75f;
    s.roughness = (float)(i % 17) * 0.01f;
    v.store(i, s);
}
// Each thread is a ray origin; every thread walks the whole table, so the
// warp's lanes read sphere i together. Every field feeds the result.
template <class View> __device__ void shade(View v, float* out, unsigned long long threads) {
    unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= threads) return;
    float ox = (float)(t % 1024) * (1.0f / 1024.0f) - 0.5f;
    float oy = (float)(t / 1024 % 1024) * (1.0f / 1024.0f) - 0.5f;
    float oz = -1.0f;
    float acc = 0.0f;
    for (unsigned long long i = 0; i < v.len; ++i) {
        Sphere s = v.load(i);
        float dx = s.x - ox, dy = s.y - oy, dz = s.z - oz;
        float inside = s.radius * s.radius - (dx * dx + dy * dy + dz * dz);
        float colour = s.red * ox + s.green * oy + s.blue * oz;
        acc += inside * colour + s.roughness;
    }
    out[t] = acc;
}
#define ENTRY(View, tag) \
    extern "C" __global__ void fill_##tag(View v) { fill(v); } \
    extern "C" __global__ void shade_##tag(View v, float* out, unsigned long long threads) { shade(v, out, threads); }
ENTRY(Sphere_soa, soa)
ENTRY(Sphere_aos, aos)
ENTRY(Sphere_aos16, aos16)
"#;

type View = <Sphere as GpuSoa>::View;

/// One layout of the table, as the bench labels it.
struct Layout {
    storage: Storage,
    tag: &'static str,
    label: &'static str,
}

const LAYOUTS: [Layout; 3] = [
    Layout {
        storage: Storage::Soa,
        tag: "soa",
        label: "columns (Sphere_soa)",
    },
    Layout {
        storage: Storage::Aos,
        tag: "aos",
        label: "packed, 8 x 4 B (Sphere_aos)",
    },
    Layout {
        storage: Storage::PaddedAos,
        tag: "aos16",
        label: "16-aligned, 2 x 16 B (Sphere_aos16)",
    },
];

struct Options {
    spheres: u64,
    threads: u64,
    rounds: usize,
}

fn options() -> Options {
    let mut options = Options {
        spheres: SPHERES,
        threads: THREADS,
        rounds: ROUNDS,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> u64 {
            args.next()
                .and_then(|v| v.parse().ok())
                .filter(|&v| v > 0)
                .unwrap_or_else(|| usage(&format!("{name} takes a positive number")))
        };
        match arg.as_str() {
            "--spheres" => options.spheres = value("--spheres"),
            "--threads" => options.threads = value("--threads"),
            "--rounds" => options.rounds = value("--rounds") as usize,
            // What `cargo bench` passes to a bench without a harness.
            "--bench" => {}
            other => usage(&format!("unknown argument `{other}`")),
        }
    }
    options
}

fn usage(problem: &str) -> ! {
    eprintln!("uniform: {problem}\nusage: uniform [--spheres N] [--threads N] [--rounds N]");
    std::process::exit(2)
}

/// The view of an array of structs at `base`: element 0's field addresses.
fn struct_view(base: u64, len: u64) -> View {
    let mut columns = [0u64; 8];
    for (column, field) in columns.iter_mut().zip(Sphere::COLUMNS) {
        *column = base + field.offset as u64;
    }
    SoaView { columns, len }
}

fn launch(stream: &CudaStream, function: &CudaFunction, view: &View, extra: &[u64], threads: u64) {
    let mut launch = stream.launch_builder(function);
    launch.arg(view);
    for value in extra {
        launch.arg(value);
    }
    let config = grid(usize::try_from(threads).expect("threads fit usize"), BLOCK);
    // SAFETY: every kernel takes one `Sphere_*` view (the `SoaView` layout
    // the header asserts) over a table of `view.len` spheres, and `shade`
    // an output array of `threads` floats and that count; each touches
    // elements below those lengths only.
    unsafe { launch.launch(config) }.unwrap();
}

/// The global-memory loads in the PTX of `entry`: (16-byte vector loads,
/// other loads). The loop may be unrolled, so these are counts per compiled
/// body, to be compared between layouts, not per iteration.
fn ptx_loads(ptx: &str, entry: &str) -> (usize, usize) {
    let marker = format!(".entry {entry}(");
    let Some(start) = ptx.find(&marker) else {
        return (0, 0);
    };
    let body = &ptx[start + marker.len()..];
    let body = &body[..body.find(".entry").unwrap_or(body.len())];
    let loads = body.lines().map(str::trim).filter(|line| {
        line.starts_with("ld.")
            && !line.starts_with("ld.param")
            && !line.starts_with("ld.local")
            && !line.starts_with("ld.shared")
    });
    loads.fold((0, 0), |(v4, other), line| {
        if line.contains(".v4.") {
            (v4 + 1, other)
        } else {
            (v4, other + 1)
        }
    })
}

fn main() {
    let Options {
        spheres,
        threads,
        rounds,
    } = options();
    let context = cudarc::driver::CudaContext::new(0).expect("a CUDA GPU");
    let stream = context.new_stream().unwrap();
    let mut header = CudaHeader::new();
    header.add_soa::<Sphere>().unwrap();
    let source = format!("{}\n{KERNELS}", header.render());
    let compiled = compile_ptx_with_opts(
        &source,
        CompileOptions {
            arch: Some("compute_90"),
            ..Default::default()
        },
    )
    .unwrap_or_else(|e| panic!("NVRTC: {e:?}"));
    let ptx_text = compiled.to_src();
    let module = context.load_module(compiled).unwrap();
    let function = |name: &str| module.load_function(name).unwrap();

    let table = usize::try_from(spheres).expect("table fits usize");
    let outputs = usize::try_from(threads).expect("output fits usize");
    // Columns round each up to 256 bytes; every array starts on 256.
    let bytes = 3 * (table * 32 + 8 * 256) + 3 * (outputs * 4 + 256) + (1 << 20);
    let mut arena = Arena::device(&stream, bytes).unwrap();
    let mut soa = arena.alloc_soa::<Sphere>(table).unwrap();
    let packed = arena.alloc::<u32>(table * 8).unwrap();
    let slots = arena.alloc::<u32>(table * 8).unwrap();
    let outs = [
        arena.alloc::<f32>(outputs).unwrap(),
        arena.alloc::<f32>(outputs).unwrap(),
        arena.alloc::<f32>(outputs).unwrap(),
    ];
    let views = [
        // A bare copy of the lent view: every launch below is on the
        // arena's stream, which orders it.
        *arena.soa_view(&mut soa, &stream).unwrap(),
        struct_view(address_of(&arena, &packed).unwrap(), spheres),
        struct_view(address_of(&arena, &slots).unwrap(), spheres),
    ];
    let out_addresses: Vec<u64> = outs
        .iter()
        .map(|o| address_of(&arena, o).unwrap())
        .collect();
    for (layout, view) in LAYOUTS.iter().zip(&views) {
        launch(
            &stream,
            &function(&format!("fill_{}", layout.tag)),
            view,
            &[],
            spheres,
        );
    }
    stream.synchronize().unwrap();

    let shades: Vec<CudaFunction> = LAYOUTS
        .iter()
        .map(|layout| function(&format!("shade_{}", layout.tag)))
        .collect();
    let start = context
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let end = context
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .unwrap();
    let mut samples: [Vec<f64>; 3] = Default::default();
    for round in 0..WARMUP_ROUNDS + rounds {
        for turn in 0..LAYOUTS.len() {
            let k = (round + turn) % LAYOUTS.len();
            start.record(&stream).unwrap();
            launch(
                &stream,
                &shades[k],
                &views[k],
                &[out_addresses[k], threads],
                threads,
            );
            end.record(&stream).unwrap();
            end.synchronize().unwrap();
            if round >= WARMUP_ROUNDS {
                samples[k].push(f64::from(start.elapsed_ms(&end).unwrap()) * 1000.0);
            }
        }
    }
    let medians = samples.map(|s| median(&s));

    let access = Access::uniform(Fields::All, Fields::None);
    let advice = advise(&Sphere::LAYOUT, &access).unwrap();
    let columns_time = advice.cost(Storage::Soa).time();
    println!(
        "uniform reads: {threads} threads, each over {spheres} spheres of {} bytes \
         (the lanes of a warp read sphere i together); median of {rounds} rounds \
         after {WARMUP_ROUNDS} warm-up rounds, layouts alternating, CUDA events on a new stream",
        size_of::<Sphere>()
    );
    println!(
        "{:<38}{:>12}{:>12}  {:>14}{:>9}{:>12}  {:>10}",
        "layout", "median us", "vs columns", "pred. loads", "sectors", "vs columns", "PTX v4/other"
    );
    for (k, layout) in LAYOUTS.iter().enumerate() {
        let cost = advice.cost(layout.storage);
        let (v4, other) = ptx_loads(&ptx_text, &format!("shade_{}", layout.tag));
        println!(
            "{:<38}{:>12.1}{:>11.3}x  {:>14}{:>9.1}{:>11.2}x  {:>10}",
            layout.label,
            medians[k],
            medians[k] / medians[0],
            cost.instructions,
            cost.read_bytes / 32.0,
            cost.time() / columns_time,
            format!("{v4}/{other}"),
        );
    }
    let fastest = (0..LAYOUTS.len())
        .min_by(|&a, &b| medians[a].total_cmp(&medians[b]))
        .unwrap_or(0);
    println!(
        "advisor's pick: {}; measured fastest: {}",
        advice.best.name(),
        LAYOUTS[fastest].storage.name()
    );
    let results: Vec<Vec<u32>> = outs
        .iter()
        .map(|o| {
            let values = arena.to_vec(o).unwrap();
            values.iter().map(|v| v.to_bits()).collect()
        })
        .collect();
    let same = results[0] == results[1] && results[0] == results[2];
    println!(
        "outputs over the three layouts: {}",
        if same { "identical" } else { "DIFFER" }
    );
    println!("\n{advice}");
}
