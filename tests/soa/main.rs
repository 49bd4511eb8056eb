//! Structure of arrays on the host arena: `#[derive(GpuSoa)]` structs with
//! vector, 1-byte and 16-byte fields round-trip through their columns; the
//! columns are carved together, aligned and disjoint; a length mismatch and
//! foreign columns are refused; an SoA sits in a `Plan` beside ordinary
//! arrays; the struct's layout (Rust's field order, whatever it is) reaches
//! the CUDA header, which g++ compiles. `attacks` attacks it with extreme
//! lengths, traded columns and field names the derive uses itself.

#[path = "../support/mod.rs"]
mod support;

mod attacks;
mod columns;
#[cfg(feature = "cuda")]
mod device;
mod header;
mod types;
