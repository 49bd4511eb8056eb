//! Looks for g++, which the CUDA header tests use to compile every emitted
//! header: where it is missing those tests are ignored with the reason, so
//! they count as skipped instead of failing or passing.

use std::process::Command;

fn main() {
    println!("cargo:rustc-check-cfg=cfg(has_gxx)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=PATH");
    let found = Command::new("g++")
        .arg("--version")
        .output()
        .is_ok_and(|output| output.status.success());
    if found {
        println!("cargo:rustc-cfg=has_gxx");
    } else {
        println!(
            "cargo:warning=g++ not found: the CUDA header tests that compile with it are ignored"
        );
    }
}
