//! Every input that `#[derive(GpuAligned)]`, `#[gpu_aligned::padded]` or
//! `#[derive(GpuSoa)]` rejects, and every misuse of the arena's views and
//! handles that the borrow checker refuses (`arena-*.rs`), one file each,
//! with the exact compiler output it must produce; and the legal cases
//! beside them (`pass/`), which must compile and run.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
    t.pass("pass/*.rs");
}
