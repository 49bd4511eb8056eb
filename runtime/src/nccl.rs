//! Device arenas as NCCL symmetric windows (feature `nccl`): [`Comm`], one rank's communicator
//! (ours: cudarc's hides the `ncclComm_t` a window is registered on), [`rendezvous`], and
//! collectives over arena views or cudarc slices. `docs/NCCL.md` has the rules and an example.

use core::ffi::c_void;
use core::fmt;
use core::ptr::null_mut;
use std::format;
use std::sync::{Arc, PoisonError};
use std::vec::Vec;

use cudarc::driver::{sys as cu, CudaStream, DevicePtr, DevicePtrMut};
use cudarc::nccl::{sys, Id, NcclType};

use crate::arena::{Arena, ArenaError, SEALED};
use crate::backend::cuda::{CudaBackend, CudaError, Kept};
use crate::share::{fnv, Exportable, FNV};

/// Why an NCCL step failed; a refusal before NCCL was called changed nothing.
///
/// ```
/// # use gpu_aligned::nccl::NcclError;
/// assert_eq!(NcclError::Length(8, 4).to_string(), "Length(8, 4)");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum NcclError {
    /// No `libnccl.so` to load (cudarc does not look for `libnccl.so.2`).
    NoLibrary,
    /// NCCL's call and result.
    Nccl(&'static str, sys::ncclResult_t),
    /// The arena or the driver refused.
    Arena(ArenaError<CudaError>),
    /// Windows need a growing arena other processes can map
    /// ([`Share::Processes`](crate::share::Share::Processes)): NCCL exports a window's memory to
    /// its peers, even within one process.
    NotExportable,
    /// The arena is registered with another live communicator.
    OtherComm,
    /// These ranks' fingerprints differ from rank 0's; nothing was registered.
    Asymmetric(Vec<usize>),
    /// The buffer (address, bytes) crosses a window's end, or only one buffer is in a window.
    Window(u64, usize),
    /// The receive buffer's length (expected, given).
    Length(usize, usize),
}

impl fmt::Display for NcclError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl std::error::Error for NcclError {}

impl<E: Into<ArenaError<CudaError>>> From<E> for NcclError {
    fn from(error: E) -> Self {
        NcclError::Arena(error.into())
    }
}

fn check(op: &'static str, r: sys::ncclResult_t) -> Result<(), NcclError> {
    let ok = r == sys::ncclResult_t::ncclSuccess;
    ok.then_some(()).ok_or(NcclError::Nccl(op, r))
}

/// `calls` between `ncclGroupStart` and `ncclGroupEnd`, so that one thread can drive several
/// ranks' blocking steps (initialisation, registration) without deadlocking.
fn group(calls: impl FnOnce() -> Result<(), NcclError>) -> Result<(), NcclError> {
    // SAFETY: no arguments; NCCL keeps the group per thread, ended below whatever `calls` did.
    check("ncclGroupStart", unsafe { sys::ncclGroupStart() })?;
    let inside = calls();
    // SAFETY: as above.
    inside.and(check("ncclGroupEnd", unsafe { sys::ncclGroupEnd() }))
}

/// Whether NCCL can be loaded, asked before cudarc's first NCCL call (`Id::new()`) would panic
/// without it.
///
/// ```
/// match gpu_aligned::nccl::probe() {
///     Ok(()) => println!("NCCL loads"),
///     Err(why) => println!("no collectives: {why}"),
/// }
/// ```
///
/// # Errors
///
/// [`NcclError::NoLibrary`]: no library under the names cudarc tries (`libnccl.so`, not NCCL's
/// own `libnccl.so.2`: link one to the other, `docs/NCCL.md`).
pub fn probe() -> Result<(), NcclError> {
    // SAFETY: loads NCCL by cudarc's names, as its first call would; dropped at once.
    let load = |name| unsafe { libloading::Library::new(format!("libnccl.so{name}")) };
    let names = ["", ".13", ".12", ".11", ".10", ".9", ".1"];
    let found = names.into_iter().find_map(|name| load(name).ok());
    found.map(drop).ok_or(NcclError::NoLibrary)
}

/// One rank's NCCL communicator; it owns its windows (address, bytes, handle) and keeps the
/// memory under them mapped until they are deregistered, when it drops (`docs/NCCL.md`).
///
/// ```no_run
/// # use gpu_aligned::backend::cuda::cudarc::{driver::CudaContext, nccl::{sys::ncclRedOp_t, Id}};
/// # use gpu_aligned::{arena::{ArenaOptions, GrowthPolicy}, nccl::{rendezvous, Comm}, share::Share};
/// # let growth = GrowthPolicy::up_to(1 << 30);
/// let stream = CudaContext::new(0)?.new_stream()?; // one rank per process: rank 0 of 1 here
/// let mut comm = Comm::init(&[stream.clone()], 0, 1, Id::new().unwrap())?.remove(0);
/// let options = ArenaOptions::new().min_align(4096).growth(growth).share(Share::Processes);
/// let mut arena = options.device(&stream, 2 << 20)?;
/// let (x, mut y) = (arena.alloc_from(&[1.0f32; 256])?, arena.alloc_zeros::<f32>(256)?);
/// rendezvous(&mut [(&mut comm, &arena, &[&x, &y])])?; // every rank, same arrays: registered
/// let (input, mut out) = (arena.view(&x, .., &stream)?, arena.view_mut(&mut y, .., &stream)?);
/// comm.all_reduce(&input, &mut out, ncclRedOp_t::ncclSum)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Comm {
    raw: sys::ncclComm_t,
    stream: Arc<CudaStream>,
    world: usize,
    /// Sorted by address.
    windows: Vec<(u64, usize, sys::ncclWindow_t)>,
    /// Arena buffers dropped while registered, unmapped after the windows go.
    kept: Arc<Kept>,
}

// SAFETY: NCCL lets any thread call a communicator, one call at a time; a `Comm` moved to another
// thread is used there alone (it is not `Sync`).
unsafe impl Send for Comm {}

impl Comm {
    /// Ranks `first..` of `world` on `streams` (one per device), initialised in one group: a
    /// process's ranks, or all of them (`first` 0). `id` is `Id::new()` of one rank, sent to all.
    ///
    /// ```no_run
    /// # use gpu_aligned::backend::cuda::cudarc::{driver::CudaContext, nccl::Id};
    /// let streams = [CudaContext::new(0)?.new_stream()?, CudaContext::new(1)?.new_stream()?];
    /// let comms = gpu_aligned::nccl::Comm::init(&streams, 0, 2, Id::new().unwrap())?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`NcclError::NoLibrary`] (see [`probe`]); NCCL's or the driver's refusal.
    pub fn init(
        streams: &[Arc<CudaStream>],
        first: usize,
        world: usize,
        id: Id,
    ) -> Result<Vec<Comm>, NcclError> {
        probe()?;
        let id = sys::ncclUniqueId {
            internal: *id.internal(),
        };
        let mut comms = Vec::new();
        group(|| {
            for (rank, stream) in (first as i32..).zip(streams) {
                stream.context().bind_to_thread()?;
                let mut raw = null_mut();
                // SAFETY: `raw` is a live local, which NCCL sets before it returns.
                let r = unsafe { sys::ncclCommInitRank(&mut raw, world as i32, id, rank) };
                check("ncclCommInitRank", r)?;
                let (stream, kept) = (Arc::clone(stream), Arc::default());
                comms.push(Comm {
                    raw,
                    stream,
                    world,
                    windows: Vec::new(),
                    kept,
                });
            }
            Ok(())
        })?;
        Ok(comms)
    }

    /// `recv` = `op` over every rank's `send`, on the communicator's stream. A process's ranks
    /// call it between cudarc's `nccl::group_start()` and `group_end()`.
    ///
    /// ```no_run
    /// # use gpu_aligned::backend::cuda::cudarc::{driver::CudaContext, nccl::{sys::ncclRedOp_t, Id}};
    /// let stream = CudaContext::new(0)?.new_stream()?;
    /// let comm = gpu_aligned::nccl::Comm::init(&[stream.clone()], 0, 1, Id::new().unwrap())?;
    /// let (x, mut y) = (stream.clone_htod(&[2.0f32; 4])?, stream.alloc_zeros::<f32>(4)?);
    /// comm[0].all_reduce(&x, &mut y, ncclRedOp_t::ncclMax)?; // cudarc slices: no window
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`NcclError::Length`]; [`NcclError::Window`] unless both buffers lie wholly in windows or
    /// both outside; NCCL's refusal.
    pub fn all_reduce<T: NcclType, S: DevicePtr<T>, R: DevicePtrMut<T>>(
        &self,
        send: &S,
        recv: &mut R,
        op: sys::ncclRedOp_t,
    ) -> Result<(), NcclError> {
        self.collective(send, recv, Some(op))
    }

    /// Every rank's `send` into `recv` (`world` times as long) in rank order, as
    /// [`all_reduce`](Comm::all_reduce).
    ///
    /// ```no_run
    /// # use gpu_aligned::backend::cuda::cudarc::{driver::CudaContext, nccl::Id};
    /// # let stream = CudaContext::new(0)?.new_stream()?;
    /// # let comm = gpu_aligned::nccl::Comm::init(&[stream.clone()], 0, 1, Id::new().unwrap())?;
    /// let (x, mut all) = (stream.clone_htod(&[1u32; 4])?, stream.alloc_zeros::<u32>(4)?);
    /// comm[0].all_gather(&x, &mut all)?; // `all` holds world (1) times 4
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`all_reduce`](Comm::all_reduce).
    pub fn all_gather<T: NcclType, S: DevicePtr<T>, R: DevicePtrMut<T>>(
        &self,
        send: &S,
        recv: &mut R,
    ) -> Result<(), NcclError> {
        self.collective(send, recv, None)
    }

    /// An all-reduce by `op`, or an all-gather, after checking lengths and windows.
    fn collective<T: NcclType, S: DevicePtr<T>, R: DevicePtrMut<T>>(
        &self,
        send: &S,
        recv: &mut R,
        op: Option<sys::ncclRedOp_t>,
    ) -> Result<(), NcclError> {
        let (n, size) = (send.len(), core::mem::size_of::<T>());
        let expected = n.saturating_mul(if op.is_some() { 1 } else { self.world });
        if recv.len() != expected {
            return Err(NcclError::Length(expected, recv.len()));
        }
        let (s, _s) = send.device_ptr(&self.stream);
        let (r, _r) = recv.device_ptr_mut(&self.stream);
        if self.in_window(s, n * size)? != self.in_window(r, expected * size)? {
            return Err(NcclError::Window(s, n * size));
        }
        let (ty, raw, stream) = (T::as_nccl_type(), self.raw, self.stream.cu_stream() as _);
        let (s, r) = (s as *const c_void, r as *mut c_void);
        // SAFETY: `n` elements at `s`, `expected` at `r`, both live for the views' borrows and
        // ordered on `stream` by them; NCCL reads and writes nothing else.
        let result = unsafe {
            match op {
                Some(op) => sys::ncclAllReduce(s, r, n, ty, op, raw, stream),
                None => sys::ncclAllGather(s, r, n, ty, raw, stream),
            }
        };
        check("collective", result)
    }

    /// Whether the bytes lie in a window: wholly (`true`), not at all (`false`), or across a
    /// window's end (refused: NCCL finds a window by a buffer's start alone).
    fn in_window(&self, address: u64, bytes: usize) -> Result<bool, NcclError> {
        let end = address.saturating_add(bytes as u64);
        let last = self.windows.partition_point(|w| w.0 < end).checked_sub(1);
        let Some(&(start, len, _)) = last.map(|i| &self.windows[i]) else {
            return Ok(false);
        };
        match (start <= address, start + len as u64) {
            (true, window_end) if end <= window_end => Ok(true),
            (_, window_end) if window_end <= address => Ok(false),
            _ => Err(NcclError::Window(address, bytes)),
        }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        // SAFETY: our stream's handle, alive while `self.stream` is.
        let idle = unsafe { cu::cuStreamQuery(self.stream.cu_stream()) };
        if idle == cu::CUresult::CUDA_SUCCESS {
            // Nothing of ours uses the windows; deregistering is local (NCCL 2.28 to 2.30).
            for (.., window) in self.windows.drain(..) {
                // SAFETY: a window of this communicator, deregistered once.
                let _ = unsafe { sys::ncclCommWindowDeregister(self.raw, window) };
            }
        }
        // SAFETY: our communicator, ended once; local, it never waits for another rank (and
        // `kept` unmaps what it holds after).
        let _ = unsafe { sys::ncclCommAbort(self.raw) };
    }
}

/// The collective step every rank calls (a process: for all its ranks at once, each with its
/// communicator, arena and the arrays that must lie at the same offsets on every rank) before
/// collectives over those arrays, and after an arena grew: all-gathers a fingerprint of each
/// rank's arena (chunk size, chunks mapped and registered) and arrays (element layout, length,
/// offset); when all agree, registers the chunks mapped since the last rendezvous as symmetric
/// windows, in one group, and pins them to the communicator.
///
/// # Errors
///
/// [`NcclError::Asymmetric`] on every rank when fingerprints differ; a rank that cannot take part
/// ([`NcclError::NotExportable`], [`NcclError::OtherComm`], a stale array) gets its own error and
/// makes the others' differ; NCCL's or the driver's refusal.
pub fn rendezvous(
    parts: &mut [(&mut Comm, &Arena<CudaBackend>, &[&dyn Exportable])],
) -> Result<(), NcclError> {
    let (mut gathered, mut new) = (Vec::with_capacity(parts.len()), Vec::new());
    for (part, (comm, arena, arrays)) in parts.iter().enumerate() {
        let mut chunk = |address, bytes| new.push((part, comm.raw, address, bytes, null_mut()));
        let own = fingerprint(comm, arena, arrays, &mut chunk);
        let mine = [*own.as_ref().unwrap_or(&u64::MAX)];
        let send = comm.stream.clone_htod(&mine)?;
        gathered.push((own, send, comm.stream.alloc_zeros::<u64>(comm.world)?));
    }
    group(|| {
        let mut each = parts.iter().zip(gathered.iter_mut());
        each.try_for_each(|((comm, ..), (_, send, all))| comm.all_gather(send, all))
    })?;
    for ((comm, ..), (own, _, all)) in parts.iter().zip(gathered) {
        let all = comm.stream.clone_dtoh(&all)?;
        own?;
        let differ: Vec<usize> = (0..all.len()).filter(|&r| all[r] != all[0]).collect();
        if !differ.is_empty() {
            return Err(NcclError::Asymmetric(differ));
        }
    }
    // NCCL writes each window at the group's end: `new` does not move until then.
    let result = group(|| {
        for (_, comm, address, bytes, window) in new.iter_mut() {
            // SAFETY: a mapped chunk of a live arena, pinned below so that it stays mapped until
            // the window is deregistered; `window` outlives the group. 1: NCCL_WIN_COLL_SYMMETRIC.
            let r = unsafe { sys::ncclCommWindowRegister(*comm, *address as _, *bytes, window, 1) };
            check("ncclCommWindowRegister", r)?;
        }
        Ok(())
    });
    for (part, (comm, arena, _)) in parts.iter_mut().enumerate() {
        let mine = new.iter().filter(|w| w.0 == part && !w.4.is_null());
        let before = comm.windows.len();
        comm.windows
            .extend(mine.map(|&(.., at, bytes, window)| (at, bytes, window)));
        comm.windows.sort_unstable_by_key(|w| w.0);
        if let Some(vm) = arena.backend().mapping() {
            let registered = vm.pinned().1 + comm.windows.len() - before;
            *vm.pin.lock().unwrap_or_else(PoisonError::into_inner) =
                (Arc::downgrade(&comm.kept), registered);
        }
    }
    result
}

/// The rank's fingerprint, or why it cannot take part; `chunk` gets each chunk to register.
fn fingerprint(
    comm: &Comm,
    arena: &Arena<CudaBackend>,
    arrays: &[&dyn Exportable],
    chunk: &mut dyn FnMut(u64, usize),
) -> Result<u64, NcclError> {
    let vm = arena
        .backend()
        .mapping()
        .filter(|vm| vm.sharing().processes);
    let vm = vm.ok_or(NcclError::NotExportable)?;
    let (keeper, registered) = vm.pinned();
    if keeper.is_some_and(|keeper| !Arc::ptr_eq(&keeper, &comm.kept)) {
        return Err(NcclError::OtherComm);
    }
    let chunks = vm.chunks();
    for new in &chunks[registered..] {
        chunk(vm.base_address() + new.offset as u64, new.size);
    }
    let sizes: Vec<usize> = chunks.iter().map(|c| c.size).collect();
    let mut hash = fnv(format!("{:?}", (sizes, registered)).as_bytes(), FNV);
    for array in arrays {
        let (span, layout) = array.entry(arena, SEALED)?;
        let words = [span.offset, span.len as u64, layout].map(u64::to_le_bytes);
        hash = fnv(&words.concat(), hash);
    }
    Ok(hash)
}
