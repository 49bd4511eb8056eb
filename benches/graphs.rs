//! The device benchmark of graph capture: a step of 100 kernels that
//! allocates 200 temporaries (one upload and one zero-fill in each of 50
//! iterations, two kernels each), captured from a device arena, against the
//! same step captured over buffers allocated by hand beforehand (one cudarc
//! allocation per temporary, raw pointers as kernel arguments: the graph an
//! expert writes without an allocator), and against the same step taking
//! its temporaries from the driver's stream-ordered pool inside the capture
//! (`cuMemAllocAsync` and `cuMemFreeAsync` on the capturing stream, which
//! become the graph's allocation and free nodes: the pool's own way into a
//! graph). The table gives the replay time of each and their ratios, medians
//! of timed rounds taken in turns after warm-up rounds, in the same run
//! (`rounds.rs`; `--rounds N`, `--warmup N`). Every result is checked
//! against a host model first. Runs on an NVIDIA GPU (build here, carry the
//! binary there).

use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::arena::{Arena, ArenaError, ArenaSlice, CapturedGraph};
use gpu_aligned::backend::cuda::{cudarc, CudaBackend, CudaError};
use gpu_aligned::backend::MoveBytes;

use cudarc::driver::{
    result, sys, CudaFunction, CudaGraph, CudaSlice, CudaStream, DevicePtr, LaunchConfig,
    PushKernelArg,
};

// Alternating rounds and medians, shared with the other device benches and
// `trace_replay`.
#[path = "../runtime/examples/support/rounds.rs"]
#[allow(dead_code)]
mod rounds;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const KERNELS: &str = r#"
extern "C" __global__ void mix(const unsigned* x, const unsigned* a, const unsigned* z,
                               unsigned* b, unsigned* d, unsigned n) {
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) {
        unsigned v = x[j] * 3u + a[j] + z[j];
        b[j] = v;
        d[j] = v ^ 0x9e3779b9u;
    }
}
extern "C" __global__ void fold(const unsigned* d, const unsigned* b, unsigned* x, unsigned n) {
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) x[j] = d[j] + (b[j] >> 3);
}
"#;

const ITERATIONS: usize = 50;
const REPLAYS: usize = 200;
const WARMUP: usize = 3;
const ROUNDS: usize = 21;

fn config(n: usize) -> LaunchConfig {
    LaunchConfig::for_num_elems(n as u32)
}

fn constants(n: usize) -> Vec<Vec<u32>> {
    (0..ITERATIONS)
        .map(|i| {
            (0..n as u32)
                .map(|j| j.wrapping_mul(7) ^ i as u32)
                .collect()
        })
        .collect()
}

fn model_step(x: &mut [u32], constants: &[Vec<u32>]) {
    for a in constants {
        for (j, x) in x.iter_mut().enumerate() {
            let v = x.wrapping_mul(3).wrapping_add(a[j]);
            *x = (v ^ 0x9e37_79b9).wrapping_add(v >> 3);
        }
    }
}

/// The step captured from the arena: temporaries allocated, filled and
/// dropped inside the capture.
fn arena_graph(
    arena: &mut Arena<CudaBackend>,
    x: &mut ArenaSlice<u32, CudaBackend>,
    kernels: (&CudaFunction, &CudaFunction),
    constants: &[Vec<u32>],
) -> Result<(CapturedGraph, sys::CUgraph), ArenaError<CudaError>> {
    let stream = Arc::clone(arena.backend().stream());
    let len = x.len();
    let n = len as u32;
    let (graph, raw) = arena.capture(|arena| {
        for values in constants {
            let a = arena.alloc_from(values)?;
            let z = arena.alloc_zeros::<u32>(len)?;
            let mut b = arena.alloc::<u32>(len)?;
            let mut d = arena.alloc::<u32>(len)?;
            {
                let (xv, av, zv) = (
                    arena.view(x, .., &stream)?,
                    arena.view(&a, .., &stream)?,
                    arena.view(&z, .., &stream)?,
                );
                let (mut bv, mut dv) = (
                    arena.view_mut(&mut b, .., &stream)?,
                    arena.view_mut(&mut d, .., &stream)?,
                );
                let mut launch = stream.launch_builder(kernels.0);
                launch.arg(&xv).arg(&av).arg(&zv);
                launch.arg(&mut bv).arg(&mut dv).arg(&n);
                // SAFETY: `mix` touches [0, n) of arrays of n elements.
                unsafe { launch.launch(config(len)) }?;
            }
            let (dv, bv, mut xv) = (
                arena.view(&d, .., &stream)?,
                arena.view(&b, .., &stream)?,
                arena.view_mut(x, .., &stream)?,
            );
            let mut launch = stream.launch_builder(kernels.1);
            launch.arg(&dv).arg(&bv).arg(&mut xv).arg(&n);
            // SAFETY: `fold` touches [0, n) of arrays of n elements.
            unsafe { launch.launch(config(len)) }?;
        }
        graph_in_capture(&stream).map_err(|e| {
            eprintln!("capture info: {e}");
            ArenaError::Backend(CudaError::OutOfRange { offset: 0, len: 0 })
        })
    })?;
    Ok((graph, raw))
}

/// The same step over buffers allocated beforehand, one per temporary,
/// reached by raw pointers (no events inside the capture).
struct Preallocated {
    _buffers: Vec<CudaSlice<u32>>,
    x: u64,
    temporaries: Vec<[u64; 4]>,
}

fn preallocate(stream: &Arc<CudaStream>, len: usize) -> Res<Preallocated> {
    let mut buffers = Vec::new();
    let pointer = |buffers: &mut Vec<CudaSlice<u32>>| -> Res<u64> {
        let slice = stream.alloc_zeros::<u32>(len)?;
        let address = slice.device_ptr(stream).0;
        buffers.push(slice);
        Ok(address)
    };
    let x = pointer(&mut buffers)?;
    let mut temporaries = Vec::new();
    for _ in 0..ITERATIONS {
        temporaries.push([
            pointer(&mut buffers)?,
            pointer(&mut buffers)?,
            pointer(&mut buffers)?,
            pointer(&mut buffers)?,
        ]);
    }
    stream.synchronize()?;
    Ok(Preallocated {
        _buffers: buffers,
        x,
        temporaries,
    })
}

fn preallocated_graph(
    stream: &Arc<CudaStream>,
    buffers: &Preallocated,
    kernels: (&CudaFunction, &CudaFunction),
    constants: &[Vec<u32>],
    len: usize,
) -> Res<CudaGraph> {
    let n = len as u32;
    stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)?;
    for (values, &[a, z, b, d]) in constants.iter().zip(&buffers.temporaries) {
        // SAFETY: `a` and `z` are allocations of `len` u32s; `values` (as
        // long as the graph: `constants` outlives it) holds `len` u32s.
        unsafe {
            result::memcpy_htod_async(a, values, stream.cu_stream())?;
            result::memset_d8_async(z, 0, len * 4, stream.cu_stream())?;
        }
        let mut launch = stream.launch_builder(kernels.0);
        launch
            .arg(&buffers.x)
            .arg(&a)
            .arg(&z)
            .arg(&b)
            .arg(&d)
            .arg(&n);
        // SAFETY: every pointer is an allocation of `len` u32s.
        unsafe { launch.launch(config(len)) }?;
        let mut launch = stream.launch_builder(kernels.1);
        launch.arg(&d).arg(&b).arg(&buffers.x).arg(&n);
        // SAFETY: as above.
        unsafe { launch.launch(config(len)) }?;
    }
    let flags = sys::CUgraphInstantiate_flags(0);
    Ok(stream.end_capture(flags)?.ok_or("an empty capture")?)
}

/// The same step with its temporaries from the driver's pool, allocated
/// and freed inside the capture: each `cuMemAllocAsync` becomes an
/// allocation node and each `cuMemFreeAsync` a free node of the graph.
fn pool_graph(
    stream: &Arc<CudaStream>,
    x: u64,
    kernels: (&CudaFunction, &CudaFunction),
    constants: &[Vec<u32>],
    len: usize,
) -> Res<CudaGraph> {
    let n = len as u32;
    let cu_stream = stream.cu_stream();
    stream.begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL)?;
    for values in constants {
        let mut temporaries = [0u64; 4];
        for temporary in &mut temporaries {
            // SAFETY: `len` u32s, written before they are read below and
            // freed on the same stream at the end of the iteration.
            *temporary = unsafe { result::malloc_async(cu_stream, len * 4) }?;
        }
        let [a, z, b, d] = temporaries;
        // SAFETY: `a` and `z` are allocations of `len` u32s; `values` (as
        // long as the graph: `constants` outlives it) holds `len` u32s.
        unsafe {
            result::memcpy_htod_async(a, values, cu_stream)?;
            result::memset_d8_async(z, 0, len * 4, cu_stream)?;
        }
        let mut launch = stream.launch_builder(kernels.0);
        launch.arg(&x).arg(&a).arg(&z).arg(&b).arg(&d).arg(&n);
        // SAFETY: every pointer is an allocation of `len` u32s.
        unsafe { launch.launch(config(len)) }?;
        let mut launch = stream.launch_builder(kernels.1);
        launch.arg(&d).arg(&b).arg(&x).arg(&n);
        // SAFETY: as above.
        unsafe { launch.launch(config(len)) }?;
        for temporary in temporaries {
            // SAFETY: allocated above in this capture, freed once, after
            // its last use on this stream.
            unsafe { result::free_async(temporary, cu_stream) }?;
        }
    }
    let flags = sys::CUgraphInstantiate_flags(0);
    Ok(stream.end_capture(flags)?.ok_or("an empty capture")?)
}

/// The graph being built by the capture under way on `stream`.
fn graph_in_capture(stream: &CudaStream) -> Res<sys::CUgraph> {
    let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    let mut id = 0;
    let mut graph = std::ptr::null_mut();
    let mut deps = std::ptr::null();
    let mut edges = std::ptr::null();
    let mut count = 0;
    // SAFETY: every out-pointer is a local of the type the driver writes.
    unsafe {
        sys::cuStreamGetCaptureInfo_v3(
            stream.cu_stream(),
            &mut status,
            &mut id,
            &mut graph,
            &mut deps,
            &mut edges,
            &mut count,
        )
    }
    .result()?;
    Ok(graph)
}

/// Node counts by type and the edge count of a graph, for the table's
/// claim that both graphs have the same nodes.
fn census(graph: sys::CUgraph) -> Res<String> {
    let mut count = 0;
    // SAFETY: `graph` is a live graph; a null array asks for the count.
    unsafe { sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count) }.result()?;
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: `nodes` has room for `count` nodes.
    unsafe { sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count) }.result()?;
    let mut kinds = std::collections::BTreeMap::new();
    for node in nodes {
        let mut kind = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
        // SAFETY: `node` is a node of the live graph.
        unsafe { sys::cuGraphNodeGetType(node, &mut kind) }.result()?;
        *kinds.entry(format!("{kind:?}")).or_insert(0) += 1;
    }
    let mut edges = 0;
    // SAFETY: null arrays ask for the count.
    unsafe {
        sys::cuGraphGetEdges_v2(
            graph,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut edges,
        )
    }
    .result()?;
    Ok(format!("{kinds:?}, {edges} edges"))
}

/// Microseconds per replay over `REPLAYS` replays.
fn time(stream: &CudaStream, launch: &dyn Fn() -> Res<()>) -> Res<f64> {
    stream.synchronize()?;
    let start = Instant::now();
    for _ in 0..REPLAYS {
        launch()?;
    }
    stream.synchronize()?;
    Ok(start.elapsed().as_secs_f64() * 1e6 / REPLAYS as f64)
}

fn main() -> Res<()> {
    let laps = rounds::Rounds::from_args(WARMUP, ROUNDS);
    let context = cudarc::driver::CudaContext::new(0)?;
    let stream = context.new_stream()?;
    let ptx = cudarc::nvrtc::compile_ptx(KERNELS)?;
    let module = context.load_module(ptx)?;
    let (mix, fold) = (module.load_function("mix")?, module.load_function("fold")?);
    println!(
        "# graph replay: {} kernels, {} temporaries per step; median of {} rounds of {REPLAYS} replays (us per replay), after {} warm-up rounds, in turns",
        2 * ITERATIONS,
        4 * ITERATIONS,
        laps.timed,
        laps.warmup
    );
    let mut summary = Vec::new();
    for len in [256usize, 4096, 65_536] {
        let constants = constants(len);
        let start: Vec<u32> = (0..len as u32)
            .map(|j| j.wrapping_mul(2_654_435_761))
            .collect();
        let mut expected = start.clone();
        model_step(&mut expected, &constants);

        let mut arena = Arena::device(&stream, 2 * len * 4 * (4 * ITERATIONS + 1))?;
        let mut x = arena.alloc_from(&start)?;
        let (ours, raw) = arena_graph(&mut arena, &mut x, (&mix, &fold), &constants)?;
        ours.upload()?;
        ours.launch()?;
        if arena.to_vec(&x)? != expected {
            return Err("the arena's graph computed a wrong step".into());
        }

        let buffers = preallocate(&stream, len)?;
        // SAFETY: `x` is an allocation of `len` u32s.
        unsafe { result::memcpy_htod_async(buffers.x, &start, stream.cu_stream()) }?;
        let theirs = preallocated_graph(&stream, &buffers, (&mix, &fold), &constants, len)?;
        theirs.upload()?;
        theirs.launch()?;
        let mut got = vec![0u32; len];
        stream.synchronize()?;
        // SAFETY: `x` holds `len` u32s; the stream was waited for.
        unsafe { result::memcpy_dtoh_sync(&mut got, buffers.x) }?;
        if got != expected {
            return Err("the preallocated graph computed a wrong step".into());
        }

        // The pool's graph, with its own `x`. Its allocation nodes draw on
        // the device's graph memory, not on the stream's pool, and keep
        // their backing from one replay to the next: the replay above and
        // the warm-up rounds warm it.
        let pool_x = stream.alloc_zeros::<u32>(len)?;
        let pool_x_at = pool_x.device_ptr(&stream).0;
        // SAFETY: `pool_x` is an allocation of `len` u32s.
        unsafe { result::memcpy_htod_async(pool_x_at, &start, stream.cu_stream()) }?;
        let pooled = pool_graph(&stream, pool_x_at, (&mix, &fold), &constants, len)?;
        pooled.upload()?;
        pooled.launch()?;
        stream.synchronize()?;
        // SAFETY: `pool_x` holds `len` u32s; the stream was waited for.
        unsafe { result::memcpy_dtoh_sync(&mut got, pool_x_at) }?;
        if got != expected {
            return Err("the pool's graph computed a wrong step".into());
        }

        if len == 256 {
            println!("# arena graph: {}", census(raw)?);
            println!("# preallocated graph: {}", census(theirs.cu_graph())?);
            println!("# pool graph: {}", census(pooled.cu_graph())?);
        }
        let samples = rounds::race(
            &format!("{len} u32s: one replay of the step"),
            "us per replay",
            &["arena", "preallocated", "pool nodes"],
            laps,
            |side| match side {
                0 => time(&stream, &|| Ok(ours.launch()?)),
                1 => time(&stream, &|| Ok(theirs.launch()?)),
                _ => time(&stream, &|| Ok(pooled.launch()?)),
            },
        )?;
        let median = |k: usize| rounds::median(&samples.iter().map(|f| f[k]).collect::<Vec<_>>());
        summary.push((len, median(1), median(2), median(0)));
        drop(pooled);
        drop(pool_x);
        drop(theirs);
        drop(ours);
        context.check_err()?;
    }
    println!("\n# summary: medians of rounds (us per replay)");
    println!(
        "{:>8} {:>14} {:>12} {:>12} {:>16} {:>12}",
        "u32s", "preallocated", "pool nodes", "arena", "arena/prealloc", "arena/pool"
    );
    for (len, p, pool, a) in summary {
        println!(
            "{len:>8} {p:>14.2} {pool:>12.2} {a:>12.2} {:>15.3}x {:>11.3}x",
            a / p,
            a / pool
        );
    }
    Ok(())
}
