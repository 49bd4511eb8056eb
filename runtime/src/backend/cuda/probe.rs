//! Whether a CUDA driver and a device are there, asked without panicking: cudarc panics when it
//! first needs the driver's library and cannot load it, so a program that should fall back to a
//! host arena asks [`probe`] first.

use cudarc::driver::{result, sys, DriverError};

use super::CudaError;

/// The names the driver's library goes by, in the order cudarc tries the
/// versionless and major-versioned ones.
#[cfg(unix)]
const DRIVER_LIBRARIES: &[&str] = &["libcuda.so", "libcuda.so.1"];
#[cfg(windows)]
const DRIVER_LIBRARIES: &[&str] = &["nvcuda.dll"];
#[cfg(not(any(unix, windows)))]
const DRIVER_LIBRARIES: &[&str] = &[];

fn driver_library_loads() -> bool {
    DRIVER_LIBRARIES.iter().any(|&name| {
        // SAFETY: loading the CUDA driver's library runs its initialisers,
        // which is what cudarc does on its first call anyway; no symbol of it
        // is used through this handle, which is dropped at once.
        unsafe { libloading::Library::new(name) }.is_ok()
    })
}

/// The number of CUDA devices the driver sees, or why there is none to use,
/// without panicking where cudarc would (no driver installed). Call it before
/// `CudaContext::new` to fall back to a host arena:
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::backend::cuda::{probe, CudaError};
///
/// match probe() {
///     Ok(devices) => println!("{devices} CUDA device(s): use Arena::device"),
///     Err(CudaError::NoDriver) => println!("no NVIDIA driver: a host arena"),
///     Err(why) => println!("{why}: a host arena"),
/// }
/// let mut arena = Arena::host(1 << 20)?; // what either path can run on
/// # arena.alloc::<f32>(4)?;
/// # Ok::<(), Box<dyn std::error::Error + Send + Sync>>(())
/// ```
pub fn probe() -> Result<usize, CudaError> {
    if !driver_library_loads() {
        return Err(CudaError::NoDriver);
    }
    let refused = |op| {
        move |error: DriverError| match error.0 {
            sys::CUresult::CUDA_ERROR_NO_DEVICE => CudaError::NoDevice,
            _ => CudaError::Driver { op, error },
        }
    };
    result::init().map_err(refused("cuInit"))?;
    let count = result::device::get_count().map_err(refused("cuDeviceGetCount"))?;
    match usize::try_from(count) {
        Ok(0) | Err(_) => Err(CudaError::NoDevice),
        Ok(devices) => Ok(devices),
    }
}
