//! Every input that `#[derive(GpuAligned)]`, `#[gpu_aligned::padded]` or
//! `#[derive(GpuSoa)]` rejects, and every misuse of the arena's views and
//! handles that the borrow checker refuses (`arena-*.rs`), one file each,
//! with the exact compiler output it must produce; and the legal cases
//! beside them (`pass/`), which must compile and run. With the `cuda`
//! feature, the inputs that need the CUDA backend (`ui-cuda/`) instead: the
//! compiler's output for the others names cudarc's impls too.

#[cfg(not(feature = "cuda"))]
#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("pass/*.rs");
}

#[cfg(feature = "cuda")]
#[test]
fn ui_cuda() {
    trybuild::TestCases::new().compile_fail("ui-cuda/*.rs");
}
