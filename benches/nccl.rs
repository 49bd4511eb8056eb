//! NCCL collectives on two GPUs driven by one process: all-reduce (float sum) and all-gather
//! over arena arrays registered as symmetric windows (`gpu_aligned::nccl`), against
//! `ncclMemAlloc` buffers registered as symmetric windows (raw NCCL calls, a communicator of
//! their own), against unregistered `cudaMalloc` buffers (cudarc's `alloc_zeros`, on the arena
//! side's communicator). Sizes are nccl-tests': the bytes each rank receives (an all-gather sends
//! half). Then the time to grow a registered arena by one 2 MiB chunk on both ranks, the
//! rendezvous that registers it included. Run with `NCCL_NVLS_ENABLE=0` and a `libnccl.so` on
//! `LD_LIBRARY_PATH` (docs/NCCL.md); `--rounds N` and `--iters N` size it.

use std::sync::Arc;
use std::time::Instant;

use gpu_aligned::arena::{Arena, ArenaOptions, ArenaSlice, GrowthPolicy};
use gpu_aligned::backend::cuda::{cudarc, CudaBackend};
use gpu_aligned::nccl::{rendezvous, Comm};
use gpu_aligned::share::{Exportable, Share};

use cudarc::driver::{CudaContext, CudaSlice, CudaStream};
use cudarc::nccl::sys::{self, ncclRedOp_t};
use cudarc::nccl::Id;

#[path = "../runtime/examples/support/rounds.rs"]
#[allow(dead_code)]
mod rounds;

type Res<T> = Result<T, Box<dyn std::error::Error>>;
type Array = ArenaSlice<f32, CudaBackend>;

const MIB: usize = 1 << 20;
const SIZES: [usize; 5] = [8 << 10, 64 << 10, 256 << 10, 4 * MIB, 64 * MIB];
/// One physical allocation, so one window, holds every array of the race.
const CHUNK: usize = 256 * MIB;

fn ok(op: &str, r: sys::ncclResult_t) -> Res<()> {
    match r {
        sys::ncclResult_t::ncclSuccess => Ok(()),
        r => Err(format!("{op}: {r:?}").into()),
    }
}

/// Starts or ends an NCCL group (one thread drives both ranks).
fn group(start: bool) -> Res<()> {
    // SAFETY: no arguments; NCCL keeps the group per thread.
    match start {
        true => ok("ncclGroupStart", unsafe { sys::ncclGroupStart() }),
        false => ok("ncclGroupEnd", unsafe { sys::ncclGroupEnd() }),
    }
}

/// Two ranks as raw NCCL communicators with symmetric windows over `ncclMemAlloc` buffers.
struct Raw {
    comms: Vec<sys::ncclComm_t>,
    /// Per rank, per size: (send, recv, their windows).
    buffers: Vec<Vec<(*mut f32, *mut f32, [sys::ncclWindow_t; 2])>>,
}

impl Raw {
    fn new(streams: &[Arc<CudaStream>]) -> Res<Raw> {
        let mut comms = vec![std::ptr::null_mut(); 2];
        let devices = [0, 1];
        // SAFETY: two live communicator slots and two device ordinals.
        ok("ncclCommInitAll", unsafe {
            sys::ncclCommInitAll(comms.as_mut_ptr(), 2, devices.as_ptr())
        })?;
        let mut buffers = Vec::new();
        for stream in streams {
            stream.context().bind_to_thread()?;
            let mut mine = Vec::new();
            for size in SIZES {
                let (mut s, mut r) = (std::ptr::null_mut(), std::ptr::null_mut());
                // SAFETY: live out-pointers; NCCL allocates on the current device.
                ok("ncclMemAlloc", unsafe { sys::ncclMemAlloc(&mut s, size) })?;
                // SAFETY: as above.
                ok("ncclMemAlloc", unsafe { sys::ncclMemAlloc(&mut r, size) })?;
                mine.push((s.cast(), r.cast(), [std::ptr::null_mut(); 2]));
            }
            buffers.push(mine);
        }
        let mut raw = Raw { comms, buffers };
        // NCCL writes the windows at the group's end: `raw.buffers` does not move until then.
        group(true)?;
        for (comm, mine) in raw.comms.iter().zip(raw.buffers.iter_mut()) {
            for ((s, r, windows), size) in mine.iter_mut().zip(SIZES) {
                for (at, window) in [s.cast(), r.cast()].into_iter().zip(windows.iter_mut()) {
                    // SAFETY: a whole `ncclMemAlloc` buffer; 1 is NCCL_WIN_COLL_SYMMETRIC.
                    ok("ncclCommWindowRegister", unsafe {
                        sys::ncclCommWindowRegister(*comm, at, size, window, 1)
                    })?;
                }
            }
        }
        group(false)?;
        Ok(raw)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        for (comm, mine) in self.comms.iter().zip(&self.buffers) {
            for &(s, r, windows) in mine {
                // SAFETY: this communicator's windows and buffers, each released once, after
                // the caller synchronized the streams.
                unsafe {
                    let _ = windows.map(|w| sys::ncclCommWindowDeregister(*comm, w));
                    sys::ncclMemFree(s.cast());
                    sys::ncclMemFree(r.cast());
                }
            }
            // SAFETY: our communicator, destroyed once.
            unsafe { sys::ncclCommDestroy(*comm) };
        }
    }
}

/// What the race runs each round: `iters` collectives of one kind and size on both ranks.
struct Case<'a> {
    streams: &'a [Arc<CudaStream>],
    comms: &'a [Comm],
    arenas: &'a [Arena<CudaBackend>],
    arrays: &'a mut [Vec<(Array, Array)>],
    plain: &'a mut [Vec<(CudaSlice<f32>, CudaSlice<f32>)>],
    raw: &'a Raw,
    size: usize,
    gather: bool,
    iters: usize,
}

impl Case<'_> {
    /// One side's round: microseconds per collective (both ranks), waited for.
    fn round(&mut self, side: usize) -> Res<f64> {
        let at = SIZES.iter().position(|&s| s == self.size).ok_or("size")?;
        let n = self.size / 4;
        let sent = if self.gather { n / 2 } else { n };
        let start = Instant::now();
        match side {
            0 => {
                // Views taken once per round on each communicator's stream (the arena's).
                let mut views = Vec::new();
                for (r, arrays) in self.arrays.iter_mut().enumerate() {
                    let (send, recv) = &mut arrays[at];
                    let stream = &self.streams[r];
                    let input = self.arenas[r].view(send, ..sent, stream)?;
                    views.push((input, self.arenas[r].view_mut(recv, .., stream)?));
                }
                for _ in 0..self.iters {
                    group(true)?;
                    for (comm, (input, out)) in self.comms.iter().zip(views.iter_mut()) {
                        match self.gather {
                            true => comm.all_gather(input, out)?,
                            false => comm.all_reduce(input, out, ncclRedOp_t::ncclSum)?,
                        }
                    }
                    group(false)?;
                }
            }
            1 => {
                for _ in 0..self.iters {
                    group(true)?;
                    for (r, comm) in self.comms.iter().enumerate() {
                        let (send, recv) = &mut self.plain[r][at];
                        let input = send.slice(..sent);
                        match self.gather {
                            true => comm.all_gather(&input, recv)?,
                            false => comm.all_reduce(&input, recv, ncclRedOp_t::ncclSum)?,
                        }
                    }
                    group(false)?;
                }
            }
            _ => {
                for _ in 0..self.iters {
                    group(true)?;
                    for (r, &comm) in self.raw.comms.iter().enumerate() {
                        let (s, d, _) = self.raw.buffers[r][at];
                        let stream = self.streams[r].cu_stream() as sys::cudaStream_t;
                        let ty = sys::ncclDataType_t::ncclFloat32;
                        // SAFETY: `sent` floats at `s`, `n` at `d`, both buffers of `size`.
                        let result = unsafe {
                            match self.gather {
                                true => {
                                    sys::ncclAllGather(s.cast(), d.cast(), sent, ty, comm, stream)
                                }
                                false => sys::ncclAllReduce(
                                    s.cast(),
                                    d.cast(),
                                    sent,
                                    ty,
                                    ncclRedOp_t::ncclSum,
                                    comm,
                                    stream,
                                ),
                            }
                        };
                        ok("collective", result)?;
                    }
                    group(false)?;
                }
            }
        }
        for stream in self.streams {
            stream.synchronize()?;
        }
        Ok(start.elapsed().as_secs_f64() * 1e6 / self.iters as f64)
    }
}

fn growing(stream: &Arc<CudaStream>, chunk: usize) -> Res<Arena<CudaBackend>> {
    let growth = GrowthPolicy::up_to(8 << 30).with_chunk(chunk);
    Ok(ArenaOptions::new()
        .min_align(4096)
        .growth(growth)
        .share(Share::Processes)
        .device(stream, chunk)?)
}

fn main() -> Res<()> {
    let rounds = rounds::Rounds::from_args(1, 7);
    let streams: Vec<Arc<CudaStream>> = (0..2)
        .map(|i| CudaContext::new(i).and_then(|c| c.new_stream()))
        .collect::<Result<_, _>>()?;
    let nvls = std::env::var("NCCL_NVLS_ENABLE").unwrap_or_else(|_| "unset".into());
    println!(
        "# nccl: 2 x {}, NCCL {}, NCCL_NVLS_ENABLE={nvls}",
        streams[0].context().name()?,
        cudarc::nccl::result::get_nccl_version().map_err(|e| format!("{e:?}"))?
    );
    let mut comms = Comm::init(&streams, 0, 2, Id::new().map_err(|e| format!("{e:?}"))?)?;
    let mut arenas: Vec<_> = streams
        .iter()
        .map(|s| growing(s, CHUNK))
        .collect::<Res<_>>()?;
    let mut arrays: Vec<Vec<(Array, Array)>> = Vec::new();
    let mut plain = Vec::new();
    for (r, arena) in arenas.iter_mut().enumerate() {
        let mut mine = Vec::new();
        for size in SIZES {
            mine.push((
                arena.alloc_from(&vec![r as f32; size / 4])?,
                arena.alloc_zeros(size / 4)?,
            ));
        }
        arrays.push(mine);
        let stream = &streams[r];
        plain.push(
            SIZES
                .iter()
                .map(|&size| Ok((stream.alloc_zeros(size / 4)?, stream.alloc_zeros(size / 4)?)))
                .collect::<Res<Vec<_>>>()?,
        );
    }
    {
        let listed: Vec<Vec<&dyn Exportable>> = arrays
            .iter()
            .map(|mine| {
                mine.iter()
                    .flat_map(|(s, r)| [s as &dyn Exportable, r])
                    .collect()
            })
            .collect();
        let (c0, c1) = comms.split_at_mut(1);
        rendezvous(&mut [
            (&mut c0[0], &arenas[0], &listed[0]),
            (&mut c1[0], &arenas[1], &listed[1]),
        ])?;
    }
    let raw = Raw::new(&streams)?;
    // `--growth` measures the growth step and NCCL's own floor for it alone.
    let race = !std::env::args().any(|a| a == "--growth");
    for gather in [false, true].into_iter().filter(|_| race) {
        for size in SIZES {
            let iters = rounds::flag("--iters").unwrap_or((256 * MIB / size).clamp(20, 2000));
            let name = if gather { "all-gather" } else { "all-reduce" };
            let title = format!("{name} {} KiB, {iters} per round", size >> 10);
            let mut case = Case {
                streams: &streams,
                comms: &comms,
                arenas: &arenas,
                arrays: &mut arrays,
                plain: &mut plain,
                raw: &raw,
                size,
                gather,
                iters,
            };
            let sides = ["arena window", "cudaMalloc", "ncclMemAlloc window"];
            let times = rounds::race(&title, "us/op", &sides, rounds, |side| case.round(side))?;
            let median = |side: usize| {
                rounds::median(&times.iter().map(|round| round[side]).collect::<Vec<_>>())
            };
            let (window, malloc, memalloc) = (median(0), median(1), median(2));
            println!(
                "RESULT {name} {:>6} KiB: arena window {window:.1} us, ncclMemAlloc window \
                 {memalloc:.1} us ({:+.1}%), cudaMalloc {malloc:.1} us ({:.2}x the window's speed)",
                size >> 10,
                (window / memalloc - 1.0) * 100.0,
                malloc / window
            );
        }
    }
    for stream in &streams {
        stream.synchronize()?;
    }
    nccl_floor(&raw, &streams)?;
    drop(raw);
    drop((arrays, plain));
    growth(&streams, &mut comms)
}

/// A raw NCCL pointer (a communicator, a buffer, a window) handed between the threads of ranks.
#[derive(Clone, Copy)]
struct Handle(*mut std::ffi::c_void);

// SAFETY: each rank's communicator, buffers and windows are used by one thread at a time, which
// NCCL allows from any thread.
unsafe impl Send for Handle {}
// SAFETY: as above; shared only to be copied.
unsafe impl Sync for Handle {}

/// What one rank's step made: microseconds allocating and registering, the buffer, its window.
type Step = (f64, f64, Handle, Handle);

/// Allocates a 2 MiB `ncclMemAlloc` buffer on `stream`'s device and, unless `grouped` (the caller
/// registers it in a group), registers it as a symmetric window of `comm`.
fn floor_step(comm: Handle, stream: &CudaStream, grouped: bool) -> Res<Step> {
    stream.context().bind_to_thread()?;
    let (mut at, mut window) = (std::ptr::null_mut(), std::ptr::null_mut());
    let start = Instant::now();
    // SAFETY: a live out-pointer; NCCL allocates on the current device.
    ok("ncclMemAlloc", unsafe {
        sys::ncclMemAlloc(&mut at, 2 * MIB)
    })?;
    let allocated = start.elapsed();
    if !grouped {
        // SAFETY: the whole new buffer; 1 is NCCL_WIN_COLL_SYMMETRIC. Blocks until the other
        // rank's thread registers its own.
        let r = unsafe { sys::ncclCommWindowRegister(comm.0.cast(), at, 2 * MIB, &mut window, 1) };
        ok("ncclCommWindowRegister", r)?;
    }
    let registered = start.elapsed() - allocated;
    let us = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    Ok((
        us(allocated),
        us(registered),
        Handle(at),
        Handle(window.cast()),
    ))
}

/// NCCL's own floor for a growth step: a new 2 MiB `ncclMemAlloc` buffer on each rank, registered
/// as a symmetric window on both ranks, by one thread in one group and by a thread per rank (as a
/// process per GPU would); medians over `--steps` of the slower rank's allocating and registering.
fn nccl_floor(raw: &Raw, streams: &[Arc<CudaStream>]) -> Res<()> {
    let steps = rounds::flag("--steps").unwrap_or(30);
    let comms: Vec<Handle> = raw.comms.iter().map(|&c| Handle(c.cast())).collect();
    let mut made = Vec::new();
    for threads in [false, true] {
        let (mut alloc, mut register) = (Vec::new(), Vec::new());
        for _ in 0..steps {
            let mut fresh: Vec<Step> = match threads {
                false => (0..2)
                    .map(|rank| floor_step(comms[rank], &streams[rank], true))
                    .collect::<Res<_>>()?,
                true => std::thread::scope(|scope| {
                    let ranks: Vec<_> = (0..2)
                        .map(|rank| {
                            let (comm, stream) = (comms[rank], &streams[rank]);
                            scope.spawn(move || {
                                floor_step(comm, stream, false).map_err(|e| e.to_string())
                            })
                        })
                        .collect();
                    ranks
                        .into_iter()
                        .map(|rank| Ok(rank.join().map_err(|_| "a rank panicked")??))
                        .collect::<Res<Vec<_>>>()
                })?,
            };
            if !threads {
                let registering = Instant::now();
                group(true)?;
                for (rank, step) in fresh.iter_mut().enumerate() {
                    let (at, window) = (step.2 .0, &mut step.3 .0);
                    // SAFETY: as in `floor_step`; NCCL writes `window` at the group's end, and
                    // `fresh` does not move until then.
                    let r = unsafe {
                        sys::ncclCommWindowRegister(
                            comms[rank].0.cast(),
                            at,
                            2 * MIB,
                            (window as *mut *mut std::ffi::c_void).cast(),
                            1,
                        )
                    };
                    ok("ncclCommWindowRegister", r)?;
                }
                group(false)?;
                let took = registering.elapsed().as_secs_f64() * 1e6;
                fresh.iter_mut().for_each(|step| step.1 = took);
            }
            alloc.push(fresh.iter().map(|f| f.0).fold(0.0, f64::max));
            register.push(fresh.iter().map(|f| f.1).fold(0.0, f64::max));
            made.extend(
                fresh
                    .into_iter()
                    .enumerate()
                    .map(|(rank, f)| (rank, f.2, f.3)),
            );
        }
        println!(
            "RESULT NCCL's own floor, {}: a 2 MiB ncclMemAlloc on each rank {:.0} us, registering \
             both as symmetric windows {:.0} us, median of {steps}",
            if threads {
                "a thread per rank"
            } else {
                "one thread, one group"
            },
            rounds::median(&alloc),
            rounds::median(&register)
        );
    }
    for stream in streams {
        stream.synchronize()?;
    }
    group(true)?;
    for &(rank, _, window) in &made {
        // SAFETY: windows of these communicators, each deregistered once, in one group.
        let r = unsafe { sys::ncclCommWindowDeregister(comms[rank].0.cast(), window.0.cast()) };
        ok("ncclCommWindowDeregister", r)?;
    }
    group(false)?;
    for (_, at, _) in made {
        // SAFETY: buffers from `ncclMemAlloc`, each freed once, their windows gone.
        unsafe { sys::ncclMemFree(at.0) };
    }
    Ok(())
}

/// Grows a registered arena on each rank by one 2 MiB chunk (an array filling it) and registers
/// the chunk at a rendezvous: the two steps' medians over `steps`, and a rendezvous that
/// registers nothing (the exchange alone).
fn growth(streams: &[Arc<CudaStream>], comms: &mut [Comm]) -> Res<()> {
    let chunk = 2 * MIB;
    let steps = rounds::flag("--steps").unwrap_or(30);
    let mut arenas: Vec<_> = streams
        .iter()
        .map(|s| growing(s, chunk))
        .collect::<Res<_>>()?;
    let (c0, c1) = comms.split_at_mut(1);
    let (c0, c1) = (&mut c0[0], &mut c1[0]);
    rendezvous(&mut [(&mut *c0, &arenas[0], &[]), (&mut *c1, &arenas[1], &[])])?;
    let (mut grow, mut register, mut exchange) = (Vec::new(), Vec::new(), Vec::new());
    // The first chunk, filled: each step's array then needs a new one.
    let mut kept = Vec::new();
    for arena in arenas.iter_mut() {
        kept.push(arena.alloc::<f32>(chunk / 4)?);
    }
    for _ in 0..steps {
        let start = Instant::now();
        for arena in arenas.iter_mut() {
            kept.push(arena.alloc::<f32>(chunk / 4)?);
        }
        let grown = start.elapsed();
        if arenas
            .iter()
            .any(|a| a.capacity() != (grow.len() + 2) * chunk)
        {
            return Err("an arena did not grow by exactly one chunk".into());
        }
        rendezvous(&mut [(&mut *c0, &arenas[0], &[]), (&mut *c1, &arenas[1], &[])])?;
        let registered = start.elapsed() - grown;
        let again = Instant::now();
        rendezvous(&mut [(&mut *c0, &arenas[0], &[]), (&mut *c1, &arenas[1], &[])])?;
        exchange.push(again.elapsed().as_secs_f64() * 1e6);
        grow.push(grown.as_secs_f64() * 1e6);
        register.push(registered.as_secs_f64() * 1e6);
    }
    let (g, r, e) = (
        rounds::median(&grow),
        rounds::median(&register),
        rounds::median(&exchange),
    );
    // A thread per rank, each growing its arena and registering at its own rendezvous, as a
    // process per GPU would.
    let mut threaded = Vec::new();
    for _ in 0..steps {
        let (a0, a1) = arenas.split_at_mut(1);
        let ranks = [(&mut *c0, a0), (&mut *c1, a1)];
        let took = std::thread::scope(|scope| {
            let ranks: Vec<_> = ranks
                .into_iter()
                .map(|(comm, arena)| {
                    scope.spawn(move || -> Result<(f64, Array), String> {
                        let start = Instant::now();
                        let array = arena[0]
                            .alloc::<f32>(chunk / 4)
                            .map_err(|e| e.to_string())?;
                        rendezvous(&mut [(comm, &arena[0], &[])]).map_err(|e| e.to_string())?;
                        Ok((start.elapsed().as_secs_f64() * 1e6, array))
                    })
                })
                .collect();
            ranks
                .into_iter()
                .map(|rank| Ok(rank.join().map_err(|_| "a rank panicked")??))
                .collect::<Res<Vec<_>>>()
        })?;
        threaded.push(took.iter().map(|t| t.0).fold(0.0, f64::max));
        kept.extend(took.into_iter().map(|t| t.1));
    }
    println!(
        "RESULT growth by one 2 MiB chunk, a thread per rank (each growing its arena and \
         registering at its own rendezvous): {:.0} us, median of {steps}; target <= 2000 us",
        rounds::median(&threaded)
    );
    println!(
        "RESULT growth by one 2 MiB chunk on 2 ranks: {:.0} us (allocating, which maps and zeroes \
         it: {g:.0} us; the rendezvous registering it: {r:.0} us; a rendezvous with nothing new: \
         {e:.0} us), median of {steps}; target <= 2000 us",
        g + r
    );
    drop(kept);
    drop(arenas);
    Ok(())
}
