//! `HostVm`: reserve, commit, decommit, release.

use gpu_aligned::backend::{HostError, HostVm};

/// Resident memory of this process in bytes (Linux only).
#[cfg(target_os = "linux")]
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("procfs");
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("resident pages");
    pages * HostVm::page_size()
}

#[test]
fn growth_keeps_the_address_and_the_contents() {
    let page = HostVm::page_size();
    let mut vm = HostVm::reserve(64 * page, 256).unwrap();
    let base = vm.base_address();
    for step in 1..=64usize {
        vm.grow_to(step * page).unwrap();
        assert_eq!(vm.base_address(), base);
        let bytes = vm.committed_bytes_mut();
        // Every earlier page still holds its mark; the new one is zero.
        for earlier in 0..step - 1 {
            assert_eq!(bytes[earlier * page], earlier as u8 + 1);
        }
        assert_eq!(bytes[(step - 1) * page], 0);
        bytes[(step - 1) * page] = step as u8;
    }
}

#[test]
fn commit_past_the_reservation_is_an_error_and_changes_nothing() {
    let page = HostVm::page_size();
    let mut vm = HostVm::reserve(2 * page, 256).unwrap();
    vm.grow_to(page).unwrap();
    vm.committed_bytes_mut()[0] = 9;
    assert_eq!(
        vm.grow_to(2 * page + 1),
        Err(HostError::BeyondReservation {
            len: 2 * page + 1,
            reserved: 2 * page
        })
    );
    assert_eq!(vm.committed(), page);
    assert_eq!(vm.committed_bytes()[0], 9);
    vm.grow_to(2 * page).unwrap();
}

#[test]
fn decommitted_pages_come_back_zeroed() {
    let page = HostVm::page_size();
    let mut vm = HostVm::reserve(8 * page, 256).unwrap();
    vm.grow_to(8 * page).unwrap();
    vm.committed_bytes_mut().fill(0x5A);
    vm.shrink_to(3 * page).unwrap();
    assert_eq!(vm.committed(), 3 * page);
    vm.grow_to(8 * page).unwrap();
    let (kept, fresh) = vm.committed_bytes().split_at(3 * page);
    assert!(kept.iter().all(|&b| b == 0x5A));
    assert!(fresh.iter().all(|&b| b == 0));
}

/// 64 GiB of address space on a machine with less RAM than that: reserving
/// and committing it all costs nothing until pages are touched.
#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(miri, ignore = "the fallback allocates the whole reservation")]
fn a_reservation_larger_than_ram_costs_only_what_is_touched() {
    let mut vm = HostVm::reserve(64 << 30, 256).unwrap();
    vm.grow_to(64 << 30).unwrap();
    let before = resident_bytes();
    let bytes = vm.committed_bytes_mut();
    // Touch one byte per page of the first MiB and of the last MiB.
    let len = bytes.len();
    for i in (0..1 << 20).step_by(4096) {
        bytes[i] = 1;
        bytes[len - 1 - i] = 1;
    }
    let grown = resident_bytes().saturating_sub(before);
    assert!(grown < 64 << 20, "resident memory grew by {grown} bytes");
    vm.shrink_to(0).unwrap();
    assert_eq!(vm.committed(), 0);
}

#[test]
#[cfg(target_os = "linux")]
#[cfg_attr(
    miri,
    ignore = "the fallback asks the global allocator, which Miri aborts on"
)]
fn a_reservation_the_os_refuses_is_a_typed_error() {
    // x86-64 and aarch64 Linux give a process at most 2^47 to 2^52 bytes of
    // address space; 2^60 cannot be reserved.
    match HostVm::reserve(1 << 60, 256) {
        Err(HostError::Reserve { len, errno }) => {
            assert_eq!(len, 1 << 60);
            assert_ne!(errno, 0);
        }
        other => panic!("expected the OS to refuse, got {other:?}"),
    }
}
