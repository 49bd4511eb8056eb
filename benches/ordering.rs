//! What ordering arrays between streams costs a kernel launch: the same
//! kernel launched with 1, 8 and 32 arena arrays passed as views (each
//! ordered against the launch's stream) against the same arrays passed as
//! raw device addresses (ordered by nothing). Three cases: every launch on one stream
//! while a second stream exists, launches alternating between two streams,
//! and 16 threads each launching on a stream of its own. Runs on an NVIDIA
//! GPU (build here, carry the binary there); prints each case's medians and
//! ratio, measured in the same run, the sides taking turns (`rounds.rs`).
//! `--launches N` and `--rounds N` size it.

use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::arena::{Arena, ArenaSlice};
use gpu_aligned::backend::cuda::{cudarc, CudaBackend};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg,
};

#[path = "../runtime/examples/support/rounds.rs"]
#[allow(dead_code)]
mod rounds;

#[path = "../tests/support/address.rs"]
mod address;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// The argument counts measured.
const COUNTS: [usize; 3] = [1, 8, 32];
const THREADS: usize = 16;

/// A kernel of `n` array arguments that touches the first element of the
/// first: the launch is the cost, not the work.
fn source(n: usize) -> String {
    let params: Vec<String> = (0..n).map(|i| format!("float* a{i}")).collect();
    format!(
        "extern \"C\" __global__ void touch{n}({}) {{ if (threadIdx.x == 0) a0[0] += 1.0f; }}\n",
        params.join(", ")
    )
}

fn config() -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Launches `kernel` `launches` times with `arrays` as raw addresses, the
/// `i`th launch on `streams[i % streams.len()]`; ns per launch, waited for.
fn raw(
    arena: &Arena<CudaBackend>,
    arrays: &[ArenaSlice<f32, CudaBackend>],
    kernel: &CudaFunction,
    streams: &[Arc<CudaStream>],
    launches: usize,
) -> Res<f64> {
    let addresses = arrays
        .iter()
        .map(|a| address::address_of(arena, a))
        .collect::<Result<Vec<u64>, _>>()?;
    let start = Instant::now();
    for i in 0..launches {
        let stream = &streams[i % streams.len()];
        let mut launch = stream.launch_builder(kernel);
        for address in &addresses {
            launch.arg(address);
        }
        // SAFETY: the kernel touches element 0 of its first array, which
        // holds at least one element.
        unsafe { launch.launch(config()) }?;
    }
    for stream in streams {
        stream.synchronize()?;
    }
    Ok(start.elapsed().as_nanos() as f64 / launches as f64)
}

/// As [`raw`], with the arrays passed as views (the first writable), each
/// ordered on the launch's stream.
fn tracked(
    arena: &Arena<CudaBackend>,
    arrays: &mut [ArenaSlice<f32, CudaBackend>],
    kernel: &CudaFunction,
    streams: &[Arc<CudaStream>],
    launches: usize,
) -> Res<f64> {
    let (first, rest) = arrays.split_first_mut().ok_or("no arrays")?;
    // Made once, as the raw side's addresses are: no allocation per launch.
    let mut read = Vec::with_capacity(rest.len());
    let start = Instant::now();
    for i in 0..launches {
        let stream = &streams[i % streams.len()];
        let mut written = arena.view_mut(first, .., stream)?;
        for array in rest.iter() {
            read.push(arena.view(array, .., stream)?);
        }
        let mut launch: LaunchArgs<'_> = stream.launch_builder(kernel);
        launch.arg(&mut written);
        for view in &read {
            launch.arg(view);
        }
        // SAFETY: as in `raw`.
        unsafe { launch.launch(config()) }?;
        drop(launch);
        // The views drop after the launch that borrowed them: recorded.
        read.clear();
    }
    for stream in streams {
        stream.synchronize()?;
    }
    Ok(start.elapsed().as_nanos() as f64 / launches as f64)
}

/// The median over the rounds of `side`'s figures (`race` returns them by
/// round).
fn side_median(times: &[Vec<f64>], side: usize) -> f64 {
    let figures: Vec<f64> = times.iter().map(|round| round[side]).collect();
    rounds::median(&figures)
}

fn main() -> Res<()> {
    let launches = rounds::flag("--launches").unwrap_or(20_000);
    let rounds = rounds::Rounds::from_args(1, 5);
    let context = CudaContext::new(0)?;
    let (s1, s2) = (context.new_stream()?, context.new_stream()?);
    println!(
        "# ordering: {} launches per round, 1 block of 256 threads, device {}",
        launches,
        context.name()?
    );
    for n in COUNTS {
        let ptx = cudarc::nvrtc::compile_ptx(source(n))?;
        let kernel = context
            .load_module(ptx)?
            .load_function(&format!("touch{n}"))?;
        let mut arena = Arena::device(&s1, 64 << 20)?;
        let mut arrays = (0..n)
            .map(|_| arena.alloc_zeros::<f32>(1024))
            .collect::<Result<Vec<_>, _>>()?;
        for (case, streams) in [
            ("one stream", vec![Arc::clone(&s1)]),
            (
                "two streams, alternating",
                vec![Arc::clone(&s1), Arc::clone(&s2)],
            ),
        ] {
            let title = format!("{n} arrays, {case}");
            let times =
                rounds::race(
                    &title,
                    "ns/launch",
                    &["tracked", "raw"],
                    rounds,
                    |side| match side {
                        0 => tracked(&arena, &mut arrays, &kernel, &streams, launches),
                        _ => raw(&arena, &arrays, &kernel, &streams, launches),
                    },
                )?;
            let (t, r) = (side_median(&times, 0), side_median(&times, 1));
            println!(
                "RESULT {title}: tracked {t:.0} ns, raw {r:.0} ns, {:.2}x",
                t / r
            );
        }
        if n == 8 {
            views_alone(&arena, &mut arrays, &s1, launches * 10)?;
        }
        drop(arrays);
    }
    threads(&context, launches)
}

/// The host's share alone: the views of one launch made and dropped with no
/// launch, against the same arrays' addresses looked up; ns per array.
fn views_alone(
    arena: &Arena<CudaBackend>,
    arrays: &mut [ArenaSlice<f32, CudaBackend>],
    stream: &Arc<CudaStream>,
    sets: usize,
) -> Res<()> {
    let n = arrays.len() as f64;
    let title = format!("{} arrays' views alone, no launch", arrays.len());
    let times = rounds::race(
        &title,
        "ns/array",
        &["views", "addresses"],
        rounds::Rounds::from_args(1, 5),
        |side| {
            let start = Instant::now();
            let mut sum = 0usize;
            for _ in 0..sets {
                let (first, rest) = arrays.split_first_mut().ok_or("no arrays")?;
                if side == 0 {
                    let written = arena.view_mut(first, .., stream)?;
                    sum += std::hint::black_box(&written) as *const _ as usize & 1;
                    for array in rest.iter() {
                        let read = arena.view(array, .., stream)?;
                        sum += std::hint::black_box(&read) as *const _ as usize & 1;
                    }
                } else {
                    sum += address::address_of(arena, first)? as usize & 1;
                    for array in rest.iter() {
                        sum += address::address_of(arena, array)? as usize & 1;
                    }
                }
            }
            std::hint::black_box(sum);
            Ok(start.elapsed().as_nanos() as f64 / (sets as f64 * n))
        },
    )?;
    let (v, a) = (side_median(&times, 0), side_median(&times, 1));
    println!("RESULT {title}: views {v:.1} ns, addresses {a:.1} ns per array");
    Ok(())
}

/// 16 threads, each launching `launches / 4` times on its own stream with
/// 8 arrays of its own: launches per second with and without views.
fn threads(context: &Arc<CudaContext>, launches: usize) -> Res<()> {
    let n = 8;
    let ptx = cudarc::nvrtc::compile_ptx(source(n))?;
    let kernel = context
        .load_module(ptx)?
        .load_function(&format!("touch{n}"))?;
    let own = context.new_stream()?;
    let mut arena = Arena::device(&own, 64 << 20)?;
    let mut sets = (0..THREADS)
        .map(|_| {
            (0..n)
                .map(|_| arena.alloc_zeros::<f32>(1024))
                .collect::<Result<Vec<_>, _>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let streams = (0..THREADS)
        .map(|_| context.new_stream())
        .collect::<Result<Vec<_>, _>>()?;
    let each = (launches / 4).max(1);
    let rounds = rounds::Rounds::from_args(1, 5);
    let title = format!("{THREADS} threads, {n} arrays each, a stream each");
    let arena = &arena;
    let kernel = &kernel;
    let times = rounds::race(&title, "ns/launch", &["tracked", "raw"], rounds, |side| {
        let start = Instant::now();
        std::thread::scope(|scope| -> Res<()> {
            let running: Vec<_> = sets
                .iter_mut()
                .zip(&streams)
                .map(|(arrays, stream)| {
                    let streams = [Arc::clone(stream)];
                    scope.spawn(move || match side {
                        0 => tracked(arena, arrays, kernel, &streams, each)
                            .map_err(|e| e.to_string()),
                        _ => raw(arena, arrays, kernel, &streams, each).map_err(|e| e.to_string()),
                    })
                })
                .collect();
            for thread in running {
                thread.join().map_err(|_| "a thread panicked")??;
            }
            Ok(())
        })?;
        Ok(start.elapsed().as_nanos() as f64 / (each * THREADS) as f64)
    })?;
    let (t, r) = (side_median(&times, 0), side_median(&times, 1));
    println!(
        "RESULT {title}: tracked {t:.0} ns, raw {r:.0} ns per launch; throughput {:.2}x",
        r / t
    );
    Ok(())
}
