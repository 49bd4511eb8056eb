//! Arenas as NCCL symmetric windows, on two GPUs (feature `nccl`): collectives' values over
//! registered arrays, the rendezvous refusing ranks that placed other arrays, growth registered
//! as an explicit step, drops in either order, and the refusals. Every test is `#[ignore]`d and
//! panics with the reason on a machine with fewer than two GPUs: run with `--include-ignored`,
//! `NCCL_NVLS_ENABLE=0` and a `libnccl.so` on `LD_LIBRARY_PATH` (docs/NCCL.md).
#![cfg(feature = "nccl")]

use std::sync::Arc;

use gpu_aligned::arena::{Arena, ArenaOptions, ArenaSlice, GrowthPolicy};
use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, CudaStream};
use gpu_aligned::backend::cuda::cudarc::nccl::{group_end, group_start, sys::ncclRedOp_t, Id};
use gpu_aligned::backend::cuda::{probe, CudaBackend};
use gpu_aligned::nccl::{self, rendezvous, Comm, NcclError};
use gpu_aligned::share::{Exportable, Share};

type Array<T> = ArenaSlice<T, CudaBackend>;
const MIB: usize = 1 << 20;

/// A communicator moves to the thread that drives its rank (`benches/nccl.rs` grows and registers
/// from a thread per rank); it does not compile otherwise.
const _: fn() = || {
    fn moves_between_threads<T: Send>() {}
    moves_between_threads::<Comm>();
};

/// One stream on each of the first two GPUs; panics with why there are none.
fn two_streams() -> Vec<Arc<CudaStream>> {
    let devices = probe().unwrap_or_else(|why| panic!("needs two GPUs, found none: {why}"));
    assert!(
        devices >= 2,
        "needs two GPUs, found {devices}: nothing was checked"
    );
    if let Err(why) = nccl::probe() {
        panic!("needs NCCL: {why}");
    }
    (0..2)
        .map(|i| CudaContext::new(i).and_then(|c| c.new_stream()).unwrap())
        .collect()
}

/// The two ranks of one process, on `streams`.
fn comms(streams: &[Arc<CudaStream>]) -> Vec<Comm> {
    Comm::init(streams, 0, 2, Id::new().unwrap()).unwrap()
}

/// A growing arena of 4096-aligned arrays, chunks of `chunk` bytes, one mapped.
fn arena(stream: &Arc<CudaStream>, chunk: usize) -> Arena<CudaBackend> {
    let growth = GrowthPolicy::up_to(1 << 30).with_chunk(chunk);
    let options = ArenaOptions::new()
        .min_align(4096)
        .growth(growth)
        .share(Share::Processes);
    options.device(stream, chunk).unwrap()
}

/// Runs `rendezvous` over both ranks with their arrays.
fn meet(
    comms: &mut [Comm],
    arenas: &[Arena<CudaBackend>],
    arrays: [&[&dyn Exportable]; 2],
) -> Result<(), NcclError> {
    let (c0, c1) = comms.split_at_mut(1);
    rendezvous(&mut [
        (&mut c0[0], &arenas[0], arrays[0]),
        (&mut c1[0], &arenas[1], arrays[1]),
    ])
}

/// `recv[r] = op(send of both ranks)` (or the gather), both ranks in one group, views on each
/// communicator's stream (the arenas' own), kept until the group has launched.
fn collective(
    comms: &[Comm],
    arenas: &[Arena<CudaBackend>],
    streams: &[Arc<CudaStream>],
    send: &[Array<f32>],
    recv: &mut [Array<f32>],
    gather: bool,
) -> Result<(), NcclError> {
    let mut views = Vec::new();
    for (r, out) in recv.iter_mut().enumerate() {
        let input = arenas[r].view(&send[r], .., &streams[r]).unwrap();
        views.push((input, arenas[r].view_mut(out, .., &streams[r]).unwrap()));
    }
    group_start().unwrap();
    let mut result = Ok(());
    for (comm, (input, out)) in comms.iter().zip(views.iter_mut()) {
        let done = match gather {
            true => comm.all_gather(input, out),
            false => comm.all_reduce(input, out, ncclRedOp_t::ncclSum),
        };
        result = result.and(done);
    }
    group_end().unwrap();
    drop(views); // after the launch: the arenas record the collective's use
    result
}

#[test]
#[ignore = "needs two NVIDIA GPUs and NCCL"]
fn all_reduce_and_all_gather_over_registered_arrays_are_correct() {
    let streams = two_streams();
    let mut comms = comms(&streams);
    let mut arenas: Vec<_> = streams.iter().map(|s| arena(s, 64 * MIB)).collect();
    for n in [2048usize, 65_536, 1 << 20] {
        let input = |r: usize| (0..n).map(|i| (r * n + i) as f32).collect::<Vec<f32>>();
        let mut send = Vec::new();
        let (mut sum, mut all) = (Vec::new(), Vec::new());
        for (r, arena) in arenas.iter_mut().enumerate() {
            send.push(arena.alloc_from(&input(r)).unwrap());
            sum.push(arena.alloc_zeros::<f32>(n).unwrap());
            all.push(arena.alloc_zeros::<f32>(2 * n).unwrap());
        }
        let of = |r: usize| -> [&dyn Exportable; 3] { [&send[r], &sum[r], &all[r]] };
        let (a0, a1) = (of(0), of(1));
        meet(&mut comms, &arenas, [&a0, &a1]).unwrap();
        collective(&comms, &arenas, &streams, &send, &mut sum, false).unwrap();
        collective(&comms, &arenas, &streams, &send, &mut all, true).unwrap();
        let expected_sum: Vec<f32> = (0..n).map(|i| (n + 2 * i) as f32).collect();
        let expected_all: Vec<f32> = [input(0), input(1)].concat();
        for r in 0..2 {
            assert_eq!(
                arenas[r].to_vec(&sum[r]).unwrap(),
                expected_sum,
                "rank {r}, {n}"
            );
            assert_eq!(
                arenas[r].to_vec(&all[r]).unwrap(),
                expected_all,
                "rank {r}, {n}"
            );
        }
    }
}

#[test]
#[ignore = "needs two NVIDIA GPUs and NCCL"]
fn a_rank_that_placed_other_arrays_is_refused_on_every_rank_before_any_collective() {
    let streams = two_streams();
    let id = Id::new().unwrap();
    // One rank per thread, as one per process: each calls the rendezvous alone.
    let ranks: Vec<_> = (0..2)
        .map(|r| {
            let stream = Arc::clone(&streams[r]);
            std::thread::spawn(move || {
                let mut comm = Comm::init(&[Arc::clone(&stream)], r, 2, id)
                    .unwrap()
                    .remove(0);
                // Rank 1 allocates one more array first: its `x` lies 4096 bytes further.
                let mut first = arena(&stream, 8 * MIB);
                let extra = (r == 1).then(|| first.alloc::<u8>(1).unwrap());
                let x = first.alloc_zeros::<f32>(1024).unwrap();
                let shifted = rendezvous(&mut [(&mut comm, &first, &[&x])]);
                // The same offset, another element type on rank 1.
                let mut second = arena(&stream, 8 * MIB);
                let y: Box<dyn Exportable> = match r {
                    0 => Box::new(second.alloc_zeros::<f32>(1024).unwrap()),
                    _ => Box::new(second.alloc_zeros::<u32>(1024).unwrap()),
                };
                let retyped = rendezvous(&mut [(&mut comm, &second, &[&*y])]);
                // Agreeing ranks then register, and a collective runs in the window.
                let agreed = rendezvous(&mut [(&mut comm, &second, &[])]);
                let send = second.alloc_from(&[r as f32 + 1.0; 1024]).unwrap();
                let mut sum = second.alloc_zeros::<f32>(1024).unwrap();
                let view = second.view(&send, .., &stream).unwrap();
                let mut out = second.view_mut(&mut sum, .., &stream).unwrap();
                let reduced = comm.all_reduce(&view, &mut out, ncclRedOp_t::ncclSum);
                drop((view, out));
                let values = second.to_vec(&sum).unwrap();
                drop((extra, x, y, send, sum));
                (shifted, retyped, agreed, reduced, values)
            })
        })
        .collect();
    for (r, rank) in ranks.into_iter().enumerate() {
        let (shifted, retyped, agreed, reduced, values) = rank.join().unwrap();
        assert_eq!(shifted, Err(NcclError::Asymmetric(vec![1])), "rank {r}");
        assert_eq!(retyped, Err(NcclError::Asymmetric(vec![1])), "rank {r}");
        assert_eq!((agreed, reduced), (Ok(()), Ok(())), "rank {r}");
        assert_eq!(values, [3.0; 1024], "rank {r}");
    }
}

/// Whether the array crosses a chunk boundary (so a window's end, once registered).
fn straddles(arena: &Arena<CudaBackend>, array: &Array<f32>, chunk: usize) -> bool {
    let start = arena.offset(array).unwrap() as usize;
    start / chunk != (start + array.size_bytes() - 1) / chunk
}

#[test]
#[ignore = "needs two NVIDIA GPUs and NCCL"]
fn growth_is_registered_at_the_next_rendezvous_and_arrays_never_mix_windows() {
    let streams = two_streams();
    let mut comms = comms(&streams);
    let chunk = 2 * MIB;
    let mut arenas: Vec<_> = streams.iter().map(|s| arena(s, chunk)).collect();
    let fill: Vec<Array<f32>> = arenas
        .iter_mut()
        .map(|a| a.alloc_zeros(chunk / 4).unwrap())
        .collect();
    meet(&mut comms, &arenas, [&[&fill[0]], &[&fill[1]]]).unwrap();
    // The first chunk is full: these grow each arena by one chunk, not registered yet.
    let n = 65_536;
    let (mut send, mut recv) = (Vec::new(), Vec::new());
    for (r, arena) in arenas.iter_mut().enumerate() {
        send.push(arena.alloc_from(&vec![r as f32 + 1.0; n]).unwrap());
        recv.push(arena.alloc_zeros::<f32>(n).unwrap());
        assert_eq!(arena.capacity(), 2 * chunk, "rank {r} grew by one chunk");
        assert!(arena.offset(&send[r]).unwrap() >= chunk as u64, "rank {r}");
    }
    // A registered buffer (the first chunk) with an unregistered one: refused before NCCL.
    group_start().unwrap();
    for (r, comm) in comms.iter().enumerate() {
        let registered = arenas[r].view(&fill[r], ..n, &streams[r]).unwrap();
        let mut fresh = arenas[r].view_mut(&mut recv[r], .., &streams[r]).unwrap();
        let mixed = comm.all_reduce(&registered, &mut fresh, ncclRedOp_t::ncclSum);
        assert!(
            matches!(mixed, Err(NcclError::Window(..))),
            "rank {r}: {mixed:?}"
        );
    }
    group_end().unwrap();
    // The explicit step registers the new chunk; then the collective runs in it.
    let started = std::time::Instant::now();
    meet(
        &mut comms,
        &arenas,
        [&[&send[0], &recv[0]], &[&send[1], &recv[1]]],
    )
    .unwrap();
    println!(
        "a rendezvous registering one {} MiB chunk on each of 2 ranks: {:?}",
        chunk / MIB,
        started.elapsed()
    );
    collective(&comms, &arenas, &streams, &send, &mut recv, false).unwrap();
    for r in 0..2 {
        assert_eq!(
            arenas[r].to_vec(&recv[r]).unwrap(),
            vec![3.0; n],
            "rank {r}"
        );
    }
    // Arrays across a window's end (chunks registered one by one) are refused.
    let (mut wide_send, mut wide_recv) = (Vec::new(), Vec::new());
    for (r, arena) in arenas.iter_mut().enumerate() {
        wide_send.push(arena.alloc_zeros::<f32>(chunk / 4).unwrap());
        wide_recv.push(arena.alloc_zeros::<f32>(chunk / 4).unwrap());
        let crossing =
            straddles(arena, &wide_send[r], chunk) && straddles(arena, &wide_recv[r], chunk);
        assert!(
            crossing,
            "rank {r}: the {chunk}-byte arrays were meant to cross chunks"
        );
    }
    meet(
        &mut comms,
        &arenas,
        [
            &[&wide_send[0], &wide_recv[0]],
            &[&wide_send[1], &wide_recv[1]],
        ],
    )
    .unwrap();
    let result = collective(&comms, &arenas, &streams, &wide_send, &mut wide_recv, false);
    assert!(matches!(result, Err(NcclError::Window(..))), "{result:?}");
}

#[test]
#[ignore = "needs two NVIDIA GPUs and NCCL"]
fn arenas_dropped_while_registered_stay_mapped_until_their_communicator_drops() {
    let streams = two_streams();
    let context = Arc::clone(streams[0].context());
    // After a synchronize: the driver's pool (behind cudarc's buffers, which the rendezvous uses)
    // gives its freed memory back then, which would read as an arena's.
    let free = || {
        context.synchronize().unwrap();
        context.mem_get_info().unwrap().0
    };
    let chunk = 64 * MIB;
    let mut comms = comms(&streams);
    // A control: an arena never registered gives its memory back when it drops.
    let control = arena(&streams[0], chunk);
    let before = free();
    drop(control);
    assert!(
        free() >= before + chunk / 2,
        "the control arena kept its memory"
    );
    // Two chunks each, both registered: trimming gives none back, nor does dropping the arena.
    let mut arenas: Vec<_> = streams.iter().map(|s| arena(s, chunk)).collect();
    let mut x: Vec<Array<f32>> = Vec::new();
    let mut y: Vec<Array<f32>> = Vec::new();
    for arena in arenas.iter_mut() {
        x.push(arena.alloc_zeros(chunk / 4).unwrap());
        y.push(arena.alloc_zeros(1024).unwrap());
        assert_eq!(arena.capacity(), 2 * chunk);
    }
    let allocated = free();
    meet(&mut comms, &arenas, [&[&x[0], &y[0]], &[&x[1], &y[1]]]).unwrap();
    drop((x, y));
    assert_eq!(
        arenas[0].trim().unwrap(),
        0,
        "a registered chunk was given back"
    );
    let registered = free();
    drop(arenas);
    let dropped = free();
    drop(comms); // deregisters, then unmaps what the arenas left
    let released = free();
    println!(
        "free bytes: allocated {allocated}, registered {registered}, arenas dropped {dropped}, \
         communicators dropped {released}"
    );
    assert!(
        dropped < registered + chunk / 2,
        "registered memory was unmapped with its arena"
    );
    assert!(
        released >= dropped + chunk,
        "dropping the communicators gave back no arena memory"
    );
    // Communicators first, then arenas, twice: no memory is left behind by a round.
    let mut after = Vec::new();
    for _ in 0..3 {
        let mut comms = self::comms(&streams);
        let mut arenas: Vec<_> = streams.iter().map(|s| arena(s, chunk)).collect();
        let (mut send, mut recv) = (Vec::new(), Vec::new());
        for (r, arena) in arenas.iter_mut().enumerate() {
            send.push(arena.alloc_from(&[r as f32; 256]).unwrap());
            recv.push(arena.alloc_zeros::<f32>(256).unwrap());
        }
        meet(
            &mut comms,
            &arenas,
            [&[&send[0], &recv[0]], &[&send[1], &recv[1]]],
        )
        .unwrap();
        collective(&comms, &arenas, &streams, &send, &mut recv, false).unwrap();
        assert_eq!(arenas[1].to_vec(&recv[1]).unwrap(), [1.0; 256]);
        for stream in &streams {
            stream.synchronize().unwrap();
        }
        drop(comms);
        drop((send, recv, arenas));
        after.push(free());
    }
    println!("free bytes after each round: {after:?}");
    assert!(after[2] + chunk / 2 > after[1], "a round leaked: {after:?}");
}

#[test]
#[ignore = "needs two NVIDIA GPUs and NCCL"]
fn fixed_arenas_and_wrong_lengths_are_refused() {
    let streams = two_streams();
    let mut comms = comms(&streams);
    let mut fixed: Vec<_> = streams
        .iter()
        .map(|s| Arena::device(s, MIB).unwrap())
        .collect();
    let x: Vec<Array<f32>> = fixed
        .iter_mut()
        .map(|a| a.alloc_zeros(16).unwrap())
        .collect();
    assert_eq!(
        meet(&mut comms, &fixed, [&[&x[0]], &[&x[1]]]),
        Err(NcclError::NotExportable)
    );
    let send = streams[0].alloc_zeros::<f32>(16).unwrap();
    let mut short = streams[0].alloc_zeros::<f32>(31).unwrap();
    assert_eq!(
        comms[0].all_gather(&send, &mut short),
        Err(NcclError::Length(32, 31))
    );
}
