//! A `#![no_std]` crate that shares GPU types with host code: if this builds,
//! the trait, the layout facts, the vector types and the derive's output need
//! neither `std` nor `alloc`.
#![no_std]
