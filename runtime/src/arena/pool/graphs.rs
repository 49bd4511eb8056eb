//! The graph-hold layer, and `Arena::capture`: a graph replays over arrays dropped long before, so
//! an array given back during a capture, or one a live graph touched, is held until the graph is
//! dropped and its last replay done. A graph outlived by its arena (or a reset) cannot launch.

use alloc_crate::boxed::Box;
use alloc_crate::sync::Arc;
use alloc_crate::vec::Vec;
use core::sync::atomic::{AtomicU8, Ordering};

use super::{Ask, Fate, Offsets, Pool};
use crate::alloc::Allocation;
use crate::arena::{returns::Returned, ArenaError, ArenaResult};
use crate::backend::StreamOrder;
use crate::sanitizer::ArrayInfo;

const DROPPED: u8 = 1;
/// Set when the arena is dropped or reset: the graph must not launch.
const ORPHANED: u8 = 2;
const LAUNCHING: u8 = 4;

/// What a graph and its arena share; launching and orphaning exclude each other.
#[derive(Debug, Default)]
pub(crate) struct GraphLife {
    state: AtomicU8,
}

impl GraphLife {
    pub(crate) fn dropped(&self) -> bool {
        self.state.load(Ordering::Acquire) & DROPPED != 0
    }

    #[cfg(feature = "cuda")]
    pub(crate) fn mark_dropped(&self) {
        self.state.fetch_or(DROPPED, Ordering::Release);
    }

    /// Starts a launch; `false` once the arena is gone.
    #[cfg(feature = "cuda")]
    pub(crate) fn enter_launch(&self) -> bool {
        let launching = |state| (state & ORPHANED == 0).then_some(state | LAUNCHING);
        let entered = self
            .state
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, launching);
        entered.is_ok()
    }

    #[cfg(feature = "cuda")]
    pub(crate) fn leave_launch(&self) {
        self.state.fetch_and(!LAUNCHING, Ordering::Release);
    }

    /// Forbids launches, waiting for one being queued.
    fn orphan(&self) {
        self.state.fetch_or(ORPHANED, Ordering::AcqRel);
        while self.state.load(Ordering::Acquire) & LAUNCHING != 0 {
            core::hint::spin_loop();
        }
    }
}

struct Held<B: StreamOrder> {
    life: Arc<GraphLife>,
    /// Offsets of the arrays the capture touched, sorted.
    touched: Vec<u64>,
    /// Arrays given back that the graph may still use.
    arrays: Vec<Returned<B>>,
    /// Host bytes the graph's copies read.
    #[allow(dead_code)]
    staged: Vec<Box<[u8]>>,
    fence: Option<B::Fence>,
}

impl<B: StreamOrder> Held<B> {
    /// Whether the dropped graph's last replay finished (waited for if `wait`).
    fn replayed(&mut self, backend: &mut B, wait: bool) -> bool {
        if self.fence.is_none() {
            let Ok(fence) = backend.stream_fence() else {
                return false;
            };
            self.fence = fence;
        }
        match &self.fence {
            Some(fence) if wait => backend.wait_fence(fence).is_ok(),
            Some(fence) => backend.fence_passed(fence).unwrap_or(false),
            None => true,
        }
    }
}

/// The graph-hold layer. See the [module docs](self).
pub(in crate::arena) struct Graphs<B: StreamOrder, L> {
    capturing: bool,
    during: Vec<Returned<B>>,
    held: Vec<Held<B>>,
    /// Arrays the backend failed to retire, for the next call.
    unretired: Vec<Returned<B>>,
    pub(super) lower: L,
}

impl<B: StreamOrder, L> Graphs<B, L> {
    /// Nothing is held: no capture, no graph.
    #[inline(always)]
    pub(in crate::arena) fn idle(&self) -> bool {
        !self.capturing && self.held.is_empty()
    }

    pub(in crate::arena) fn capturing(&self) -> bool {
        self.capturing
    }

    /// Whether arrays of dropped graphs wait for their last replay.
    pub(in crate::arena) fn dropped(&self) -> bool {
        self.held.iter().any(|held| held.life.dropped())
    }

    pub(in crate::arena) fn stop_launches(&self) {
        for held in &self.held {
            held.life.orphan();
        }
    }

    /// A reset: no graph launches, and their arrays are forgotten.
    pub(in crate::arena) fn orphan_all(&mut self) {
        self.stop_launches();
        self.held.clear();
        self.during.clear();
        self.unretired.clear();
    }
}

impl<B: StreamOrder, L: Pool<B>> Graphs<B, L> {
    pub(super) fn new(lower: L) -> Self {
        Graphs {
            capturing: false,
            during: Vec::new(),
            held: Vec::new(),
            unretired: Vec::new(),
            lower,
        }
    }

    /// [`Pool::release`] once a capture is under way or a graph lives.
    #[cold]
    #[inline(never)]
    fn release_held(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
        fate: Fate,
    ) -> ArenaResult<(), B> {
        // A stale or foreign block is refused below.
        if self.lower.offsets().allocator.check_handle(&block).is_ok() {
            if self.capturing {
                self.during.push((block, core::mem::take(tracking)));
                return Ok(());
            }
            let touched = |held: &&mut Held<B>| held.touched.binary_search(&block.offset()).is_ok();
            if let Some(held) = self.held.iter_mut().find(touched) {
                held.arrays.push((block, core::mem::take(tracking)));
                return Ok(());
            }
        }
        self.lower.release(backend, block, tracking, fate)
    }

    /// Gives back the arrays of graphs replayed for the last time; whether any came.
    pub(in crate::arena) fn release_finished(&mut self, backend: &mut B, wait: bool) -> bool {
        if self.capturing || self.held.is_empty() {
            return false;
        }
        let mut any = !self.unretired.is_empty();
        let unretired = core::mem::take(&mut self.unretired);
        self.return_all(backend, unretired);
        let mut index = 0;
        while let Some(held) = self.held.get_mut(index) {
            if !held.life.dropped() || !held.replayed(backend, wait) {
                index += 1;
                continue;
            }
            let held = self.held.swap_remove(index);
            self.return_all(backend, held.arrays);
            any = true;
        }
        any
    }

    /// Gives back arrays held for a graph.
    fn return_all(&mut self, backend: &mut B, arrays: Vec<Returned<B>>) {
        for (block, mut tracking) in arrays {
            let released = self.release(backend, block, &mut tracking, Fate::Keep);
            if let Err(ArenaError::Backend(_)) = released {
                self.unretired.push((block, tracking));
            }
        }
    }
}

impl<B: StreamOrder, L: Pool<B>> Pool<B> for Graphs<B, L> {
    #[inline(always)]
    fn take(&mut self, ask: Ask) -> Option<Allocation> {
        self.lower.take(ask)
    }

    #[inline(always)]
    fn reserve(
        &mut self,
        backend: &mut B,
        ask: Ask,
        array: impl Fn() -> ArrayInfo,
    ) -> ArenaResult<Allocation, B> {
        self.lower.reserve(backend, ask, array)
    }

    #[inline(always)]
    fn release(
        &mut self,
        backend: &mut B,
        block: Allocation,
        tracking: &mut B::Tracking,
        fate: Fate,
    ) -> ArenaResult<(), B> {
        if !self.idle() {
            return self.release_held(backend, block, tracking, fate);
        }
        self.lower.release(backend, block, tracking, fate)
    }

    #[inline(always)]
    fn release_unused(&mut self, backend: &mut B, blocks: &[Allocation]) {
        if self.idle() {
            return self.lower.release_unused(backend, blocks);
        }
        for &block in blocks {
            let tracking = &mut B::Tracking::default();
            let _ = self.release_held(backend, block, tracking, Fate::Keep);
        }
    }

    fn reclaim(&mut self, backend: &mut B, wait: bool) -> ArenaResult<bool, B> {
        let any = self.release_finished(backend, wait);
        Ok(self.lower.reclaim(backend, wait)? | any)
    }

    fn held(&self, each: &mut dyn FnMut(&Allocation)) {
        let held = self.held.iter().flat_map(|held| &held.arrays);
        let arrays = self.during.iter().chain(held).chain(&self.unretired);
        arrays.for_each(|(block, _)| each(block));
        self.lower.held(each);
    }

    pass_down!();
}

impl<B: StreamOrder, L> Drop for Graphs<B, L> {
    fn drop(&mut self) {
        self.stop_launches();
    }
}

#[cfg(feature = "cuda")]
mod device {
    use alloc_crate::sync::Arc;
    use alloc_crate::vec::Vec;
    use core::fmt;

    use cudarc::driver::DriverError;

    use super::{GraphLife, Held};
    use crate::arena::{Arena, ArenaError, ArenaResult};
    use crate::backend::cuda::Graph;
    use crate::backend::cuda::{CudaBackend, CudaError};
    use crate::backend::{Buffer as _, MoveBytes as _};

    /// A CUDA graph captured from a device arena's work ([`Arena::capture`]).
    pub struct CapturedGraph {
        graph: Graph,
        life: Arc<GraphLife>,
    }

    impl CapturedGraph {
        /// Replays the graph on the stream it was captured on (the arena's).
        ///
        /// # Errors
        ///
        /// [`CudaError::GraphOrphaned`] once its arena was dropped or reset; the driver's error.
        pub fn launch(&self) -> Result<(), CudaError> {
            self.while_arena_lives("cuGraphLaunch", Graph::launch)
        }

        /// Uploads the graph ahead of its first launch.
        ///
        /// # Errors
        ///
        /// As [`launch`](Self::launch).
        pub fn upload(&self) -> Result<(), CudaError> {
            self.while_arena_lives("cuGraphUpload", Graph::upload)
        }

        fn while_arena_lives(
            &self,
            op: &'static str,
            call: impl FnOnce(&Graph) -> Result<(), DriverError>,
        ) -> Result<(), CudaError> {
            if !self.life.enter_launch() {
                return Err(CudaError::GraphOrphaned);
            }
            let called = call(&self.graph);
            self.life.leave_launch();
            called.map_err(|error| CudaError::Driver { op, error })
        }
    }

    impl Drop for CapturedGraph {
        fn drop(&mut self) {
            self.life.mark_dropped();
        }
    }

    impl fmt::Debug for CapturedGraph {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.debug_struct("CapturedGraph")
                .field("dropped", &self.life.dropped())
                .finish_non_exhaustive()
        }
    }

    impl Arena<CudaBackend> {
        /// Captures the work `step` queues on the arena's stream into a CUDA graph, returned with
        /// `step`'s value. Inside `step` the arena works without ending the capture (it never
        /// grows, and holds every array given back); what cannot be captured (a download, a wait,
        /// growth) returns [`CudaError::Capturing`]. Work on other streams is not in the graph:
        /// order it before each launch (`stream.join(&other)`).
        ///
        /// ```no_run
        /// use gpu_aligned::arena::Arena;
        /// use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, LaunchConfig, PushKernelArg};
        /// use gpu_aligned::backend::cuda::cudarc::nvrtc::compile_ptx;
        ///
        /// let context = CudaContext::new(0)?;
        /// let stream = context.new_stream()?; // the legacy default stream cannot be captured
        /// let ptx = compile_ptx(r#"extern "C" __global__ void add(float* a, const float* b, unsigned n) {
        ///     unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
        ///     if (i < n) a[i] += b[i];
        /// }"#)?;
        /// let add = context.load_module(ptx)?.load_function("add")?;
        /// let mut arena = Arena::device(&stream, 1 << 20)?;
        /// let mut total = arena.alloc_zeros::<f32>(256)?;
        ///
        /// let (graph, ()) = arena.capture(|arena| {
        ///     let ones = arena.alloc_from(&[1.0f32; 256])?; // a temporary, uploaded in the graph
        ///     let (mut t, o) = (arena.view_mut(&mut total, .., &stream)?, arena.view(&ones, .., &stream)?);
        ///     let n = 256u32;
        ///     let mut launch = stream.launch_builder(&add);
        ///     launch.arg(&mut t).arg(&o).arg(&n);
        ///     // SAFETY: `add` touches elements [0, n) of two arrays of n elements.
        ///     unsafe { launch.launch(LaunchConfig::for_num_elems(n)) }?;
        ///     Ok(())
        /// })?; // `ones` was dropped: its bytes stay the graph's
        /// for _ in 0..10 {
        ///     graph.launch()?;
        /// }
        /// assert_eq!(arena.to_vec(&total)?, [10.0; 256]);
        /// # Ok::<(), Box<dyn std::error::Error>>(())
        /// ```
        ///
        /// # Errors
        ///
        /// `step`'s error, or the driver's (the capture could not begin, was invalidated, or cannot
        /// be instantiated); [`CudaError::Capturing`] inside a capture, or when `step` swaps the
        /// arena out. No graph is made then.
        pub fn capture<R>(
            &mut self,
            step: impl FnOnce(&mut Self) -> ArenaResult<R, CudaBackend>,
        ) -> ArenaResult<(CapturedGraph, R), CudaBackend> {
            if self.pool.capturing {
                return Err(ArenaError::Backend(CudaError::Capturing {
                    op: "a capture",
                }));
            }
            self.take_returns(); // while waiting is still legal
            self.backend.begin_capture().map_err(ArenaError::Backend)?;
            self.pool.capturing = true;
            self.rewatch(); // arrays dropped in the step stay the graph's regions
            let began = self.backend.base_address();
            let stream = Arc::clone(self.backend.stream());
            let stepped = step(self);
            if self.backend.base_address() != began {
                // The step swapped the capturing arena away: end its stream's capture here.
                drop(stepped);
                crate::backend::cuda::abandon_capture(&stream);
                return Err(ArenaError::Backend(CudaError::Capturing {
                    op: "swapping the arena out of its capture",
                }));
            }
            let ended = self.backend.end_capture();
            self.pool.capturing = false;
            let during = core::mem::take(&mut self.pool.during);
            let made = ended.and_then(|ended| Ok((ended.graph?, ended.touched, ended.staged)));
            let made = made.map_err(ArenaError::Backend);
            let (graph, touched, staged, value) = match (made, stepped) {
                (Ok((graph, touched, staged)), Ok(value)) => (graph, touched, staged, value),
                // The driver's error first, then the step's.
                (Err(error), _) | (_, Err(error)) => {
                    self.pool.return_all(&mut self.backend, during);
                    self.rewatch();
                    return Err(error);
                }
            };
            let mut touched: Vec<u64> = touched.iter().map(|span| span.offset).collect();
            touched.sort_unstable();
            touched.dedup();
            let life = Arc::new(GraphLife::default());
            self.pool.held.push(Held {
                life: Arc::clone(&life),
                touched,
                arrays: during,
                staged,
                fence: None,
            });
            Ok((CapturedGraph { graph, life }, value))
        }
    }
}

#[cfg(feature = "cuda")]
pub use device::CapturedGraph;
