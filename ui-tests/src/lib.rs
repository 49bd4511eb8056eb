//! Compile-fail tests of `#[derive(GpuAligned)]` live in `ui/`, driven by `tests/ui.rs`.
