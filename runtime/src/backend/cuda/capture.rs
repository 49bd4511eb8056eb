//! What the backend does while its stream is captured into a CUDA graph: it notes the arrays
//! touched, orders nothing against other streams (an event from outside a capture ends it, one from
//! inside can never be waited on again), and keeps uploaded host bytes as long as the graph.

use std::boxed::Box;
use std::sync::{Arc, Mutex, PoisonError};
use std::vec;
use std::vec::Vec;

use cudarc::driver::{result, sys, CudaStream, DriverError};

use super::buffer::CudaBackend;
use super::error::CudaError;
use crate::backend::Span;

/// The capture under way on the backend's stream.
#[derive(Debug)]
pub(super) struct CaptureLog {
    stream: Arc<CudaStream>,
    /// The arrays touched, by span (an empty array touches nothing).
    touched: Mutex<Vec<Span>>,
    /// Host bytes uploaded inside the capture.
    staged: Mutex<Vec<Box<[u8]>>>,
}

impl CaptureLog {
    /// Notes that the capture uses `array`.
    pub(super) fn touch(&self, array: Span) {
        if array.len != 0 {
            let mut touched = self.touched.lock().unwrap_or_else(PoisonError::into_inner);
            touched.push(array);
        }
    }
}

/// What a finished capture leaves: the graph, the arrays it touched and the host bytes it reads.
pub(crate) struct EndedCapture {
    /// The graph; an error when the capture was invalidated or could not be instantiated.
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
            touched: Mutex::new(Vec::new()),
            staged: Mutex::new(Vec::new()),
        });
        Ok(())
    }

    /// Ends the capture and instantiates the graph.
    pub(crate) fn end_capture(&mut self) -> Result<EndedCapture, CudaError> {
        let log = self.capture.take().ok_or(CudaError::Capturing {
            op: "ending no capture",
        })?;
        let touched = log
            .touched
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
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

    /// Copies `src` into a buffer that lives as long as the graph, and calls `upload` with it:
    /// inside a capture, a copy from host memory reads that memory again at every replay.
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

/// A captured graph and its executable. Owned here rather than as cudarc's `CudaGraph` because the
/// graph is pruned before it is instantiated (see [`prune`]).
#[derive(Debug)]
pub(crate) struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
    stream: Arc<CudaStream>,
}

// SAFETY: graph handles may be used from any thread, one call at a time (CUDA's graph thread-safety
// rules); `Graph` is not `Sync`, and every call on it takes `&self` of its single owner.
unsafe impl Send for Graph {}

/// Ends the capture under way on `stream` and destroys what it recorded, for a capture whose
/// backend is out of reach: a global-mode capture must not outlive its step.
pub(crate) fn abandon_capture(stream: &CudaStream) {
    let context = stream.context();
    if context.bind_to_thread().is_err() {
        return;
    }
    // SAFETY: `stream` is live (borrowed); ending a capture that is not
    // under way is an error the driver returns, not undefined behaviour.
    if let Ok(graph) = unsafe { result::stream::end_capture(stream.cu_stream()) } {
        if !graph.is_null() {
            // SAFETY: the graph the capture made, ours alone, destroyed once, here.
            context.record_err(unsafe { result::graph::destroy(graph) });
        }
    }
}

impl Graph {
    /// Launches the executable on the stream it was captured on.
    pub(crate) fn launch(&self) -> Result<(), DriverError> {
        self.stream.context().bind_to_thread()?;
        // SAFETY: `exec` is live (destroyed only in `drop`), and so is the stream (held).
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
        // SAFETY: `stream` is live and being captured (begun in `begin_capture`).
        let ended = unsafe { result::stream::end_capture(stream.cu_stream()) };
        let graph = self.driver("cuStreamEndCapture", ended)?;
        if graph.is_null() {
            return Err(CudaError::Capturing {
                op: "a capture that recorded no graph",
            });
        }
        let flags = sys::CUgraphInstantiate_flags(0);
        // SAFETY: `graph` is the live graph the capture made, ours alone. Pruning only speeds
        // replays up: a graph it fails on is instantiated as captured.
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

/// Removes every edge of `graph` that a longer path implies, and returns how many.
///
/// Why: cudarc's waits on events add shortcut edges the stream's order already implies, and CUDA
/// replays a graph with them slower. A transitive reduction keeps every path.
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
    // SAFETY: `from` and `to` have room for `edges` nodes each; no edge data is asked for.
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
