//! Criterion benchmark of the sub-allocator against offset-allocator (being written).
fn main() {}
