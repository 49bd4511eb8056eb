//! Integration tests of gpu-aligned live in `tests/all/`; this library is empty.
