//! What the backend does while its stream is being captured into a CUDA
//! graph (global mode): the arrays the capture touches get slices of their
//! own, whose events live only inside the capture, and host bytes uploaded
//! inside it are kept until the graph is gone.
//!
//! Why not the arrays' own slices: cudarc makes a stream wait on a slice's
//! events before each use and records them after. Inside a capture, waiting
//! on an event recorded outside it fails and ends the capture
//! (`CUDA_ERROR_STREAM_CAPTURE_ISOLATION`); and an event recorded inside a
//! capture cannot be waited on ever after (`CUDA_ERROR_INVALID_VALUE`
//! outside a capture, the end of any later capture inside one; measured on
//! an H100 with CUDA 13.0). So inside a capture every array is reached
//! through a fresh slice over its bytes, made on the capturing stream (its
//! events are recorded and waited on there only), and every such slice is
//! given up before the capture ends, while waiting on its events is still
//! legal. The arrays' own events are never touched by a capture.
//!
//! Host bytes copied to the device inside a capture are read again by every
//! replay, so [`CudaBackend::write`](crate::backend::MoveBytes::write) copies
//! them first into a buffer that lives as long as the graph.

use std::boxed::Box;
use std::collections::HashMap;
use std::ptr::NonNull;
use std::sync::{Arc, Mutex, PoisonError};
use std::vec;
use std::vec::Vec;

use cudarc::driver::{result, sys, CudaSlice, CudaStream, DriverError};

use super::buffer::CudaBackend;
use super::error::CudaError;
use crate::backend::Span;

/// The capture under way on the backend's stream.
#[derive(Debug)]
pub(super) struct CaptureLog {
    stream: Arc<CudaStream>,
    /// One slice per array touched, boxed so that references to it stay
    /// valid while the list grows; freed only through `&mut` of the
    /// backend (see [`CudaBackend::end_capture`]).
    slices: Mutex<HashMap<Span, NonNull<CudaSlice<u8>>>>,
    /// Slices over empty arrays, one per use: every empty array has an
    /// empty span, so a span does not name one (see `capture_slice_ptr`).
    empties: Mutex<Vec<NonNull<CudaSlice<u8>>>>,
    /// Host bytes uploaded inside the capture.
    staged: Mutex<Vec<Box<[u8]>>>,
}

// SAFETY: the pointers are owned boxes of `CudaSlice<u8>`, which is `Send`
// and `Sync`; they are reached through the mutex or, for the references
// handed out, under the rules of `CudaBackend::capture_slice`.
unsafe impl Send for CaptureLog {}
// SAFETY: as above.
unsafe impl Sync for CaptureLog {}

/// What a finished capture leaves: the graph, the arrays it touched and the
/// host bytes it reads.
pub(crate) struct EndedCapture {
    /// The graph; an error when the capture was invalidated or could not be
    /// instantiated.
    pub(crate) graph: Result<Graph, CudaError>,
    /// The arrays the capture touched.
    pub(crate) touched: Vec<Span>,
    /// Host bytes its copies read, to keep while the graph lives.
    pub(crate) staged: Vec<Box<[u8]>>,
}

impl CudaBackend {
    /// Whether the backend's stream is being captured.
    #[inline]
    pub(crate) fn capturing(&self) -> bool {
        self.capture.is_some()
    }

    /// Refuses `op` while a capture is under way.
    #[inline]
    pub(super) fn not_capturing(&self, op: &'static str) -> Result<(), CudaError> {
        match self.capture {
            Some(_) => Err(CudaError::Capturing { op }),
            None => Ok(()),
        }
    }

    /// Begins capturing the backend's stream in global mode.
    pub(crate) fn begin_capture(&mut self) -> Result<(), CudaError> {
        self.healthy()?;
        self.not_capturing("a capture")?;
        let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_GLOBAL;
        let begun = self.stream.begin_capture(mode);
        self.driver("cuStreamBeginCapture", begun)?;
        self.capture = Some(CaptureLog {
            stream: Arc::clone(&self.stream),
            slices: Mutex::new(HashMap::new()),
            empties: Mutex::new(Vec::new()),
            staged: Mutex::new(Vec::new()),
        });
        Ok(())
    }

    /// Gives up the capture's slices (their events waited on inside the
    /// capture, where that is legal), ends the capture and instantiates
    /// the graph.
    pub(crate) fn end_capture(&mut self) -> Result<EndedCapture, CudaError> {
        let log = self.capture.take().ok_or(CudaError::Capturing {
            op: "ending no capture",
        })?;
        let slices = log
            .slices
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let mut touched = Vec::with_capacity(slices.len());
        for (span, slice) in slices {
            // SAFETY: made by `Box::into_raw` in `capture_slice` and
            // handed out only under borrows of the backend, which `&mut
            // self` has ended; taken back exactly once, here.
            let slice = unsafe { Box::from_raw(slice.as_ptr()) };
            // The capturing stream waits on the slice's events (recorded in
            // this capture, or never) and they are destroyed; the bytes
            // stay the buffer's.
            let _interior = slice.leak();
            touched.push(span);
        }
        let empties = log
            .empties
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        for slice in empties {
            // SAFETY: as above; an empty array's slice holds no bytes, so
            // no graph holds an array for it.
            let slice = unsafe { Box::from_raw(slice.as_ptr()) };
            let _interior = slice.leak();
        }
        let staged = log
            .staged
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        let graph = self.instantiate(&log.stream);
        Ok(EndedCapture {
            graph,
            touched,
            staged,
        })
    }

    /// The capture's slice over `array`, made on first use. `None` when no
    /// capture is under way.
    ///
    /// # Safety
    ///
    /// `array` is the whole span of one live array, and the caller holds
    /// that array's tracking shared; for the slice as `&mut`
    /// ([`capture_slice_mut`](Self::capture_slice_mut)), exclusively. No
    /// two live arrays holding bytes share a span, and inside one capture no span is
    /// handed to a second array (the arena holds every array given back
    /// during a capture until the graph is gone), so the slices handed out
    /// follow the borrows of the arrays' trackings. (Empty arrays, whose
    /// spans are all empty, get a fresh slice at every call.)
    unsafe fn capture_slice_ptr(
        &self,
        array: Span,
    ) -> Option<Result<NonNull<CudaSlice<u8>>, CudaError>> {
        let log = self.capture.as_ref()?;
        let mut slices = log.slices.lock().unwrap_or_else(PoisonError::into_inner);
        // Empty arrays all have empty spans, so each use of one gets a
        // slice of its own: one shared by two arrays could be lent `&mut`
        // for one while lent for the other.
        let empty = array.len == 0;
        if let (false, Some(slice)) = (empty, slices.get(&array)) {
            return Some(Ok(*slice));
        }
        if !array.within(self.buffer_len()) {
            return Some(Err(CudaError::OutOfRange {
                offset: array.offset,
                len: array.len,
            }));
        }
        // `upgrade_device_ptr` unwraps its event creation (legal inside a
        // capture): make sure the context can create events.
        let probe = log.stream.context().new_event(None);
        if let Err(error) = self.driver("cuEventCreate", probe) {
            return Some(Err(error));
        }
        let address = self.base + array.offset;
        // SAFETY: `address .. address + len` lies inside the buffer (checked
        // above), whose bytes are initialised and valid as `u8`. The slice
        // is never dropped normally, only given up with `leak` (in
        // `end_capture`), so it never frees this interior pointer.
        let slice = unsafe { log.stream.upgrade_device_ptr::<u8>(address, array.len) };
        let slice = NonNull::from(Box::leak(Box::new(slice)));
        if empty {
            drop(slices);
            let mut empties = log.empties.lock().unwrap_or_else(PoisonError::into_inner);
            empties.push(slice);
        } else {
            slices.insert(array, slice);
        }
        Some(Ok(slice))
    }

    /// The capture's slice over `array` (see
    /// [`capture_slice_ptr`](Self::capture_slice_ptr)), or `None` when no
    /// capture is under way.
    ///
    /// # Safety
    ///
    /// As [`capture_slice_ptr`](Self::capture_slice_ptr), shared.
    pub(super) unsafe fn capture_slice(
        &self,
        array: Span,
    ) -> Option<Result<&CudaSlice<u8>, CudaError>> {
        // SAFETY: the caller keeps the promise.
        let made = unsafe { self.capture_slice_ptr(array) }?;
        Some(made.map(|slice| {
            // SAFETY: the box lives until `&mut self` (`end_capture`),
            // which the returned borrow prevents; shared, as the caller's
            // borrow of the array is.
            unsafe { slice.as_ref() }
        }))
    }

    /// As [`capture_slice`](Self::capture_slice), writable.
    ///
    /// # Safety
    ///
    /// As [`capture_slice_ptr`](Self::capture_slice_ptr), exclusive: the
    /// caller holds the array's tracking as `&mut`, so no other reference
    /// to this slice lives.
    #[allow(clippy::mut_from_ref)]
    pub(super) unsafe fn capture_slice_mut(
        &self,
        array: Span,
    ) -> Option<Result<&mut CudaSlice<u8>, CudaError>> {
        // SAFETY: the caller keeps the promise.
        let made = unsafe { self.capture_slice_ptr(array) }?;
        Some(made.map(|mut slice| {
            // SAFETY: as in `capture_slice`; exclusive by the caller's
            // promise.
            unsafe { slice.as_mut() }
        }))
    }

    /// Copies `src` into a buffer that lives as long as the graph, and
    /// calls `upload` with it: inside a capture, a copy from host memory
    /// reads that memory again at every replay.
    pub(super) fn staged<R>(&self, src: &[u8], upload: impl FnOnce(&[u8]) -> R) -> R {
        let Some(log) = self.capture.as_ref() else {
            return upload(src);
        };
        let kept: Box<[u8]> = src.into();
        let r = upload(&kept);
        // Moving the box keeps its bytes where they are.
        log.staged
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(kept);
        r
    }
}

/// A captured graph and its executable. Owned here rather than as cudarc's
/// `CudaGraph` because the graph is pruned before it is instantiated (see
/// [`prune`]).
#[derive(Debug)]
pub(crate) struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    stream: Arc<CudaStream>,
}

// SAFETY: graph handles may be used from any thread, one call at a time
// (CUDA's graph thread-safety rules); `Graph` is not `Sync`, and every
// call on it takes `&self` of its single owner.
unsafe impl Send for Graph {}

/// Ends the capture under way on `stream` and destroys what it recorded,
/// for a capture whose backend is out of reach (an arena swapped out of
/// its capture step): a stream capturing in global mode makes unrelated
/// CUDA calls of the whole process fail, so it must not outlive the step.
/// That backend keeps its log until it is dropped, when its own end of the
/// capture fails harmlessly.
pub(crate) fn abandon_capture(stream: &CudaStream) {
    let context = stream.context();
    if context.bind_to_thread().is_err() {
        return;
    }
    // SAFETY: `stream` is live (borrowed); ending a capture that is not
    // under way is an error the driver returns, not undefined behaviour.
    if let Ok(graph) = unsafe { result::stream::end_capture(stream.cu_stream()) } {
        if !graph.is_null() {
            // SAFETY: the graph the capture made, ours alone, destroyed
            // once, here.
            context.record_err(unsafe { result::graph::destroy(graph) });
        }
    }
}

impl Graph {
    /// Launches the executable on the stream it was captured on.
    pub(crate) fn launch(&self) -> Result<(), DriverError> {
        self.stream.context().bind_to_thread()?;
        // SAFETY: `exec` is live (destroyed only in `drop`), and so is the
        // stream (held).
        unsafe { result::graph::launch(self.exec, self.stream.cu_stream()) }
    }

    /// Uploads the executable ahead of its first launch.
    pub(crate) fn upload(&self) -> Result<(), DriverError> {
        self.stream.context().bind_to_thread()?;
        // SAFETY: as in `launch`.
        unsafe { result::graph::upload(self.exec, self.stream.cu_stream()) }
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        let context = self.stream.context();
        // SAFETY: both handles are live and owned here; destroyed once. A
        // launch still running completes first (the driver's promise).
        unsafe {
            context.record_err(result::graph::exec_destroy(self.exec));
            context.record_err(result::graph::destroy(self.graph));
        }
    }
}

impl CudaBackend {
    /// Ends the capture on `stream`, prunes the graph and instantiates it.
    fn instantiate(&self, stream: &Arc<CudaStream>) -> Result<Graph, CudaError> {
        let bound = stream.context().bind_to_thread();
        self.driver("cuCtxSetCurrent", bound)?;
        // SAFETY: `stream` is live and being captured (begun in
        // `begin_capture`).
        let ended = unsafe { result::stream::end_capture(stream.cu_stream()) };
        let graph = self.driver("cuStreamEndCapture", ended)?;
        if graph.is_null() {
            return Err(CudaError::Capturing {
                op: "a capture that recorded no graph",
            });
        }
        let flags = sys::CUgraphInstantiate_flags(0);
        // SAFETY: `graph` is the live graph the capture made, ours alone.
        // Pruning only speeds replays up: a graph it fails on is
        // instantiated as captured.
        let _pruned = unsafe { prune(graph) };
        // SAFETY: as above.
        let made = unsafe { result::graph::instantiate(graph, flags) };
        match self.driver("cuGraphInstantiate", made) {
            Ok(exec) => Ok(Graph {
                graph,
                exec,
                stream: Arc::clone(stream),
            }),
            Err(error) => {
                // SAFETY: as above; destroyed once, here.
                stream
                    .context()
                    .record_err(unsafe { result::graph::destroy(graph) });
                Err(error)
            }
        }
    }
}

/// Graphs larger than this are instantiated as captured: the pruning's
/// ancestor sets grow with the square of the node count.
const PRUNE_NODES: usize = 16_384;

/// Removes every edge of `graph` that a longer path implies, and returns
/// how many.
///
/// Why: cudarc makes the capturing stream wait on an array's events before
/// each use, and each such wait adds an edge from the node that last
/// recorded the event, although the stream's order already implies it. A
/// step captured from one stream then becomes a chain with many shortcut
/// edges, and CUDA replays such a graph slower than the plain chain (it
/// synchronises every node with several inputs); without the shortcuts the
/// graph is exactly the one captured over hand-made buffers. The order of
/// the work is unchanged: a transitive reduction keeps every path.
///
/// # Safety
///
/// `graph` is a live graph that no other thread uses.
unsafe fn prune(graph: sys::CUgraph) -> Result<usize, DriverError> {
    let mut count = 0;
    // SAFETY: a null array asks for the count.
    unsafe { sys::cuGraphGetNodes(graph, core::ptr::null_mut(), &mut count) }.result()?;
    if !(3..=PRUNE_NODES).contains(&count) {
        // Fewer than three nodes have no shortcut to remove.
        return Ok(0);
    }
    let mut nodes = vec![core::ptr::null_mut(); count];
    // SAFETY: `nodes` has room for `count` nodes.
    unsafe { sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count) }.result()?;
    nodes.truncate(count);
    let mut edges = 0;
    let (no_nodes, no_data) = (core::ptr::null_mut(), core::ptr::null_mut());
    // SAFETY: null arrays ask for the count.
    unsafe { sys::cuGraphGetEdges_v2(graph, no_nodes, no_nodes, no_data, &mut edges) }.result()?;
    if edges < 3 {
        return Ok(0);
    }
    let mut from = vec![core::ptr::null_mut(); edges];
    let mut to = vec![core::ptr::null_mut(); edges];
    // SAFETY: `from` and `to` have room for `edges` nodes each; no edge
    // data is asked for.
    unsafe {
        sys::cuGraphGetEdges_v2(
            graph,
            from.as_mut_ptr(),
            to.as_mut_ptr(),
            no_data,
            &mut edges,
        )
    }
    .result()?;
    from.truncate(edges);
    to.truncate(edges);
    let index = |node: sys::CUgraphNode| nodes.iter().position(|n| *n == node);
    let mut predecessors = vec![Vec::new(); count];
    let mut inputs = vec![0usize; count];
    let mut successors = vec![Vec::new(); count];
    for (&f, &t) in from.iter().zip(&to) {
        let (Some(f), Some(t)) = (index(f), index(t)) else {
            return Ok(0);
        };
        predecessors[t].push(f);
        successors[f].push(t);
        inputs[t] += 1;
    }
    // Ancestor sets in topological order (Kahn).
    let words = count.div_ceil(64);
    let mut ancestors = vec![0u64; count * words];
    let mut ready: Vec<usize> = (0..count).filter(|&v| inputs[v] == 0).collect();
    while let Some(v) = ready.pop() {
        for &u in &predecessors[v] {
            ancestors[v * words + u / 64] |= 1 << (u % 64);
            for word in 0..words {
                let inherited = ancestors[u * words + word];
                ancestors[v * words + word] |= inherited;
            }
        }
        for &w in &successors[v] {
            inputs[w] -= 1;
            if inputs[w] == 0 {
                ready.push(w);
            }
        }
    }
    let is_ancestor = |u: usize, of: usize| ancestors[of * words + u / 64] & (1 << (u % 64)) != 0;
    let (mut cut_from, mut cut_to) = (Vec::new(), Vec::new());
    for (v, preds) in predecessors.iter().enumerate() {
        for &u in preds {
            if preds.iter().any(|&w| w != u && is_ancestor(u, w)) {
                cut_from.push(nodes[u]);
                cut_to.push(nodes[v]);
            }
        }
    }
    if !cut_from.is_empty() {
        // SAFETY: every pair is an edge of `graph` (read above); no edge
        // data, as captured edges have none.
        unsafe {
            sys::cuGraphRemoveDependencies_v2(
                graph,
                cut_from.as_ptr(),
                cut_to.as_ptr(),
                core::ptr::null(),
                cut_from.len(),
            )
        }
        .result()?;
    }
    Ok(cut_from.len())
}
