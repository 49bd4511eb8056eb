//! The project's two recorded PyTorch traces (`docs/traces`) replayed with
//! recording on, as `memory_history` replays them: on a growing host arena
//! (which gives free chunks' memory back) and on one over the stand-in
//! device (which keeps it), every array dropped. The ledger closes at
//! every event, and the run's last ledger agrees with the arena.

#[path = "../../runtime/examples/support/history.rs"]
#[allow(dead_code)]
pub mod replay;
#[path = "../../runtime/examples/trace_replay/trace.rs"]
#[allow(dead_code)]
pub mod trace;

use gpu_aligned::arena::{ArenaOptions, GrowthPolicy};

use crate::check_ledger;
use crate::support::StandIn;

/// A trace of `docs/traces`, through the `gzip` program.
pub fn read_trace(name: &str) -> trace::Trace {
    let path = format!(
        "{}/../docs/traces/{name}.trace.gz",
        env!("CARGO_MANIFEST_DIR")
    );
    let unzipped = std::process::Command::new("gzip")
        .args(["-dc", &path])
        .output();
    let unzipped = unzipped.expect("the gzip program");
    assert!(unzipped.status.success(), "gzip -dc {path}");
    trace::parse(&unzipped.stdout[..]).unwrap()
}

/// The device arena's options for `trace`.
pub fn options(trace: &trace::Trace) -> (ArenaOptions, GrowthPolicy) {
    let align = trace.max_align.max(256) as usize;
    let policy = GrowthPolicy::up_to(1 << 40);
    let options = ArenaOptions::new()
        .min_align(align)
        .pitch_align(align.max(512));
    (options.growth(policy), policy)
}

#[test]
#[cfg_attr(miri, ignore = "runs gzip; long")]
fn the_ledger_closes_at_every_event_of_both_traces() {
    for name in ["infer", "train"] {
        let trace = read_trace(name);
        let (options, policy) = options(&trace);
        let mut host = options.host(policy.initial()).unwrap();
        replay::replay_recorded(&mut host, &trace).unwrap();
        check_ledger(&host, &format!("{name}, host"));
        // A trim takes every dropped array back: nothing is left.
        host.trim().unwrap();
        let last = check_ledger(&host, &format!("{name}, host, trimmed"));
        assert_eq!((last.payload, last.pending), (0, 0), "{name}");
        let mut device = options
            .over(StandIn::growing(policy.initial(), 1 << 40))
            .unwrap();
        replay::replay_recorded(&mut device, &trace).unwrap();
        check_ledger(&device, &format!("{name}, stand-in device"));
    }
}
