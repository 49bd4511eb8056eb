//! Compile-fail tests of the derives and of the arena's borrows live in `ui/`, driven by
//! `tests/ui.rs`.
