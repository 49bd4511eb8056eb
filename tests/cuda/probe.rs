//! The probe for a driver and a device, and the errors a cudarc program
//! meets: what they convert into and what they give as their source.

use std::error::Error;

use gpu_aligned::arena::{Arena, ArenaError};
use gpu_aligned::backend::cuda::cudarc::driver::{sys::CUresult, CudaContext, DriverError};
use gpu_aligned::backend::cuda::{probe, CudaError};

/// On a machine without a driver (CI) the probe says so where cudarc
/// panics; on a GPU machine it counts the devices cudarc opens.
#[test]
fn the_probe_agrees_with_cudarc_without_panicking() {
    let found = probe();
    let opened = std::panic::catch_unwind(|| CudaContext::new(0).map(|_| ()));
    match found {
        Err(CudaError::NoDriver) => assert!(
            opened.is_err(),
            "the probe found no driver where cudarc opened one: {opened:?}"
        ),
        Ok(devices) => {
            assert!(devices >= 1);
            assert!(matches!(opened, Ok(Ok(()))), "{opened:?}");
        }
        Err(why) => assert!(matches!(opened, Ok(Err(_))), "{why}: {opened:?}"),
    }
}

#[test]
fn probe_errors_say_what_is_missing() {
    assert_eq!(
        CudaError::NoDriver.to_string(),
        "no CUDA driver: its library does not load"
    );
    let failed = CudaError::Driver {
        op: "cuInit",
        error: DriverError(CUresult::CUDA_ERROR_NOT_INITIALIZED),
    };
    let source = failed.source().expect("the driver's error");
    assert_eq!(
        source.downcast_ref::<DriverError>(),
        Some(&DriverError(CUresult::CUDA_ERROR_NOT_INITIALIZED))
    );
}

/// `?` on a cudarc call in a function that returns the device arena's
/// error, and on that error into a `Box<dyn Error + Send + Sync>`, with the
/// driver's error as the source.
#[test]
fn a_cudarc_error_converts_for_question_mark_and_is_the_source() {
    fn cudarc_call() -> Result<(), DriverError> {
        Err(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY))
    }
    fn in_arena_code() -> Result<(), ArenaError<CudaError>> {
        cudarc_call()?;
        Ok(())
    }
    fn in_main() -> Result<(), Box<dyn Error + Send + Sync>> {
        in_arena_code()?;
        Ok(())
    }
    match in_arena_code() {
        Err(ArenaError::Backend(CudaError::Driver { error, .. })) => {
            assert_eq!(error, DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        }
        other => panic!("{other:?}"),
    }
    let boxed = in_main().unwrap_err();
    assert!(
        boxed.to_string().contains("CUDA_ERROR_OUT_OF_MEMORY"),
        "{boxed}"
    );
    let source = boxed.source().expect("the driver's error");
    assert_eq!(
        source.downcast_ref::<DriverError>(),
        Some(&DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY))
    );
}

/// A host arena's errors go through `?` into a `Box<dyn Error + Send +
/// Sync>` as well, shown as the allocator's error with no source below it.
#[test]
fn a_host_arena_error_is_send_and_sync() -> Result<(), Box<dyn Error + Send + Sync>> {
    let mut arena = Arena::host(4096)?;
    let refused: Box<dyn Error + Send + Sync> = arena.alloc::<u32>(usize::MAX).unwrap_err().into();
    assert!(refused.source().is_none());
    assert!(!refused.to_string().is_empty());
    Ok(())
}
