//! Why a device operation failed, and which driver errors destroy the context.

use core::fmt;

use cudarc::driver::{sys, DriverError};

/// Driver errors after which the context is unusable: CUDA documents each as leaving "the process
/// in an inconsistent state" so that "any further CUDA work will return the same error".
pub(super) fn is_sticky(error: DriverError) -> bool {
    use sys::CUresult::*;
    matches!(
        error.0,
        CUDA_ERROR_ECC_UNCORRECTABLE
            | CUDA_ERROR_ILLEGAL_ADDRESS
            | CUDA_ERROR_LAUNCH_TIMEOUT
            | CUDA_ERROR_ASSERT
            | CUDA_ERROR_HARDWARE_STACK_ERROR
            | CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CUDA_ERROR_MISALIGNED_ADDRESS
            | CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CUDA_ERROR_INVALID_PC
            | CUDA_ERROR_LAUNCH_FAILED
            | CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

/// Why a device operation failed.
///
/// ```
/// use gpu_aligned::backend::cuda::CudaError;
///
/// let error = CudaError::ZeroLength;
/// assert_eq!(error.to_string(), "a device buffer, reservation or chunk needs at least one byte");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CudaError {
    /// The driver refused an operation.
    Driver {
        /// What the backend was doing.
        op: &'static str,
        /// The driver's error code.
        error: DriverError,
    },
    /// An earlier sticky fault destroyed the context; the backend does no
    /// more device work (see the module docs).
    Poisoned {
        /// The fault that destroyed the context.
        first: DriverError,
    },
    /// The device buffer's start is not aligned to what the arena needs.
    BaseMisaligned {
        /// The buffer's device address.
        base: u64,
        /// The alignment required.
        required: usize,
    },
    /// A device buffer, reservation or chunk of zero bytes was asked for.
    ZeroLength,
    /// A stream of another context than the buffer's was named, and the
    /// arena does not grant its device this access.
    ForeignStream,
    /// Sharing with other devices or processes was refused, or the peer
    /// process broke the protocol: why.
    Sharing(&'static str),
    /// The socket to the peer process failed.
    Socket(std::io::ErrorKind),
    /// The device does not support virtual memory management, which growing device memory needs.
    VmUnsupported,
    /// The chunk size is not a multiple of the device's allocation granularity.
    ChunkNotMultiple {
        /// The chunk size asked for.
        chunk: usize,
        /// The granularity it must be a multiple of.
        granularity: usize,
    },
    /// Growth past the end of the reserved range of device addresses.
    BeyondReservation {
        /// The mapped length asked for.
        len: usize,
        /// The reservation's length.
        reserved: usize,
    },
    /// A length that does not fit the host's `usize`, or overflows when rounded up to whole chunks.
    TooLarge {
        /// The length asked for.
        len: usize,
    },
    /// A byte range outside the array it was said to belong to (the arena
    /// checks every range first, so only a broken caller sees this).
    OutOfRange {
        /// First byte, from the start of the buffer.
        offset: u64,
        /// Bytes in the range.
        len: usize,
    },
    /// `op` would wait for the device, allocate or map device memory, or query an event, while the
    /// arena's stream is being captured into a graph
    /// ([`Arena::capture`](crate::arena::Arena::capture)): any of those would end the capture.
    /// Nothing was done, and the capture goes on.
    Capturing {
        /// What was refused.
        op: &'static str,
    },
    /// The CUDA driver's library (`libcuda.so.1`, `nvcuda.dll`) does not load: no NVIDIA driver is
    /// installed, or it is not on the loader's path ([`probe`](super::probe)).
    NoDriver,
    /// The driver is there and sees no CUDA device ([`probe`](super::probe)).
    NoDevice,
    /// A captured graph was launched after its arena was dropped or reset:
    /// the bytes it uses are no longer its arrays'.
    GraphOrphaned,
}

impl fmt::Display for CudaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CudaError::Driver { op, error } => {
                write!(f, "CUDA driver error in {op}: {:?}", error.0)
            }
            CudaError::Poisoned { first } => write!(
                f,
                "the CUDA context was destroyed by an earlier fault ({:?}); \
                 drop the arena and create a new context",
                first.0
            ),
            CudaError::BaseMisaligned { base, required } => write!(
                f,
                "device buffer at {base:#x} is not aligned to {required} bytes"
            ),
            CudaError::ZeroLength => {
                f.write_str("a device buffer, reservation or chunk needs at least one byte")
            }
            CudaError::ForeignStream => {
                f.write_str("the stream belongs to another context than the device buffer")
            }
            CudaError::Sharing(why) => write!(f, "cannot share device memory: {why}"),
            CudaError::Socket(kind) => write!(f, "the socket to the peer failed: {kind}"),
            CudaError::NoDriver => f.write_str("no CUDA driver: its library does not load"),
            CudaError::NoDevice => f.write_str("the CUDA driver sees no device"),
            CudaError::VmUnsupported => {
                f.write_str("the device does not support CUDA virtual memory management")
            }
            CudaError::ChunkNotMultiple { chunk, granularity } => write!(
                f,
                "chunk size {chunk} is not a multiple of the device's allocation \
                 granularity {granularity}"
            ),
            CudaError::BeyondReservation { len, reserved } => write!(
                f,
                "cannot map {len} bytes of a reservation of {reserved} bytes"
            ),
            CudaError::TooLarge { len } => {
                write!(f, "{len} bytes do not fit in whole chunks on this host")
            }
            CudaError::OutOfRange { offset, len } => write!(
                f,
                "{len} bytes at offset {offset} do not lie inside the array"
            ),
            CudaError::Capturing { op } => write!(
                f,
                "{op} cannot run while the arena's stream is being captured"
            ),
            CudaError::GraphOrphaned => {
                f.write_str("the graph's arena was dropped or reset: it cannot be launched")
            }
        }
    }
}

// `Display` names the driver's error code (what a `{error}` alone should show; through the code's
// own `Debug`, since `DriverError`'s asks the driver for a description, and panics where there is
// no driver); `source` hands over the driver's error too, for reporters that walk the chain.
impl std::error::Error for CudaError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CudaError::Driver { error, .. } | CudaError::Poisoned { first: error } => Some(error),
            _ => None,
        }
    }
}

/// The error of a cudarc call of your own, so that `?` works on cudarc calls in a function that
/// returns a [`CudaError`] (or an [`ArenaError<CudaError>`](crate::arena::ArenaError)).
///
/// ```no_run
/// use gpu_aligned::arena::{Arena, ArenaError};
/// use gpu_aligned::backend::cuda::cudarc::driver::CudaContext;
/// use gpu_aligned::backend::cuda::CudaError;
///
/// fn upload(weights: &[f32]) -> Result<Vec<f32>, ArenaError<CudaError>> {
///     let stream = CudaContext::new(0)?.default_stream(); // cudarc's DriverError
///     let mut arena = Arena::device(&stream, 1 << 20)?;   // the arena's error
///     let mut array = arena.alloc::<f32>(weights.len())?;
///     arena.write(&mut array, .., weights)?;
///     arena.to_vec(&array)
/// }
/// # upload(&[1.0]).unwrap();
/// ```
impl From<DriverError> for CudaError {
    fn from(error: DriverError) -> Self {
        CudaError::driver("a cudarc call")(error)
    }
}

impl CudaError {
    /// The driver's refusal of `op`, for `map_err`.
    pub(crate) fn driver(op: &'static str) -> impl Fn(DriverError) -> CudaError {
        move |error| CudaError::Driver { op, error }
    }
}
