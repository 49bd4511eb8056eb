//! Host virtual memory: reserve a range of address space once, then commit (and give back) its
//! pages from the front as the memory is needed, so a buffer can grow without moving and costs
//! nothing until it is used. The memory of a [`HostBuffer`](super::HostBuffer); see [`HostVm`].

use core::fmt;
use core::ptr::NonNull;

use super::HostError;
use crate::align::round_up;

/// Whether reservations are real address-space reservations (`true`) or the
/// up-front allocation of the [fallback](HostVm#the-fallback) (`false`).
const LAZY: bool = cfg!(all(unix, feature = "std", not(miri)));

/// The smallest alignment a [`HostVm`] gets, whatever is asked: what
/// `cudaMalloc` guarantees for device buffers.
const MIN_ALIGN: usize = super::MIN_HOST_ALIGN;

/// A range of host address space, reserved once and committed from its
/// start, released on drop. The first `committed` bytes are readable and
/// writable; the rest is not accessible. The base address never changes.
///
/// On Unix with `std`, one anonymous `PROT_NONE` mapping (`MAP_NORESERVE` on
/// Linux, so the default overcommit mode charges nothing); committing is
/// `mprotect`, and pages are real only once touched. Decommitting maps fresh
/// no-access pages over the tail, which returns them to the OS at once.
///
/// # The fallback
///
/// Under Miri, off Unix and without `std`, a reservation is one zeroed
/// allocation of its whole length, made up front.
pub(crate) struct HostVm {
    ptr: NonNull<u8>,
    /// Usable length of the reservation (a multiple of the page size).
    reserved: usize,
    /// Committed prefix (a multiple of the page size, at most `reserved`).
    committed: usize,
    /// The page size commits are rounded to.
    page: usize,
    sys: imp::Mapping,
}

// SAFETY: `HostVm` owns its mapping like a `Box<[u8]>`, reached through `&self`/`&mut self` only.
unsafe impl Send for HostVm {}
// SAFETY: as above; `&HostVm` only gives out `&[u8]`.
unsafe impl Sync for HostVm {}

impl HostVm {
    /// Reserves `len` bytes of address space (rounded up to whole pages)
    /// starting at a multiple of `max(align, 256)`, with nothing committed.
    ///
    /// # Errors
    ///
    /// [`HostError::ZeroLength`], [`HostError::AlignNotPowerOfTwo`],
    /// [`HostError::TooLarge`], or [`HostError::Reserve`] when the OS refuses.
    pub(crate) fn reserve(len: usize, align: usize) -> Result<HostVm, HostError> {
        if len == 0 {
            return Err(HostError::ZeroLength);
        }
        if !align.is_power_of_two() {
            return Err(HostError::AlignNotPowerOfTwo { align });
        }
        let too_large = HostError::TooLarge { len };
        let page = imp::page_size();
        let align = align.max(MIN_ALIGN);
        let reserved = round_up(len, page)
            .filter(|&r| {
                (isize::MAX as usize)
                    .checked_sub(align)
                    .is_some_and(|room| r <= room)
            })
            .ok_or(too_large)?;
        let (ptr, sys) = imp::reserve(reserved, align, page)
            .map_err(|errno| HostError::Reserve { len, errno })?;
        Ok(HostVm {
            ptr,
            reserved,
            committed: 0,
            page,
            sys,
        })
    }

    /// Makes the first `len` bytes (rounded up to whole pages) usable; new
    /// bytes read as zero. Asking for less than is committed does nothing.
    ///
    /// # Errors
    ///
    /// [`HostError::BeyondReservation`] past the end of the reservation;
    /// [`HostError::Commit`] when the OS refuses (nothing changes then).
    pub(crate) fn grow_to(&mut self, len: usize) -> Result<(), HostError> {
        let reserved = self.reserved;
        let target = round_up(len, self.page).filter(|&t| t <= reserved);
        let target = target.ok_or(HostError::BeyondReservation { len, reserved })?;
        if target <= self.committed {
            return Ok(());
        }
        // SAFETY: `committed .. target` is page-aligned, inside the
        // reservation, and was never committed, so nothing refers into it.
        unsafe { imp::commit(&self.sys, self.ptr, self.committed, target) }
            .map_err(|errno| HostError::Commit { len, errno })?;
        self.committed = target;
        Ok(())
    }

    /// Gives back every committed page past the first `len` bytes (rounded
    /// up to whole pages); asking for more than is committed does nothing.
    ///
    /// # Errors
    ///
    /// [`HostError::Decommit`] when the OS refuses (nothing changes then).
    pub(crate) fn shrink_to(&mut self, len: usize) -> Result<(), HostError> {
        let target = round_up(len, self.page).unwrap_or(usize::MAX);
        if target >= self.committed {
            return Ok(());
        }
        // SAFETY: `target .. committed` lies inside the reservation, both ends are page multiples,
        // and `&mut self` means no reference into the committed bytes is alive.
        unsafe { imp::decommit(&self.sys, self.ptr, target, self.committed) }
            .map_err(|errno| HostError::Decommit { len, errno })?;
        self.committed = target;
        Ok(())
    }

    /// Gives the whole committed pages of `offset .. offset + len` back to
    /// the OS, leaving them committed and reading as zero.
    ///
    /// # Errors
    ///
    /// [`HostError::Discard`] for a range that is not whole committed pages,
    /// or when the OS refuses (nothing changes then).
    pub(crate) fn discard(&mut self, offset: usize, len: usize) -> Result<(), HostError> {
        let refused = |errno| HostError::Discard { offset, len, errno };
        let end = offset.checked_add(len).ok_or(refused(0))?;
        if offset % self.page != 0 || len % self.page != 0 || end > self.committed {
            return Err(refused(0));
        }
        if len == 0 {
            return Ok(());
        }
        // SAFETY: `offset .. end` lies inside the committed bytes, both ends are page multiples,
        // and `&mut self` means no reference into the committed bytes is alive.
        unsafe { imp::discard(&self.sys, self.ptr, offset, end) }.map_err(refused)
    }

    /// The page size commits and decommits are rounded up to.
    pub(crate) fn page_size() -> usize {
        imp::page_size()
    }

    /// The address of the first byte, fixed for the reservation's life.
    pub(crate) fn base_address(&self) -> u64 {
        self.ptr.as_ptr() as usize as u64
    }

    /// The first byte of the reservation; only the first `committed` bytes may be read or written.
    pub(crate) fn as_ptr(&self) -> NonNull<u8> {
        self.ptr
    }
}

impl Drop for HostVm {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `sys` came from `imp::reserve` with this `reserved` length and are
        // released only here, once; no reference into the range can outlive `self`.
        unsafe { imp::release(&self.sys, self.ptr, self.reserved) }
    }
}

impl fmt::Debug for HostVm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostVm")
            .field("address", &self.ptr)
            .field("reserved", &self.reserved)
            .field("committed", &self.committed)
            .field("lazy", &LAZY)
            .finish()
    }
}

#[cfg(all(unix, feature = "std", not(miri)))]
mod imp {
    //! Anonymous mappings through `libc`.

    use core::ptr::{null_mut, NonNull};

    /// The mapping is described by its pointer and length alone.
    pub(super) struct Mapping;

    /// Linux would otherwise charge a writable private mapping up front.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const NORESERVE: libc::c_int = libc::MAP_NORESERVE;
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    const NORESERVE: libc::c_int = 0;

    const FLAGS: libc::c_int = libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | NORESERVE;

    fn errno() -> i32 {
        std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
    }

    pub(super) fn page_size() -> usize {
        // SAFETY: `sysconf` has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        match usize::try_from(page) {
            Ok(page) if page.is_power_of_two() => page,
            _ => 4096,
        }
    }

    /// Maps `len + align - page` inaccessible bytes when the alignment
    /// exceeds a page, then unmaps the slack around the aligned `len`.
    pub(super) fn reserve(
        len: usize,
        align: usize,
        page: usize,
    ) -> Result<(NonNull<u8>, Mapping), i32> {
        let slack = align.saturating_sub(page);
        let total = len.checked_add(slack).ok_or(libc::ENOMEM)?;
        // SAFETY: a fresh anonymous mapping at an address the OS picks touches no existing memory.
        let raw = unsafe { libc::mmap(null_mut(), total, libc::PROT_NONE, FLAGS, -1, 0) };
        if raw == libc::MAP_FAILED {
            return Err(errno());
        }
        let start = raw as usize;
        let aligned = (start + align - 1) & !(align - 1);
        let head = aligned - start;
        let tail = total - head - len;
        // A failed unmap of slack only leaves inaccessible address space.
        if head > 0 {
            // SAFETY: `start .. aligned` is page-aligned slack of our own
            // fresh mapping, never handed out.
            unsafe { libc::munmap(raw, head) };
        }
        if tail > 0 {
            // SAFETY: the `tail` bytes after the aligned range are slack of
            // our own fresh mapping, never handed out.
            unsafe { libc::munmap((aligned + len) as *mut libc::c_void, tail) };
        }
        let ptr = NonNull::new(aligned as *mut u8).ok_or(libc::ENOMEM)?;
        Ok((ptr, Mapping))
    }

    /// # Safety
    ///
    /// `from .. to` must be page-aligned offsets inside the reservation
    /// starting at `ptr`, with no live reference into them.
    pub(super) unsafe fn commit(
        _: &Mapping,
        ptr: NonNull<u8>,
        from: usize,
        to: usize,
    ) -> Result<(), i32> {
        // SAFETY: the caller promises the range is ours, page-aligned and unreferenced.
        let r = unsafe {
            libc::mprotect(
                ptr.as_ptr().add(from).cast(),
                to - from,
                libc::PROT_READ | libc::PROT_WRITE,
            )
        };
        (r == 0).then_some(()).ok_or_else(errno)
    }

    /// # Safety
    ///
    /// As [`commit`].
    pub(super) unsafe fn decommit(
        _: &Mapping,
        ptr: NonNull<u8>,
        from: usize,
        to: usize,
    ) -> Result<(), i32> {
        // SAFETY: as promised by the caller.
        unsafe { replace(ptr, from, to, libc::PROT_NONE) }
    }

    /// # Safety
    ///
    /// As [`commit`], for committed pages.
    pub(super) unsafe fn discard(
        _: &Mapping,
        ptr: NonNull<u8>,
        from: usize,
        to: usize,
    ) -> Result<(), i32> {
        // Readable and writable: the memory goes back, the bytes stay usable.
        // SAFETY: as promised by the caller.
        unsafe { replace(ptr, from, to, libc::PROT_READ | libc::PROT_WRITE) }
    }

    /// Maps fresh pages with access `prot` over `from .. to`.
    ///
    /// # Safety
    ///
    /// As [`commit`].
    unsafe fn replace(ptr: NonNull<u8>, from: usize, to: usize, prot: i32) -> Result<(), i32> {
        // A fixed mapping replaces the pages with fresh zero-fill-on-demand ones (POSIX, unlike
        // `madvise`), returning the memory at once.
        // SAFETY: the caller promises the range is ours, page-aligned and unreferenced, so
        // replacing its pages discards nothing still in use.
        let raw = unsafe {
            libc::mmap(
                ptr.as_ptr().add(from).cast(),
                to - from,
                prot,
                FLAGS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        (raw != libc::MAP_FAILED).then_some(()).ok_or_else(errno)
    }

    /// # Safety
    ///
    /// `ptr` and `len` must be a reservation from [`reserve`], released once.
    pub(super) unsafe fn release(_: &Mapping, ptr: NonNull<u8>, len: usize) {
        // A failed `munmap` only leaks address space; `drop` cannot report.
        // SAFETY: the caller promises this is our mapping, released once.
        unsafe { libc::munmap(ptr.as_ptr().cast(), len) };
    }
}

#[cfg(not(all(unix, feature = "std", not(miri))))]
mod imp {
    //! The fallback: one zeroed allocation of the whole reservation.

    use alloc_crate::alloc::{alloc_zeroed, dealloc, Layout};
    use core::ptr::NonNull;

    pub(super) struct Mapping {
        layout: Layout,
    }

    pub(super) fn page_size() -> usize {
        4096
    }

    pub(super) fn reserve(
        len: usize,
        align: usize,
        _page: usize,
    ) -> Result<(NonNull<u8>, Mapping), i32> {
        let layout = Layout::from_size_align(len, align).map_err(|_| 0)?;
        // SAFETY: `layout` has a nonzero size (the caller refuses zero).
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or(0)?;
        Ok((ptr, Mapping { layout }))
    }

    /// # Safety
    ///
    /// `from .. to` must lie inside the allocation.
    pub(super) unsafe fn commit(
        _: &Mapping,
        _: NonNull<u8>,
        _from: usize,
        _to: usize,
    ) -> Result<(), i32> {
        Ok(())
    }

    /// Zeroes the range, as recommitted pages read.
    ///
    /// # Safety
    ///
    /// `from .. to` must lie inside the allocation, with no live reference into it.
    pub(super) unsafe fn decommit(
        _: &Mapping,
        ptr: NonNull<u8>,
        from: usize,
        to: usize,
    ) -> Result<(), i32> {
        // SAFETY: the caller promises the range is inside our allocation and unreferenced.
        unsafe { core::ptr::write_bytes(ptr.as_ptr().add(from), 0, to - from) };
        Ok(())
    }

    /// Zeroes the range, as discarded pages read.
    ///
    /// # Safety
    ///
    /// As [`decommit`].
    pub(super) unsafe fn discard(
        mapping: &Mapping,
        ptr: NonNull<u8>,
        from: usize,
        to: usize,
    ) -> Result<(), i32> {
        // SAFETY: as promised by the caller.
        unsafe { decommit(mapping, ptr, from, to) }
    }

    /// # Safety
    ///
    /// `ptr` must come from [`reserve`] with this mapping, released once.
    pub(super) unsafe fn release(mapping: &Mapping, ptr: NonNull<u8>, _len: usize) {
        // SAFETY: the caller promises `ptr` came from `alloc_zeroed` with
        // `mapping.layout` and is freed only here.
        unsafe { dealloc(ptr.as_ptr(), mapping.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the tests read back; the buffer reaches its bytes through [`HostVm::as_ptr`] instead.
    impl HostVm {
        fn reserved(&self) -> usize {
            self.reserved
        }

        fn committed(&self) -> usize {
            self.committed
        }

        fn committed_bytes(&self) -> &[u8] {
            // SAFETY: the first `committed` bytes are mapped, initialised
            // (zero when committed) and `self`'s; `&self` keeps them unchanged.
            unsafe { core::slice::from_raw_parts(self.ptr.as_ptr(), self.committed) }
        }

        fn committed_bytes_mut(&mut self) -> &mut [u8] {
            // SAFETY: as in `committed_bytes`, and `&mut self` makes this the only view.
            unsafe { core::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.committed) }
        }
    }

    #[test]
    fn refuses_bad_arguments() {
        assert_eq!(HostVm::reserve(0, 256).unwrap_err(), HostError::ZeroLength);
        assert_eq!(
            HostVm::reserve(1, 3).unwrap_err(),
            HostError::AlignNotPowerOfTwo { align: 3 }
        );
        assert_eq!(
            HostVm::reserve(usize::MAX, 256).unwrap_err(),
            HostError::TooLarge { len: usize::MAX }
        );
    }

    #[test]
    fn extreme_lengths_are_refused_and_change_nothing() {
        assert!(HostVm::reserve(0, 256).is_err());
        assert!(HostVm::reserve(usize::MAX, 256).is_err());
        assert!(HostVm::reserve(4096, 3).is_err());
        assert!(HostVm::reserve(4096, 1 << 63).is_err());
        let page = HostVm::page_size();
        let mut vm = HostVm::reserve(2 * page, 256).unwrap();
        assert!(vm.grow_to(usize::MAX).is_err());
        assert!(vm.grow_to(2 * page + 1).is_err());
        assert_eq!(vm.committed(), 0);
        vm.grow_to(1).unwrap();
        vm.committed_bytes_mut()[0] = 7;
        vm.shrink_to(usize::MAX).unwrap();
        assert_eq!(vm.committed(), page);
        vm.shrink_to(0).unwrap();
        assert_eq!(vm.committed(), 0);
        vm.grow_to(2 * page).unwrap();
        assert_eq!(vm.committed_bytes()[0], 0);
    }

    #[test]
    fn a_reservation_is_whole_pages_at_an_aligned_address() {
        let page = HostVm::page_size();
        assert!(page.is_power_of_two());
        let vm = HostVm::reserve(1, 1 << 16).unwrap();
        assert_eq!(vm.base_address() % (1 << 16), 0);
        assert_eq!(vm.as_ptr().as_ptr() as usize as u64, vm.base_address());
        assert_eq!(vm.reserved(), page);
        let mut vm = HostVm::reserve(10_000, 4096).unwrap();
        assert_eq!(vm.base_address() % 4096, 0);
        assert!(vm.reserved() >= 10_000 && vm.reserved() % page == 0);
        assert!(vm.committed_bytes().is_empty());
        vm.grow_to(1).unwrap();
        assert_eq!(vm.committed(), page);
        assert_eq!(vm.committed_bytes().len(), page);
    }

    #[test]
    fn growing_keeps_contents_and_shrinking_zeroes() {
        let page = HostVm::page_size();
        let mut vm = HostVm::reserve(4 * page, 256).unwrap();
        vm.grow_to(page).unwrap();
        vm.committed_bytes_mut().fill(0xAB);
        vm.grow_to(3 * page).unwrap();
        let bytes = vm.committed_bytes();
        assert!(bytes[..page].iter().all(|&b| b == 0xAB));
        assert!(bytes[page..].iter().all(|&b| b == 0));
        vm.committed_bytes_mut().fill(0xCD);
        vm.shrink_to(page + 1).unwrap();
        assert_eq!(vm.committed(), 2 * page);
        vm.grow_to(4 * page).unwrap();
        let bytes = vm.committed_bytes();
        assert!(bytes[..2 * page].iter().all(|&b| b == 0xCD));
        assert!(bytes[2 * page..].iter().all(|&b| b == 0));
        assert_eq!(
            vm.grow_to(4 * page + 1).unwrap_err(),
            HostError::BeyondReservation {
                len: 4 * page + 1,
                reserved: 4 * page
            }
        );
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
    fn growing_past_the_reservation_is_an_error_and_changes_nothing() {
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
    fn pages_given_back_come_back_zeroed() {
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

    #[test]
    fn discarded_pages_read_zero_and_stay_committed() {
        let page = HostVm::page_size();
        let mut vm = HostVm::reserve(4 * page, 256).unwrap();
        vm.grow_to(4 * page).unwrap();
        vm.committed_bytes_mut().fill(7);
        vm.discard(page, 2 * page).unwrap();
        let bytes = vm.committed_bytes();
        assert!(bytes[page..3 * page].iter().all(|&b| b == 0));
        assert_eq!((bytes[0], bytes[3 * page]), (7, 7));
        assert_eq!(vm.committed(), 4 * page);
        assert!(vm.discard(1, page).is_err()); // not whole pages
        assert!(vm.discard(4 * page, page).is_err()); // past the committed bytes
        vm.discard(0, 0).unwrap();
    }

    /// Resident memory of this process in bytes.
    #[cfg(all(target_os = "linux", feature = "std"))]
    fn resident_bytes() -> usize {
        let statm = std::fs::read_to_string("/proc/self/statm").expect("procfs");
        let pages: usize = statm
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .expect("resident pages");
        pages * HostVm::page_size()
    }

    /// 64 GiB of address space on a machine with less RAM than that:
    /// reserving and committing it all costs nothing until pages are touched.
    #[test]
    #[cfg(all(target_os = "linux", feature = "std"))]
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
        // x86-64 and aarch64 Linux give a process at most 2^47 to 2^52 bytes
        // of address space; 2^60 cannot be reserved.
        match HostVm::reserve(1 << 60, 256) {
            Err(HostError::Reserve { len, errno }) => {
                assert_eq!(len, 1 << 60);
                assert_ne!(errno, 0);
            }
            other => panic!("expected the OS to refuse, got {other:?}"),
        }
    }
}
