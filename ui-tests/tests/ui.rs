//! Every input that `#[derive(GpuAligned)]` or `#[gpu_aligned::padded]` rejects,
//! one file each, with the exact compiler output it must produce.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
