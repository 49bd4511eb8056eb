//! The typed arena on host memory: arrays, plans and carvings, pitched 2D
//! arrays. Runs under Miri too.

#[path = "../support/mod.rs"]
mod support;

mod arena;
mod attacks;
mod counts;
mod drop;
mod empty;
pub mod generic;
mod handles;
mod pitched;
mod plan;
mod red_zones;
mod threads;
