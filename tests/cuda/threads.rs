//! `ThreadArena` on a real GPU: threads with streams of their own allocate,
//! upload, run a slow kernel and drop arrays (their own and ones handed over
//! by other threads) while the kernels still run. Every kernel copies an
//! input it read after spinning for about 50 ms, while new arrays are
//! filled on the arena's stream: the output equals the input only if no
//! input's bytes were handed out before its kernel finished. Afterwards
//! nothing is lost: flushed, the arena is free again and one array of its
//! whole capacity fits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use gpu_aligned::arena::{Arena, ArenaSlice, ThreadArena};
use gpu_aligned::backend::cuda::cudarc::driver::{
    CudaContext, CudaFunction, CudaStream, PushKernelArg,
};
use gpu_aligned::backend::cuda::CudaBackend;

use crate::support::{assert_nothing_lost, GRID_STRIDE};
use crate::types::module;

const KERNELS: &str = r#"
__device__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) { }
}
extern "C" __global__ void slow_copy(const unsigned* src, unsigned* dst, unsigned long long n,
                                     long long cycles) {
    spin(cycles);
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        dst[i] = src[i];
}
"#;

/// About 50 ms at the H100's clock: far longer than allocating and
/// uploading a few arrays takes.
const SPIN_CYCLES: i64 = 100_000_000;
/// Elements of every array: 256 KiB, a multiple of 256 bytes, so arrays
/// pack the buffer exactly.
const LEN: usize = 1 << 16;
const BYTES: usize = LEN * 4;
const THREADS: usize = 4;
/// How long a thread waits for another before it gives up (one that
/// panicked never answers).
const PATIENCE: Duration = Duration::from_secs(20);

type Array = ArenaSlice<u32, CudaBackend>;

/// A context with the arena's stream and one stream per thread, all made
/// before any array (so every array's events are tracked), and the arena,
/// without red zones (the capacities are exact).
fn setup(capacity: usize) -> (ThreadArena<CudaBackend>, Vec<Arc<CudaStream>>, CudaFunction) {
    let context = CudaContext::new(0).expect("a CUDA GPU");
    let own = context.new_stream().unwrap();
    let streams: Vec<_> = (0..THREADS)
        .map(|_| context.new_stream().unwrap())
        .collect();
    let mut arena = Arena::device(&own, capacity).unwrap();
    arena.set_red_zones(false);
    let copy = module(&own, KERNELS).load_function("slow_copy").unwrap();
    let arena = ThreadArena::new(arena);
    assert_eq!(arena.stats().capacity, capacity);
    (arena, streams, copy)
}

/// What thread `thread` uploads in `round`: never `u32::MAX`, the fillers'
/// value.
fn data(thread: usize, round: usize) -> Vec<u32> {
    let base = ((thread * 16 + round + 1) * LEN) as u32;
    (0..LEN as u32).map(|i| base + i).collect()
}

/// Uploads `data` to a new input on `stream` and queues `slow_copy` from
/// it to a new output there; returns `(input, output)`.
fn start_copy(
    arena: &ThreadArena<CudaBackend>,
    stream: &Arc<CudaStream>,
    copy: &CudaFunction,
    data: &[u32],
) -> (Array, Array) {
    let mut input = arena.alloc::<u32>(LEN).unwrap();
    let shared = arena.lock();
    stream
        .memcpy_htod(data, &mut shared.view_mut(&mut input, .., stream).unwrap())
        .unwrap();
    drop(shared);
    let mut output = arena.alloc::<u32>(LEN).unwrap();
    {
        let shared = arena.lock();
        let src = shared.view(&input, .., stream).unwrap();
        let mut dst = shared.view_mut(&mut output, .., stream).unwrap();
        let n = LEN as u64;
        let mut launch = stream.launch_builder(copy);
        launch.arg(&src).arg(&mut dst).arg(&n).arg(&SPIN_CYCLES);
        // SAFETY: `slow_copy` reads [0, n) of `src` and writes [0, n) of
        // `dst`, both arrays of n elements.
        unsafe { launch.launch(GRID_STRIDE) }.unwrap();
    }
    (input, output)
}

/// An array of `u32::MAX`, written on the arena's stream, which orders
/// nothing after the threads' kernels: if it got bytes a kernel still
/// reads, the kernel copies `u32::MAX`.
fn filler(arena: &ThreadArena<CudaBackend>) -> Array {
    arena.alloc_from(&vec![u32::MAX; LEN]).unwrap()
}

/// Waits until `done` holds, panicking after [`PATIENCE`].
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < PATIENCE, "waited too long for {what}");
        thread::yield_now();
    }
}

/// An array handed to the next thread, with the index of the thread that
/// made it.
type Handed = (usize, Array);

/// Four threads, each on its own stream, six rounds each: a never-used
/// scratch array is dropped (the thread's cache keeps its block), an input
/// is uploaded and a slow kernel copies it to an output; while the kernel
/// spins the input is dropped, every other round by the next thread, and
/// the thread allocates new arrays of the input's size (the first one from
/// its cache) and fills them on the arena's stream. A used input kept by
/// the thread's cache, or freed before its kernel, would give one of them
/// the input's bytes, and the output would be `u32::MAX`. The last round's
/// outputs outlive their threads and are read on the main thread.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn threads_on_streams_of_their_own_reuse_no_bytes_a_kernel_still_reads() {
    const ROUNDS: usize = 6;
    const FILLERS: usize = 2;
    // At most seven arrays per thread at once, with room to spare.
    let capacity = 32 * BYTES;
    let (arena, streams, copy) = setup(capacity);
    let dropped: Vec<AtomicUsize> = (0..THREADS).map(|_| AtomicUsize::new(0)).collect();
    let finished = AtomicUsize::new(0);
    let (senders, inboxes): (Vec<Sender<Handed>>, Vec<Receiver<Handed>>) =
        (0..THREADS).map(|_| channel()).unzip();
    let outputs: Vec<(Array, Vec<u32>)> = thread::scope(|scope| {
        let workers: Vec<_> = inboxes
            .into_iter()
            .enumerate()
            .map(|(id, inbox)| {
                let next = senders[(id + 1) % THREADS].clone();
                let (arena, stream, copy) = (&arena, &streams[id], &copy);
                let (dropped, finished) = (&dropped, &finished);
                scope.spawn(move || {
                    // Drops what the previous thread handed over.
                    let serve = || {
                        while let Ok((maker, array)) = inbox.try_recv() {
                            drop(array);
                            dropped[maker].fetch_add(1, Ordering::Release);
                        }
                    };
                    let mut handed = 0;
                    let mut last = None;
                    for round in 0..ROUNDS {
                        drop(arena.alloc::<u32>(LEN).unwrap());
                        let expected = data(id, round);
                        let (input, out) = start_copy(arena, stream, copy, &expected);
                        if round % 2 == 1 {
                            next.send((id, input)).unwrap();
                            handed += 1;
                            wait_until("the next thread to drop an input", || {
                                serve();
                                dropped[id].load(Ordering::Acquire) == handed
                            });
                        } else {
                            drop(input);
                        }
                        let fillers: Vec<Array> = (0..FILLERS).map(|_| filler(arena)).collect();
                        serve();
                        if round + 1 == ROUNDS {
                            // Still being written: read on the main thread,
                            // after this thread is gone.
                            last = Some((out, expected));
                        } else {
                            stream.synchronize().unwrap();
                            let shared = arena.lock();
                            let back = stream.clone_dtoh(&shared.view(&out, .., stream).unwrap());
                            drop(shared);
                            let back = back.unwrap();
                            assert!(back == expected, "thread {id}, round {round}");
                        }
                        drop(fillers);
                    }
                    // Drop what others hand over until every thread is done.
                    finished.fetch_add(1, Ordering::Release);
                    wait_until("every thread to finish", || {
                        serve();
                        finished.load(Ordering::Acquire) == THREADS
                    });
                    serve();
                    last.unwrap()
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    for (id, (out, expected)) in outputs.iter().enumerate() {
        // On the arena's stream, which waits for the kernel's write.
        let back = arena.lock().to_vec(out).unwrap();
        assert!(back == *expected, "thread {id}'s last output");
    }
    drop(outputs);
    assert_nothing_lost(&arena, capacity);
}

/// An arena that holds exactly one input and one output per thread: each
/// thread uploads an input on its own stream, starts a slow kernel copying
/// it, and hands it to the next thread, which drops it. Once every input is
/// dropped, each thread's new array can only take bytes a kernel on another
/// thread's stream may still read: the arena's stream waits for that kernel
/// (on the device) before the new array is written on it, and every output
/// must equal its input.
#[test]
#[ignore = "needs an NVIDIA GPU"]
fn a_full_thread_arena_waits_for_the_kernels_of_other_threads() {
    let capacity = 2 * THREADS * BYTES;
    let (arena, streams, copy) = setup(capacity);
    let (ready, readies) = channel::<u64>();
    let (gos, go_inboxes): (Vec<Sender<()>>, Vec<Receiver<()>>) =
        (0..THREADS).map(|_| channel()).unzip();
    let (senders, inboxes): (Vec<Sender<Array>>, Vec<Receiver<Array>>) =
        (0..THREADS).map(|_| channel()).unzip();
    let (input_offsets, filler_offsets) = thread::scope(|scope| {
        let workers: Vec<_> = inboxes
            .into_iter()
            .zip(go_inboxes)
            .enumerate()
            .map(|(id, (inbox, go))| {
                let next = senders[(id + 1) % THREADS].clone();
                let ready = ready.clone();
                let (arena, stream, copy) = (&arena, &streams[id], &copy);
                scope.spawn(move || {
                    let expected = data(id, 0);
                    let (input, out) = start_copy(arena, stream, copy, &expected);
                    ready.send(arena.lock().offset(&input).unwrap()).unwrap();
                    next.send(input).unwrap();
                    drop(inbox.recv_timeout(PATIENCE).expect("the previous input"));
                    ready.send(u64::MAX).unwrap();
                    if go.recv().is_err() {
                        return None; // the main thread gave up
                    }
                    // Every input is dropped and its kernel may still run.
                    let filler = filler(arena);
                    let filler_offset = arena.lock().offset(&filler).unwrap();
                    let shared = arena.lock();
                    let back = stream.clone_dtoh(&shared.view(&out, .., stream).unwrap());
                    drop(shared);
                    let back = back.unwrap();
                    assert!(back == expected, "thread {id}'s output");
                    Some(filler_offset)
                })
            })
            .collect();
        drop(ready);
        // Moved in, so that a panic here ends the threads' wait for it.
        let gos = gos;
        // Each thread's input offset, then its word that it dropped the
        // previous thread's input.
        let mut inputs: Vec<u64> = (0..2 * THREADS)
            .map(|_| readies.recv_timeout(PATIENCE).expect("a thread's report"))
            .filter(|&offset| offset != u64::MAX)
            .collect();
        for go in &gos {
            go.send(()).unwrap();
        }
        let mut fillers: Vec<u64> = workers
            .into_iter()
            .map(|w| w.join().unwrap().unwrap())
            .collect();
        inputs.sort_unstable();
        fillers.sort_unstable();
        (inputs, fillers)
    });
    // The arena was full: every new array got bytes a dropped input's
    // kernel (or an output's, reused the same way) may still have used,
    // handed out in the arena's stream's order once that stream waited for
    // it, and every output still equals its input.
    assert_eq!(input_offsets.len(), THREADS);
    assert_eq!(filler_offsets.len(), THREADS);
    assert_nothing_lost(&arena, capacity);
}
