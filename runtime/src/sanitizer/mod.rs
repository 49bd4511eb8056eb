//! What the arena tells the tools that watch kernels (compute-sanitizer), so that an array carved
//! out of one buffer is checked like its own allocation: red zones, region registration and the map
//! from addresses to arrays.
//!
//! Inside one device buffer, a kernel writing one element past its array writes into the next
//! array, and `compute-sanitizer --tool memcheck` sees nothing: for it the whole buffer is one
//! allocation. Through NVTX's memory API the arena registers its buffer (a growing arena's: all it
//! may grow to) as a sub-allocator heap and each array as a region of it, so that bytes no array
//! holds are out of bounds. In **red-zone mode** every array is also followed by unregistered bytes
//! (at least the arena's minimum alignment and one element, or one row), so an off-by-one into the
//! next array is reported as an access just past this one's region; the arena's [`RegionMap`] turns
//! that region's start into the array's element type, length and label.
//!
//! Red zones turn on by themselves when the process runs under compute-sanitizer (which sets
//! `NVTX_INJECTION64_PATH` to its collection library) and the arena is on a device;
//! `GPU_ALIGNED_RED_ZONES=1` or `=0` forces them on or off for arenas made afterwards, and
//! [`Arena::set_red_zones`](crate::arena::Arena::set_red_zones) for one arena. Off, an arena lays
//! out arrays exactly as before and pays one predictable branch per allocation and free; with no
//! tool attached, NVTX costs one atomic load, at the arena's construction. Under the sanitizer each
//! registration is also written to standard error as one line, in the report's own terms
//! (`GPU_ALIGNED_REGION_LOG=0` silences it), so a report is traced to its array with one search.

#[cfg(all(feature = "std", unix))]
pub(crate) mod nvtx;

/// `NVTX_MEM_PERMISSIONS_REGION_FLAGS_READ` / `_WRITE` / `_ATOMIC`.
#[cfg(feature = "cuda")]
const PERMISSION_READ: u32 = 0x1;
#[cfg(feature = "cuda")]
const PERMISSION_WRITE: u32 = 0x2;
#[cfg(feature = "cuda")]
const PERMISSION_ATOMIC: u32 = 0x4;

/// Without `std` on a Unix no NVTX tool can be loaded: a tool that never
/// exists, so that the code below has one path.
#[cfg(not(all(feature = "std", unix)))]
mod nvtx {
    #[derive(Debug)]
    pub(crate) enum Tool {}
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct HeapHandle;
    impl HeapHandle {
        pub(crate) const NONE: HeapHandle = HeapHandle;
    }
    pub(crate) fn tool() -> Option<&'static Tool> {
        None
    }
    pub(crate) fn sanitizer_named() -> bool {
        false
    }
    impl Tool {
        pub(crate) fn heap_register(&self, _: u64, _: u64) -> Option<HeapHandle> {
            match *self {}
        }
        pub(crate) fn heap_unregister(&self, _: HeapHandle) {}
        pub(crate) fn heap_reset(&self, _: HeapHandle) {}
        pub(crate) fn region_register(&self, _: HeapHandle, _: u64, _: u64) {}
        pub(crate) fn region_unregister(&self, _: u64) {}
        pub(crate) fn region_name(&self, _: u64, _: &core::ffi::CStr) {}
        #[cfg(feature = "cuda")]
        pub(crate) fn permissions_assign(&self, _: u64, _: u32) -> bool {
            match *self {}
        }
    }
}

use alloc_crate::boxed::Box;
use alloc_crate::collections::BTreeMap;
use alloc_crate::vec::Vec;
use core::fmt;

use crate::align::{offset_of, round_up};

/// Whether an NVTX tool (compute-sanitizer, Nsight Systems) is attached to the process:
/// `NVTX_INJECTION64_PATH` names a library that loaded and offers the memory functions. Loads it at
/// the first call; afterwards one atomic load.
pub fn tool_attached() -> bool {
    nvtx::tool().is_some()
}

/// Whether the attached NVTX tool is compute-sanitizer (the library `NVTX_INJECTION64_PATH` names
/// is its collection library): what makes a growing device arena worth one allocation of its
/// maximum, which a profiler should not see.
#[cfg(feature = "cuda")]
pub(crate) fn sanitizer_attached() -> bool {
    tool_attached() && nvtx::sanitizer_named()
}

/// The shape of an array a region holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RegionShape {
    /// `len` elements.
    Array {
        /// Number of elements.
        len: usize,
    },
    /// A pitched array: `height` rows of `width` elements, rows `pitch`
    /// bytes apart. (Not named `Pitched`: rustc would then print the
    /// arena's `Pitched` with its full path in every diagnostic.)
    Rows {
        /// Elements per row.
        width: usize,
        /// Rows.
        height: usize,
        /// Bytes from one row to the next.
        pitch: usize,
    },
}

/// What the arena knows of an array as it reserves it: its element type,
/// the element's size and its shape.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ArrayInfo {
    pub(crate) element: &'static str,
    pub(crate) element_size: usize,
    /// Pad bytes in one element (for the history's ledger).
    pub(crate) padding: usize,
    pub(crate) shape: RegionShape,
}

impl ArrayInfo {
    #[inline(always)]
    pub(crate) fn of<T: crate::GpuData>(shape: RegionShape) -> ArrayInfo {
        ArrayInfo {
            element: core::any::type_name::<T>(),
            element_size: core::mem::size_of::<T>(),
            padding: const { T::TYPE.padding() },
            shape,
        }
    }

    /// The step an off-by-one overruns by: an element, or a row.
    pub(crate) fn stride(&self) -> usize {
        match self.shape {
            RegionShape::Array { .. } => self.element_size,
            RegionShape::Rows { pitch, .. } => pitch.max(self.element_size),
        }
    }
}

/// One array as the tools see it: where it is, how big, and what it holds.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Region {
    /// The array's first byte (a device address on a device arena).
    pub address: u64,
    /// The bytes registered for it.
    pub bytes: usize,
    /// Unregistered bytes reserved right after it (0 without red zones).
    pub red_zone: usize,
    /// The element type's name, without its module path (empty until the arena names the region).
    pub element: &'static str,
    /// Its shape.
    pub shape: RegionShape,
    /// The label given with [`Arena::label`](crate::arena::Arena::label).
    pub label: Option<Box<str>>,
}

impl Region {
    /// One past the array's last byte.
    pub fn end(&self) -> u64 {
        self.address.saturating_add(offset_of(self.bytes))
    }

    /// The array's name: element type and shape, then the label if any, e.g. `f32[256] "weights"`.
    pub fn name(&self) -> RegionName<'_> {
        RegionName(self)
    }
}

/// [`Region::name`]'s display.
#[derive(Clone, Copy, Debug)]
pub struct RegionName<'a>(&'a Region);

impl fmt::Display for RegionName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let region = self.0;
        let element = if region.element.is_empty() {
            "?"
        } else {
            region.element
        };
        match region.shape {
            RegionShape::Array { len } => write!(f, "{element}[{len}]")?,
            RegionShape::Rows {
                width,
                height,
                pitch,
            } => write!(f, "{element}[{height}][{width}] (pitch {pitch})")?,
        }
        if let Some(label) = &region.label {
            write!(f, " {label:?}")?;
        }
        Ok(())
    }
}

/// `n` with thousands separators, as compute-sanitizer prints sizes.
pub(crate) struct Grouped(pub(crate) u64);

impl fmt::Display for Grouped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = alloc_crate::format!("{}", self.0);
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                f.write_str(",")?;
            }
            write!(f, "{digit}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Region {
    /// `0x7f3a5c000000 of size 1,024 bytes (+256 red zone): f32[256]`: the
    /// start and size as compute-sanitizer's reports print an allocation.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:#x} of size {} bytes (+{} red zone): {}",
            self.address,
            Grouped(offset_of(self.bytes)),
            self.red_zone,
            self.name()
        )
    }
}

/// Where an address lies relative to the array nearest it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Nearest {
    /// Inside the array, this many bytes from its start.
    Inside(u64),
    /// This many bytes past its end (0: its first byte past the end; in its
    /// red zone, when it has one).
    After(u64),
    /// This many bytes before its start.
    Before(u64),
}

/// The arena's live arrays by address: what [`Arena::regions`](crate::arena::Arena::regions)
/// returns. Its display is one [`Region`] a line, in address order.
///
/// ```
/// use gpu_aligned::arena::Arena;
/// use gpu_aligned::backend::Buffer;
/// use gpu_aligned::sanitizer::Nearest;
///
/// let mut arena = Arena::host(1 << 16)?; // a device arena works the same way
/// arena.set_red_zones(true);
/// let weights = arena.alloc::<f32>(256)?;
/// arena.label(&weights, "weights")?;
/// let map = arena.regions();
/// let start = arena.backend().base_address() + arena.offset(&weights)?;
/// let (region, at) = map.nearest(start + 1024).expect("a region");
/// assert_eq!(region.name().to_string(), r#"f32[256] "weights""#);
/// assert_eq!(at, Nearest::After(0)); // the first byte past the end
/// println!("{map}"); // one line per array
/// # arena.free(weights)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RegionMap {
    regions: Vec<Region>,
}

impl RegionMap {
    /// The regions, in address order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region that starts at `address` (as a report's "allocation at" prints it).
    pub fn starting_at(&self, address: u64) -> Option<&Region> {
        self.regions
            .binary_search_by_key(&address, |region| region.address)
            .ok()
            .map(|index| &self.regions[index])
    }

    /// The region nearest `address` and where the address lies from it: the
    /// one holding it, else the closer of the one before (an overrun) and
    /// the one after (an underrun), the one before on a tie.
    pub fn nearest(&self, address: u64) -> Option<(&Region, Nearest)> {
        let after = self
            .regions
            .partition_point(|region| region.address <= address);
        let before = after.checked_sub(1).map(|index| &self.regions[index]);
        if let Some(region) = before {
            if address < region.end() {
                return Some((region, Nearest::Inside(address - region.address)));
            }
        }
        let past = before.map(|region| (region, Nearest::After(address - region.end())));
        let ahead = self
            .regions
            .get(after)
            .map(|region| (region, Nearest::Before(region.address - address)));
        match (past, ahead) {
            (Some(past @ (_, Nearest::After(p))), Some(ahead @ (_, Nearest::Before(a)))) => {
                Some(if a < p { ahead } else { past })
            }
            (past, ahead) => past.or(ahead),
        }
    }
}

impl fmt::Display for RegionMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for region in &self.regions {
            writeln!(f, "{region}")?;
        }
        Ok(())
    }
}

/// A heap registered with the tool: buffer offsets `start .. end`.
#[derive(Debug)]
struct HeapRange {
    start: u64,
    end: u64,
    handle: nvtx::HeapHandle,
}

/// What a handle's drop needs to take its array off the tool's regions at once, rather than when
/// the arena takes it back, so that a kernel launched after the drop that reads the array is a read
/// after free (one launched before it is not: docs/SANITIZER.md). Copied into the arena's list of
/// dropped arrays while a tool watches and no captured graph may replay a dropped array; `floor` is
/// the lowest stamp of a live handle, so a handle dropped after a reset, whose bytes may be a newer
/// array's, tells nothing.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DropWatch {
    tool: &'static nvtx::Tool,
    log: bool,
    base: u64,
    floor: u64,
}

impl DropWatch {
    /// Whether the drop of `allocation` is told: it is a live array's.
    #[inline]
    pub(crate) fn covers(&self, allocation: &crate::alloc::Allocation) -> bool {
        allocation.stamp() >= self.floor
    }

    /// The array at buffer `offset` was dropped: it is no region from now on.
    pub(crate) fn dropped(&self, offset: u64) {
        let address = self.base.wrapping_add(offset);
        self.tool.region_unregister(address);
        if self.log {
            log(format_args!("released {address:#x} (dropped)"));
        }
    }
}

/// The arena's side of it: whether red zones are on, the tool to tell, the
/// heaps registered and the live arrays. One per arena.
#[derive(Debug)]
pub(crate) struct Regions {
    red_zones: bool,
    /// Whether the arrays are recorded at all: a tool is attached or red zones are on (`watching`),
    /// or the arena's history records. Off, every hook returns after one branch.
    active: bool,
    watching: bool,
    recording: bool,
    /// Whether to write each registration to standard error.
    log: bool,
    tool: Option<&'static nvtx::Tool>,
    heaps: Vec<HeapRange>,
    /// Live arrays by buffer offset (their `address` is that offset).
    entries: BTreeMap<u64, Region>,
    /// How many read-only views each array marked read-only has, by
    /// address: views are lent through a shared arena.
    #[cfg(feature = "cuda")]
    read_only: std::sync::Mutex<BTreeMap<u64, usize>>,
}

/// Writes one line of the region log to standard error (nothing without
/// `std`, where the log is never on).
fn log(line: fmt::Arguments<'_>) {
    #[cfg(feature = "std")]
    std::eprintln!("gpu-aligned: {line}");
    #[cfg(not(feature = "std"))]
    let _ = line;
}

/// `GPU_ALIGNED_RED_ZONES`: `Some(true)` for `1`/`on`, `Some(false)` for
/// `0`/`off`, `None` when unset or anything else (or without `std`).
fn forced(name: &str) -> Option<bool> {
    #[cfg(feature = "std")]
    return match std::env::var(name).ok()?.trim() {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" => Some(false),
        _ => None,
    };
    #[cfg(not(feature = "std"))]
    return {
        let _ = name;
        None
    };
}

/// Whether an arena made now starts with red zones on: under compute-sanitizer for a buffer the
/// tools can be told about (`device_memory`), unless `GPU_ALIGNED_RED_ZONES` says otherwise. What
/// [`Regions::new`] decides, asked before the arena exists by one sized for a plan, so that it
/// makes room for the red zones.
pub(crate) fn red_zones_by_default(device_memory: bool) -> bool {
    forced("GPU_ALIGNED_RED_ZONES").unwrap_or(device_memory && nvtx::sanitizer_named())
}

/// The red zone after an array of `stride`-byte steps (an element, or a
/// pitched array's row) in an arena whose arrays start on multiples of
/// `granule`: `stride` rounded up to `granule`, at least one granule.
#[inline(always)]
pub(crate) fn red_zone_bytes(stride: usize, granule: usize) -> usize {
    let granule = granule.max(1);
    round_up(stride.max(1), granule).unwrap_or(usize::MAX)
}

impl Regions {
    /// The state of a new arena whose buffer the tools can be told about or
    /// not (red zones as [`red_zones_by_default`] says).
    pub(crate) fn new(device_memory: bool) -> Regions {
        let tool = if device_memory { nvtx::tool() } else { None };
        let sanitizer = device_memory && nvtx::sanitizer_named();
        let red_zones = red_zones_by_default(device_memory);
        Regions {
            red_zones,
            active: red_zones || tool.is_some(),
            watching: red_zones || tool.is_some(),
            recording: false,
            log: sanitizer && forced("GPU_ALIGNED_REGION_LOG") != Some(false),
            tool,
            heaps: Vec::new(),
            entries: BTreeMap::new(),
            #[cfg(feature = "cuda")]
            read_only: std::sync::Mutex::new(BTreeMap::new()),
        }
    }

    /// Whether the watch layer's hooks run (arrays told to a tool, or the history recording).
    #[inline(always)]
    pub(crate) fn is_active(&self) -> bool {
        self.active
    }

    /// Whether the arrays are recorded (and told to a tool): the arena
    /// calls the other hooks only then.
    pub(crate) fn watching(&self) -> bool {
        self.watching
    }

    /// The history records or not (see `crate::history`).
    pub(crate) fn set_recording(&mut self, on: bool) {
        self.recording = on;
        self.active = self.watching || on;
    }

    pub(crate) fn red_zones(&self) -> bool {
        self.red_zones
    }

    pub(crate) fn set_red_zones(&mut self, on: bool) {
        self.red_zones = on;
        // Arrays recorded before stay recorded until they are released.
        self.watching = on || self.tool.is_some() || !self.entries.is_empty();
        self.active = self.watching || self.recording;
    }

    /// The red zone a reservation gets: [`red_zone_bytes`], none when red
    /// zones are off (`granule` is the arena's minimum alignment).
    #[inline(always)]
    pub(crate) fn red_zone(&self, stride: usize, granule: usize) -> usize {
        if !self.red_zones {
            return 0;
        }
        red_zone_bytes(stride, granule)
    }

    /// Records an array reserved at buffer `offset`: `bytes` of it, then `red_zone` bytes left
    /// unregistered. `extent` is where the buffer's heap ends (as an offset): bytes beyond the
    /// heaps registered so far become a heap first.
    pub(crate) fn reserved(
        &mut self,
        base: u64,
        extent: u64,
        offset: u64,
        bytes: usize,
        red_zone: usize,
    ) {
        self.cover(base, extent);
        if let Some(tool) = self.tool {
            if let Some(heap) = self.heap_of(offset) {
                tool.region_register(heap, base.wrapping_add(offset), offset_of(bytes));
            }
        }
        let region = Region {
            address: offset,
            bytes,
            red_zone,
            element: "",
            shape: RegionShape::Array { len: 0 },
            label: None,
        };
        self.entries.insert(offset, region);
    }

    /// Gives the array at `offset` its element type and shape.
    pub(crate) fn named(
        &mut self,
        base: u64,
        offset: u64,
        element: &'static str,
        shape: RegionShape,
    ) {
        if let Some(entry) = self.entries.get_mut(&offset) {
            entry.element = short_type_name(element);
            entry.shape = shape;
        }
        self.announce(base, offset);
    }

    /// Labels the array at `offset`. Returns whether it is recorded.
    pub(crate) fn labelled(&mut self, base: u64, offset: u64, label: &str) -> bool {
        let Some(entry) = self.entries.get_mut(&offset) else {
            return false;
        };
        entry.label = Some(label.into());
        self.announce(base, offset);
        true
    }

    /// Tells the tool (and the log) the array's name.
    fn announce(&self, base: u64, offset: u64) {
        if self.tool.is_none() && !self.log {
            return;
        }
        let Some(region) = self.region(base, offset) else {
            return;
        };
        if let Some(tool) = self.tool {
            let name = alloc_crate::format!("{}", region.name()).replace('\0', " ");
            if let Ok(name) = alloc_crate::ffi::CString::new(name) {
                tool.region_name(region.address, &name);
            }
        }
        if self.log {
            log(format_args!("region {region}"));
        }
    }

    /// What a handle's drop needs to tell the tool at once (see
    /// [`DropWatch`]): `None` when no tool watches.
    pub(crate) fn drop_watch(&self, base: u64, floor: u64) -> Option<DropWatch> {
        self.tool.map(|tool| DropWatch {
            tool,
            log: self.log,
            base,
            floor,
        })
    }

    /// Forgets the array at `offset` without telling the tool, which its
    /// drop told already ([`DropWatch::dropped`]).
    pub(crate) fn forget(&mut self, offset: u64) {
        self.entries.remove(&offset);
    }

    /// Forgets the array at `offset`: its bytes went back to the allocator.
    pub(crate) fn released(&mut self, base: u64, offset: u64) {
        let Some(entry) = self.entries.remove(&offset) else {
            return;
        };
        let address = base.wrapping_add(offset);
        if let Some(tool) = self.tool {
            tool.region_unregister(address);
        }
        if self.log {
            let bytes = Grouped(offset_of(entry.bytes));
            log(format_args!("released {address:#x} of size {bytes} bytes"));
        }
    }

    /// The read-only view counts, whatever a panicking holder left.
    #[cfg(feature = "cuda")]
    fn read_only_views(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, usize>> {
        self.read_only
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Makes the array at `address` read-only for the tool's kernels, or
    /// counts one more view of it. Returns whether the tool took it.
    #[cfg(feature = "cuda")]
    pub(crate) fn read_only_begin(&self, address: u64) -> bool {
        let Some(tool) = self.tool else {
            return false;
        };
        let mut views = self.read_only_views();
        let count = views.entry(address).or_insert(0);
        if *count == 0 && !tool.permissions_assign(address, PERMISSION_READ) {
            views.remove(&address);
            return false;
        }
        *count += 1;
        true
    }

    /// One read-only view of the array at `address` dropped: with the last
    /// one, writes are allowed again.
    #[cfg(feature = "cuda")]
    pub(crate) fn read_only_end(&self, address: u64) {
        let Some(tool) = self.tool else {
            return;
        };
        let mut views = self.read_only_views();
        if let Some(count) = views.get_mut(&address) {
            *count -= 1;
            if *count == 0 {
                views.remove(&address);
                let all = PERMISSION_READ | PERMISSION_WRITE | PERMISSION_ATOMIC;
                tool.permissions_assign(address, all);
            }
        }
    }

    /// Forgets every array (the arena was reset).
    pub(crate) fn cleared(&mut self) {
        if self.entries.is_empty() {
            return;
        }
        self.entries.clear();
        if let Some(tool) = self.tool {
            for heap in &self.heaps {
                tool.heap_reset(heap.handle);
            }
        }
    }

    /// The buffer now ends at `capacity` (a trim gave the rest back): heaps
    /// beyond it are unregistered (no array lives there).
    pub(crate) fn trimmed(&mut self, base: u64, capacity: u64) {
        while let Some(heap) = self.heaps.last() {
            if heap.end <= capacity {
                break;
            }
            let start = heap.start;
            if let Some(tool) = self.tool {
                tool.heap_unregister(heap.handle);
            }
            self.heaps.pop();
            // A heap cut in the middle keeps its part below `capacity`.
            if start < capacity {
                self.register_heap(base, start, capacity);
            }
        }
    }

    /// Registers the buffer's bytes beyond the last heap, up to `capacity`.
    fn cover(&mut self, base: u64, capacity: u64) {
        let covered = self.heaps.last().map_or(0, |heap| heap.end);
        if covered < capacity {
            self.register_heap(base, covered, capacity);
        }
    }

    fn register_heap(&mut self, base: u64, start: u64, end: u64) {
        let handle = match self.tool {
            Some(tool) => tool.heap_register(base.wrapping_add(start), end - start),
            // Nothing to tell; still track the coverage.
            None => Some(nvtx::HeapHandle::NONE),
        };
        if let Some(handle) = handle {
            self.heaps.push(HeapRange { start, end, handle });
        }
    }

    fn heap_of(&self, offset: u64) -> Option<nvtx::HeapHandle> {
        self.heaps
            .iter()
            .find(|heap| heap.start <= offset && offset < heap.end)
            .map(|heap| heap.handle)
    }

    fn region(&self, base: u64, offset: u64) -> Option<Region> {
        let mut region = self.entries.get(&offset)?.clone();
        region.address = base.wrapping_add(offset);
        Some(region)
    }

    /// The live arrays, by address: those recorded, but for the ones at `dropped` (offsets of
    /// arrays dropped that the arena has not taken back yet).
    pub(crate) fn map(&self, base: u64, dropped: &[u64]) -> RegionMap {
        RegionMap {
            regions: self
                .entries
                .keys()
                .filter(|offset| !dropped.contains(offset))
                .filter_map(|&offset| self.region(base, offset))
                .collect(),
        }
    }
}

impl Drop for Regions {
    fn drop(&mut self) {
        if let Some(tool) = self.tool {
            for heap in &self.heaps {
                tool.heap_unregister(heap.handle);
            }
        }
    }
}

/// `core::any::type_name` without module paths: `gpu_aligned::vector::float4`
/// becomes `float4`, `[u8; 4]` stays, `my::Pair<my::X>` becomes `Pair<X>`.
pub(crate) fn short_type_name(name: &'static str) -> &'static str {
    // Generic names keep their paths rather than allocate: a `&'static str`
    // cannot be rebuilt without leaking.
    if name.contains('<') {
        return name;
    }
    match name.rfind("::") {
        Some(at) => &name[at + 2..],
        None => name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn red_zones_are_whole_granules_of_at_least_one_stride() {
        let mut regions = Regions::new(false);
        regions.set_red_zones(false);
        assert_eq!(regions.red_zone(4, 256), 0);
        regions.set_red_zones(true);
        assert_eq!(regions.red_zone(4, 256), 256);
        assert_eq!(regions.red_zone(256, 256), 256);
        assert_eq!(regions.red_zone(2560, 256), 2560);
        assert_eq!(regions.red_zone(2561, 256), 2816);
    }

    #[test]
    fn the_map_finds_the_array_an_address_overruns() {
        let mut regions = Regions::new(false);
        regions.set_red_zones(true);
        let base = 0x7000_0000;
        regions.reserved(base, 1 << 20, 0, 1024, 256);
        regions.named(base, 0, "f32", RegionShape::Array { len: 256 });
        regions.reserved(base, 1 << 20, 1280, 40, 256);
        regions.named(
            base,
            1280,
            "gpu_aligned::vector::float4",
            RegionShape::Array { len: 2 },
        );
        assert!(regions.labelled(base, 1280, "points"));
        let map = regions.map(base, &[]);
        assert_eq!(map.regions().len(), 2);
        let (a, at) = map.nearest(base + 1024).unwrap();
        assert_eq!((a.address, at), (base, Nearest::After(0)));
        assert_eq!(alloc_crate::format!("{}", a.name()), "f32[256]");
        let (b, at) = map.nearest(base + 1279).unwrap();
        assert_eq!((b.address, at), (base + 1280, Nearest::Before(1)));
        assert_eq!(alloc_crate::format!("{}", b.name()), "float4[2] \"points\"");
        assert_eq!(map.starting_at(base + 1280), Some(b));
        assert_eq!(
            alloc_crate::format!("{a}"),
            "0x70000000 of size 1,024 bytes (+256 red zone): f32[256]"
        );
        regions.released(base, 0);
        assert_eq!(regions.map(base, &[]).regions().len(), 1);
        regions.cleared();
        assert!(regions.map(base, &[]).regions().is_empty());
    }

    #[test]
    fn sizes_are_grouped_like_the_sanitizers() {
        let grouped = |n| alloc_crate::format!("{}", Grouped(n));
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1_048_576), "1,048,576");
    }
}
