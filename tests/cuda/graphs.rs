//! Graph capture on a real GPU: a step of 100 kernels that allocates 200
//! temporaries (uploaded, zeroed and left as they are) is captured from a
//! device arena and replayed 10,000 times with the values a host model
//! gives; a verb that cannot be captured returns its error and the capture
//! goes on; a graph's arrays keep their bytes while it lives, and a slow
//! replay is waited for before they are handed out again.

use std::sync::Arc;

use gpu_aligned::alloc::AllocError;
use gpu_aligned::arena::{Arena, ArenaError, ArenaOptions, ArenaSlice, GrowthPolicy};
use gpu_aligned::backend::cuda::cudarc::driver::{
    sys::CUstreamCaptureStatus, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg,
};
use gpu_aligned::backend::cuda::{CudaBackend, CudaError};
use gpu_aligned::backend::MoveBytes;

use crate::types::module;

const STEP: &str = r#"
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
__device__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
extern "C" __global__ void slow_fill(unsigned* a, unsigned n, unsigned value, long long cycles) {
    spin(cycles);
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) a[j] = value + j;
}
extern "C" __global__ void slow_double(const unsigned* a, unsigned* out, unsigned n, long long cycles) {
    spin(cycles);
    unsigned j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j < n) out[j] = a[j] * 2u + 1u;
}
"#;

/// Elements per array: small, so that the host model of 10,000 replays is
/// quick.
const N: usize = 256;
/// Iterations of the step: two kernels and four temporaries each.
const ITERATIONS: usize = 50;
/// About 50 ms at the H100's clock.
const SPIN_CYCLES: i64 = 100_000_000;

fn config() -> LaunchConfig {
    LaunchConfig::for_num_elems(N as u32)
}

/// A context with a stream of its own (the legacy default stream cannot be
/// captured) and a second one, so cudarc records events on every use.
fn streams() -> (Arc<CudaStream>, Arc<CudaStream>) {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    (context.new_stream().unwrap(), context.new_stream().unwrap())
}

fn status(stream: &CudaStream) -> CUstreamCaptureStatus {
    stream.capture_status().expect("a capture status")
}

/// The constants iteration `i` uploads.
fn constants(i: usize) -> Vec<u32> {
    (0..N as u32)
        .map(|j| j.wrapping_mul(7) ^ (i as u32))
        .collect()
}

/// What one replay of the step does to `x`, on the host.
fn model_step(x: &mut [u32], constants: &[Vec<u32>]) {
    for a in constants {
        for (j, x) in x.iter_mut().enumerate() {
            let v = x.wrapping_mul(3).wrapping_add(a[j]);
            *x = (v ^ 0x9e37_79b9).wrapping_add(v >> 3);
        }
    }
}

/// Queues the step on the arena's stream: per iteration, four temporaries
/// (one uploaded, one zeroed, two left as they are) and two kernels; all
/// are dropped before the next iteration. Returns the temporaries' offsets.
fn step(
    arena: &mut Arena<CudaBackend>,
    x: &mut ArenaSlice<u32, CudaBackend>,
    kernels: (&CudaFunction, &CudaFunction),
    constants: &[Vec<u32>],
) -> Result<Vec<u64>, ArenaError<CudaError>> {
    let stream = Arc::clone(arena.backend().stream());
    let n = N as u32;
    let mut offsets = Vec::new();
    for a_values in constants {
        let a = arena.alloc_from(a_values)?;
        let z = arena.alloc_zeros::<u32>(N)?;
        let mut b = arena.alloc::<u32>(N)?;
        let mut d = arena.alloc::<u32>(N)?;
        for array in [&a, &z, &b, &d] {
            offsets.push(arena.offset(array)?);
        }
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
            launch
                .arg(&xv)
                .arg(&av)
                .arg(&zv)
                .arg(&mut bv)
                .arg(&mut dv)
                .arg(&n);
            // SAFETY: `mix` touches elements [0, n) of arrays of n elements.
            unsafe { launch.launch(config()) }?;
        }
        {
            let (dv, bv, mut xv) = (
                arena.view(&d, .., &stream)?,
                arena.view(&b, .., &stream)?,
                arena.view_mut(x, .., &stream)?,
            );
            let mut launch = stream.launch_builder(kernels.1);
            launch.arg(&dv).arg(&bv).arg(&mut xv).arg(&n);
            // SAFETY: `fold` touches elements [0, n) of arrays of n elements.
            unsafe { launch.launch(config()) }?;
        }
    }
    Ok(offsets)
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_step_of_100_kernels_and_200_temporaries_replays_10_000_times() {
    let (stream, other) = streams();
    let module = module(&stream, STEP);
    let (mix, fold) = (
        module.load_function("mix").unwrap(),
        module.load_function("fold").unwrap(),
    );
    // 1 KiB arrays: room for 1,024.
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let start: Vec<u32> = (0..N as u32)
        .map(|j| j.wrapping_mul(2_654_435_761))
        .collect();
    let mut x = arena.alloc::<u32>(N).unwrap();
    // Last written on another stream before the capture: joined below, as
    // the capture does not wait on events recorded outside it.
    other
        .memcpy_htod(&start, &mut arena.view_mut(&mut x, .., &stream).unwrap())
        .unwrap();
    stream.join(&other).unwrap();
    let constants: Vec<_> = (0..ITERATIONS).map(constants).collect();

    let (graph, offsets) = arena
        .capture(|arena| {
            let offsets = step(arena, &mut x, (&mix, &fold), &constants)?;
            // Still capturing: nothing the arena did ended the capture.
            assert_eq!(
                status(arena.backend().stream()),
                CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE
            );
            Ok(offsets)
        })
        .expect("a valid capture");
    assert_eq!(offsets.len(), 200);
    // Dropped inside the capture, the temporaries keep their bytes: 200
    // distinct blocks.
    let mut distinct = offsets.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 200);
    // Capturing queued nothing: `x` still holds the start.
    assert_eq!(arena.to_vec(&x).unwrap(), start);

    let mut expected = start.clone();
    graph.launch().unwrap();
    model_step(&mut expected, &constants);
    assert_eq!(arena.to_vec(&x).unwrap(), expected, "after one replay");
    for _ in 1..10_000 {
        graph.launch().unwrap();
        model_step(&mut expected, &constants);
    }
    assert_eq!(arena.to_vec(&x).unwrap(), expected, "after 10,000 replays");

    // Arrays allocated now never get a temporary's bytes while the graph
    // lives.
    let later: Vec<_> = (0..64).map(|_| arena.alloc::<u32>(N).unwrap()).collect();
    for array in &later {
        assert!(!offsets.contains(&arena.offset(array).unwrap()));
    }
    drop(later);
    // A second capture of the same step, with the first graph alive and
    // `x` touched by both: no event of the first capture is waited on.
    let (again, _) = arena
        .capture(|arena| step(arena, &mut x, (&mix, &fold), &constants))
        .expect("a second valid capture");
    again.launch().unwrap();
    graph.launch().unwrap();
    model_step(&mut expected, &constants);
    model_step(&mut expected, &constants);
    assert_eq!(arena.to_vec(&x).unwrap(), expected);
    drop((graph, again));
    // cudarc recorded no failed event call on the way.
    stream.context().check_err().unwrap();
    // Once the graphs are gone (and their replays done), their bytes come
    // back: filling the arena reaches them.
    arena.backend().synchronize().unwrap();
    let mut back = Vec::new();
    while let Ok(array) = arena.alloc::<u32>(N) {
        let offset = arena.offset(&array).unwrap();
        back.push(array);
        if offsets.contains(&offset) {
            break;
        }
    }
    let last = back.last().map(|array| arena.offset(array).unwrap());
    assert!(
        offsets.contains(&last.unwrap()),
        "a temporary's bytes came back"
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_verb_that_cannot_be_captured_returns_its_error_and_the_capture_goes_on() {
    let (stream, _other) = streams();
    let module = module(&stream, STEP);
    let (mix, fold) = (
        module.load_function("mix").unwrap(),
        module.load_function("fold").unwrap(),
    );
    let growing = ArenaOptions::new().growth(GrowthPolicy::up_to(64 << 20));
    let mut arena = growing.device(&stream, 2 << 20).unwrap();
    let start: Vec<u32> = (0..N as u32).collect();
    let mut x = arena.alloc_from(&start).unwrap();
    let constants: Vec<_> = (0..2).map(constants).collect();
    let capturing = |error: ArenaError<CudaError>| {
        matches!(error, ArenaError::Backend(CudaError::Capturing { .. }))
    };
    let (graph, ()) = arena
        .capture(|arena| {
            let active = |arena: &Arena<CudaBackend>| {
                assert_eq!(
                    status(arena.backend().stream()),
                    CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_ACTIVE
                );
            };
            assert!(capturing(arena.to_vec(&x).unwrap_err()), "a download");
            active(arena);
            let synchronized = arena.backend().synchronize().map_err(ArenaError::Backend);
            assert!(capturing(synchronized.unwrap_err()), "synchronize");
            active(arena);
            assert!(capturing(arena.reset().unwrap_err()), "reset");
            active(arena);
            // Nothing to give back: nothing asked of the device either.
            match arena.trim() {
                Ok(0) => {}
                Err(error) => assert!(capturing(error), "trim"),
                Ok(bytes) => panic!("{bytes} bytes trimmed during a capture"),
            }
            active(arena);
            // More than the mapped 2 MiB: growing would map memory.
            let big = arena.alloc::<u8>(8 << 20).unwrap_err();
            assert!(capturing(big), "growth");
            active(arena);
            let nested = arena.capture(|_| Ok(())).unwrap_err();
            assert!(capturing(nested), "a capture inside a capture");
            active(arena);
            // The capture still records work after the refusals.
            step(arena, &mut x, (&mix, &fold), &constants)?;
            active(arena);
            Ok(())
        })
        .expect("a valid capture");
    assert_eq!(
        status(arena.backend().stream()),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
    );
    graph.launch().unwrap();
    let mut expected = start;
    model_step(&mut expected, &constants);
    assert_eq!(arena.to_vec(&x).unwrap(), expected);
    // Outside the capture the same verbs work again.
    arena.backend().synchronize().unwrap();
    let big = arena.alloc::<u8>(8 << 20).unwrap();
    drop(big);
    stream.context().check_err().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_graph_s_arrays_are_not_reused_while_it_lives_nor_before_its_replay_ends() {
    let (stream, other) = streams();
    let module = module(&stream, STEP);
    let fill = module.load_function("slow_fill").unwrap();
    let double = module.load_function("slow_double").unwrap();
    let bytes = N * 4;
    // Room for `out` and one more array of N elements: no more.
    let mut arena = Arena::device(&stream, 2 * bytes).unwrap();
    arena.set_red_zones(false);
    let mut out = arena.alloc_zeros::<u32>(N).unwrap();
    let n = N as u32;
    let (graph, temporary) = arena
        .capture(|arena| {
            let stream = Arc::clone(arena.backend().stream());
            let mut t = arena.alloc::<u32>(N)?;
            let offset = arena.offset(&t)?;
            {
                let mut tv = arena.view_mut(&mut t, .., &stream)?;
                let mut launch = stream.launch_builder(&fill);
                launch.arg(&mut tv).arg(&n).arg(&7u32).arg(&SPIN_CYCLES);
                // SAFETY: `slow_fill` writes [0, n) of an array of n elements.
                unsafe { launch.launch(config()) }?;
            }
            {
                let (tv, mut ov) = (
                    arena.view(&t, .., &stream)?,
                    arena.view_mut(&mut out, .., &stream)?,
                );
                let mut launch = stream.launch_builder(&double);
                launch.arg(&tv).arg(&mut ov).arg(&n).arg(&SPIN_CYCLES);
                // SAFETY: `slow_double` reads [0, n) of `t`, writes [0, n) of
                // `out`.
                unsafe { launch.launch(config()) }?;
            }
            drop(t); // inside the capture: its bytes stay the graph's
            Ok(offset)
        })
        .expect("a valid capture");
    // While the graph lives, the temporary's bytes are not handed out.
    match arena.alloc::<u32>(N) {
        Err(ArenaError::Alloc(AllocError::OutOfMemory { .. })) => {}
        other => panic!("the graph's bytes were handed out: {other:?}"),
    }
    // A slow replay (about 100 ms), then the graph is dropped at once.
    graph.launch().unwrap();
    drop(graph);
    // Only the temporary's bytes fit: the arena waits for the replay first.
    let mut b = arena.alloc::<u32>(N).unwrap();
    assert_eq!(arena.offset(&b).unwrap(), temporary);
    // Written on another stream: had the arena not waited, this would land
    // before the replay's second kernel read the temporary.
    other
        .memcpy_htod(
            &vec![u32::MAX; N],
            &mut arena.view_mut(&mut b, .., &stream).unwrap(),
        )
        .unwrap();
    other.synchronize().unwrap();
    let expected: Vec<u32> = (0..n).map(|j| (7 + j) * 2 + 1).collect();
    assert_eq!(arena.to_vec(&out).unwrap(), expected);
    stream.context().check_err().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_graph_outlived_by_its_arena_refuses_to_launch() {
    let (stream, _other) = streams();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let (graph, ()) = arena
        .capture(|arena| {
            let a = arena.alloc_zeros::<u32>(N)?;
            drop(a);
            Ok(())
        })
        .unwrap();
    graph.launch().unwrap();
    arena.reset().unwrap();
    assert_eq!(graph.launch(), Err(CudaError::GraphOrphaned));
    let (graph, ()) = arena
        .capture(|arena| arena.alloc_zeros::<u32>(N).map(drop))
        .unwrap();
    drop(arena);
    assert_eq!(graph.launch(), Err(CudaError::GraphOrphaned));
}

/// A graph launched from another thread while `reset` waits for the device
/// must not run after it, over bytes the arena hands out again: `reset`
/// stops the arena's graphs before it waits (the order its drop follows).
/// The other thread launches a graph that writes its temporary's bytes
/// every millisecond while `reset` waits for a 50 ms kernel; the array
/// made from those bytes after the reset, written on another stream, must
/// keep what was written once the arena's stream is idle.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn reset_stops_graphs_launched_from_other_threads_before_it_waits() {
    let (stream, other) = streams();
    let module = module(&stream, STEP);
    let fill = module.load_function("slow_fill").unwrap();
    let n = N as u32;
    for round in 0..5 {
        let mut arena = Arena::device(&stream, 1 << 20).unwrap();
        let (graph, temporary) = arena
            .capture(|arena| {
                let mut t = arena.alloc::<u32>(N)?;
                let offset = arena.offset(&t)?;
                let mut tv = arena.view_mut(&mut t, .., &stream)?;
                let mut launch = stream.launch_builder(&fill);
                launch
                    .arg(&mut tv)
                    .arg(&n)
                    .arg(&7u32)
                    .arg(&(SPIN_CYCLES / 50));
                // SAFETY: `slow_fill` writes [0, n) of an array of n elements.
                unsafe { launch.launch(config()) }?;
                Ok(offset)
            })
            .expect("a valid capture");
        // Something for `reset` to wait for: about 50 ms on the arena's stream.
        let mut busy = arena.alloc::<u32>(N).unwrap();
        {
            let mut bv = arena.view_mut(&mut busy, .., &stream).unwrap();
            let mut launch = stream.launch_builder(&fill);
            launch.arg(&mut bv).arg(&n).arg(&1u32).arg(&SPIN_CYCLES);
            // SAFETY: `slow_fill` writes [0, n) of an array of n elements.
            unsafe { launch.launch(config()) }.unwrap();
        }
        let launcher = std::thread::spawn(move || {
            let mut launched = 0usize;
            loop {
                match graph.launch() {
                    Ok(()) => launched += 1,
                    Err(CudaError::GraphOrphaned) => return launched,
                    Err(e) => panic!("launch: {e:?}"),
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(5));
        arena.reset().unwrap();
        let mut fresh = arena.alloc::<u32>(N).unwrap();
        assert_eq!(arena.offset(&fresh).unwrap(), temporary, "round {round}");
        other
            .memcpy_htod(
                &vec![u32::MAX; N],
                &mut arena.view_mut(&mut fresh, .., &stream).unwrap(),
            )
            .unwrap();
        other.synchronize().unwrap();
        let launched = launcher.join().unwrap();
        stream.synchronize().unwrap();
        let values = other
            .clone_dtoh(&arena.view(&fresh, .., &other).unwrap())
            .unwrap();
        let overwritten = values.iter().filter(|&&v| v != u32::MAX).count();
        assert_eq!(
            overwritten, 0,
            "round {round}: a graph ran after the reset ({launched} launches before it)"
        );
    }
    stream.context().check_err().unwrap();
}

/// A capture step that swaps the arena for another (`std::mem::swap`)
/// leaves the capturing arena out of the capture's reach. The capture ends
/// at once anyway: the stream is not left in global capture mode, where
/// every unrelated CUDA allocation of the process would fail.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_capture_step_that_swaps_the_arena_out_ends_the_capture() {
    let (stream, _other) = streams();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let mut swapped = Arena::device(&stream, 1 << 20).unwrap();
    let captured = arena.capture(|arena| {
        let _a = arena.alloc_zeros::<u32>(N)?;
        std::mem::swap(arena, &mut swapped);
        Ok(())
    });
    assert!(
        matches!(
            captured,
            Err(ArenaError::Backend(CudaError::Capturing { .. }))
        ),
        "{captured:?}"
    );
    assert_eq!(
        status(&stream),
        CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
    );
    // An allocation outside the arenas, on a stream of its own, works.
    let unrelated = stream.context().new_stream().unwrap();
    let zeros = unrelated.alloc_zeros::<u32>(1024).unwrap();
    assert_eq!(unrelated.clone_dtoh(&zeros).unwrap(), vec![0u32; 1024]);
    // The arena swapped out drops cleanly; the one the step swapped in
    // works.
    drop(swapped);
    let a = arena.alloc_from(&[1u32, 2, 3]).unwrap();
    assert_eq!(arena.to_vec(&a).unwrap(), [1, 2, 3]);
    stream.context().check_err().unwrap();
}

/// A dropped array that a live captured graph may still use is counted
/// where it sits: among the pending frees, not live, not a leak.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_dropped_array_held_by_a_live_graph_is_counted_and_no_leak() {
    let (stream, _other) = streams();
    let mut arena = Arena::device(&stream, 1 << 20).unwrap();
    let kept = arena.alloc_zeros::<u32>(N).unwrap();
    let (graph, ()) = arena
        .capture(|arena| {
            let temporary = arena.alloc_zeros::<u32>(N)?;
            drop(temporary); // inside the capture: held for the graph
            Ok(())
        })
        .unwrap();
    graph.launch().unwrap();
    assert_eq!(arena.live(), 1);
    assert_eq!(arena.pending_frees(), 1);
    // The one leak is `kept` (its block, with a red zone under a sanitizer).
    let leaks = arena.leaks();
    assert_eq!(leaks.len(), 1, "{leaks:?}");
    assert_eq!(leaks[0].0, arena.offset(&kept).unwrap());
    assert!(leaks[0].1 >= N * 4, "{leaks:?}");
    drop(graph);
    stream.synchronize().unwrap();
    drop(kept);
    let _ = arena.alloc::<u8>(1).unwrap(); // takes the graph's arrays back
    stream.context().check_err().unwrap();
}
