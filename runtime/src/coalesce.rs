//! A model of how a warp's global-memory access turns into DRAM traffic, so layouts can be priced
//! before a kernel exists: a request is served as the distinct 32-byte sectors its lanes touch
//! (docs/RESULTS.md, "The hardware"). [`measure`] is the primitive, [`WarpAccess`] prices regular
//! patterns and [`ElementFacts`] a type's own costs.
//!
//! ```
//! use gpu_aligned::coalesce::{ElementFacts, WarpAccess};
//! use gpu_aligned::vector::float3_16_t;
//! use gpu_aligned::GpuAligned;
//!
//! // 32 consecutive floats: 4 sectors from an aligned base, 5 shifted by 4 bytes.
//! assert_eq!(WarpAccess::contiguous(0, 4).measure().sectors, 4);
//! assert_eq!(WarpAccess::contiguous(4, 4).measure().efficiency(), 0.8);
//! // A float3 padded to 16 bytes: one instruction, a quarter of each element unused.
//! let facts = ElementFacts::of(&float3_16_t::LAYOUT);
//! assert_eq!((facts.one_word, facts.loads_field_by_field), (true, 3));
//! assert_eq!(facts.useful_ratio(), 0.75);
//! ```

use crate::layout::{GpuField, GpuLayout, GpuType};

/// Bytes in one sector, the unit DRAM traffic is counted in.
pub const SECTOR_BYTES: u64 = 32;

/// Lanes in a warp.
pub const WARP_LANES: usize = 32;

/// What one warp-wide access costs: the distinct sectors and the distinct
/// bytes touched when each lane accesses `access_bytes` bytes from its
/// address. Lanes may repeat or overlap; never panics or overflows.
///
/// ```
/// use gpu_aligned::coalesce::{measure, Coalescing};
/// // Each lane reads a float 4 KiB from the next: one sector each, 4 of its 32 bytes used.
/// let scattered: Vec<u64> = (0..32).map(|lane| lane * 4096).collect();
/// let cost = measure(&scattered, 4);
/// assert_eq!(cost, Coalescing { sectors: 32, useful_bytes: 128 });
/// assert_eq!(cost.efficiency(), 0.125);
/// // 32 lanes reading the same 4 bytes; two 8-byte reads overlapping by 4.
/// assert_eq!(measure(&[64; 32], 4), Coalescing { sectors: 1, useful_bytes: 4 });
/// assert_eq!(measure(&[0, 4], 8).useful_bytes, 12);
/// ```
pub fn measure(lane_addresses: &[u64], access_bytes: u64) -> Coalescing {
    Coalescing {
        sectors: distinct_units(lane_addresses, access_bytes, SECTOR_BYTES),
        useful_bytes: distinct_units(lane_addresses, access_bytes, 1),
    }
}

/// What one warp-wide access costs.
///
/// ```
/// use gpu_aligned::coalesce::WarpAccess;
/// // 32 doubles, consecutive: 256 bytes in 8 sectors, all of them used.
/// let cost = WarpAccess::contiguous(0, 8).measure();
/// assert_eq!((cost.sectors, cost.useful_bytes, cost.fetched_bytes()), (8, 256, 256));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Coalescing {
    /// Distinct 32-byte sectors fetched.
    pub sectors: u64,
    /// Distinct bytes the lanes asked for.
    pub useful_bytes: u64,
}

impl Coalescing {
    /// Bytes the memory system moves: `32 * sectors`.
    pub const fn fetched_bytes(&self) -> u64 {
        self.sectors.saturating_mul(SECTOR_BYTES)
    }

    /// Useful bytes over fetched bytes, in `0.0..=1.0`; 1.0 when nothing is
    /// fetched (nothing was wasted).
    ///
    /// ```
    /// use gpu_aligned::coalesce::Coalescing;
    /// assert_eq!(Coalescing { sectors: 5, useful_bytes: 128 }.efficiency(), 0.8);
    /// assert_eq!(Coalescing { sectors: 0, useful_bytes: 0 }.efficiency(), 1.0);
    /// ```
    pub fn efficiency(&self) -> f64 {
        if self.sectors == 0 {
            return 1.0;
        }
        self.useful_bytes as f64 / self.fetched_bytes() as f64
    }
}

/// Counts the distinct `unit`-aligned blocks the lanes' ranges of `access_bytes` cover, without
/// allocating: runs of the union are swept in increasing order (quadratic in the 32 lanes).
fn distinct_units(lane_addresses: &[u64], access_bytes: u64, unit: u64) -> u64 {
    if access_bytes == 0 || unit == 0 {
        return 0;
    }
    // Block indices of a lane's first and last byte, in u128 past
    // u64::MAX, clamped to the last addressable block.
    let span = |address: u64| -> (u64, u64) {
        let last_byte = u128::from(address) + u128::from(access_bytes) - 1;
        let last = (last_byte / u128::from(unit)).min(u128::from(u64::MAX / unit)) as u64;
        (address / unit, last)
    };
    let mut counted = 0u64;
    // Every block <= `covered` that belongs to the union has been counted.
    let mut covered: Option<u64> = None;
    loop {
        // `Option::is_none_or` would read better but needs Rust 1.82.
        let above = |last: u64| match covered {
            None => true,
            Some(c) => last > c,
        };
        let Some(run_start) = lane_addresses
            .iter()
            .map(|&a| span(a))
            .filter(|&(_, last)| above(last))
            .map(|(first, _)| covered.map_or(first, |c| first.max(c + 1)))
            .min()
        else {
            return counted;
        };
        let mut run_end = run_start;
        loop {
            let reach = lane_addresses
                .iter()
                .map(|&a| span(a))
                .filter(|&(first, last)| first <= run_end.saturating_add(1) && last > run_end)
                .map(|(_, last)| last)
                .max();
            match reach {
                Some(last) => run_end = last,
                None => break,
            }
        }
        // 2^64 units is one more than u64 holds: saturate.
        counted = counted
            .saturating_add(run_end - run_start)
            .saturating_add(1);
        if run_end == u64::MAX {
            return counted;
        }
        covered = Some(run_end);
    }
}

/// A regular warp-wide access: lane `i` reads `width` bytes at
/// `base + i * stride`, for `lanes` lanes (32 for a full warp).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WarpAccess {
    /// Address (or offset from a 256-aligned allocation) of lane 0's access.
    pub base: u64,
    /// Bytes between consecutive lanes' accesses.
    pub stride: u64,
    /// Bytes each lane reads.
    pub width: u64,
    /// Active lanes, at most [`WARP_LANES`]; more are treated as 32.
    pub lanes: usize,
}

impl WarpAccess {
    /// A full warp reading consecutive `width`-byte elements from `base`.
    pub const fn contiguous(base: u64, width: u64) -> Self {
        Self::strided(base, width, width)
    }

    /// A full warp reading `width` bytes every `stride` bytes from `base`.
    ///
    /// ```
    /// use gpu_aligned::coalesce::WarpAccess;
    /// // Every 8th float: each lane in a sector of its own, 12.5% used.
    /// let cost = WarpAccess::strided(0, 32, 4).measure();
    /// assert_eq!((cost.sectors, cost.efficiency()), (32, 0.125));
    /// // A stride of 0 is a broadcast: one sector.
    /// assert_eq!(WarpAccess::strided(64, 0, 4).measure().sectors, 1);
    /// ```
    pub const fn strided(base: u64, stride: u64, width: u64) -> Self {
        Self {
            base,
            stride,
            width,
            lanes: WARP_LANES,
        }
    }

    /// A full warp reading one field of consecutive elements of an array of
    /// structs starting at `base`.
    pub const fn field_of(base: u64, layout: &GpuLayout, field: &GpuField) -> Self {
        Self::strided(
            base.saturating_add(field.offset as u64),
            layout.size as u64,
            field.size as u64,
        )
    }

    /// The lanes' addresses; only the first `min(lanes, 32)` entries are
    /// meaningful. Saturates at `u64::MAX` instead of wrapping.
    ///
    /// ```
    /// use gpu_aligned::coalesce::WarpAccess;
    /// let lanes = WarpAccess::strided(256, 12, 4).addresses();
    /// assert_eq!((lanes[0], lanes[1], lanes[31]), (256, 268, 256 + 31 * 12));
    /// assert_eq!(WarpAccess::strided(u64::MAX, 4, 4).addresses()[31], u64::MAX);
    /// ```
    pub fn addresses(&self) -> [u64; WARP_LANES] {
        let mut addresses = [0; WARP_LANES];
        for (lane, address) in (0u64..).zip(addresses.iter_mut()) {
            *address = self.base.saturating_add(self.stride.saturating_mul(lane));
        }
        addresses
    }

    /// Sectors and useful bytes of this access.
    ///
    /// ```
    /// use gpu_aligned::coalesce::{Coalescing, WarpAccess};
    /// // 32 packed 12-byte float3s: 384 bytes in 12 sectors.
    /// let cost = WarpAccess::contiguous(0, 12).measure();
    /// assert_eq!(cost, Coalescing { sectors: 12, useful_bytes: 384 });
    /// ```
    pub fn measure(&self) -> Coalescing {
        let addresses = self.addresses();
        measure(&addresses[..self.lanes.min(WARP_LANES)], self.width)
    }
}

/// The costs that follow from a type's layout alone.
///
/// ```
/// use gpu_aligned::coalesce::ElementFacts;
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(16))]
/// struct Sample {
///     value: f32,
///     #[gpu_aligned(padding)]
///     pad: u32,
///     time: f64,
/// }
///
/// let facts = ElementFacts::of(&Sample::LAYOUT);
/// assert_eq!((facts.size, facts.data_bytes, facts.padding_bytes), (16, 12, 4));
/// assert_eq!(facts.loads_field_by_field, 2);
/// assert!(facts.one_word);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementFacts {
    /// Bytes per element.
    pub size: u64,
    /// Bytes of real data per element.
    pub data_bytes: u64,
    /// Bytes per element that carry no data ([`GpuLayout::total_padding`]).
    pub padding_bytes: u64,
    /// Global-memory instructions one element costs loaded field by field
    /// (one per word-sized value, per lane of a `float3`, per array
    /// element), as a naive copy asks; nvcc may merge neighbours.
    pub loads_field_by_field: u64,
    /// Whether one instruction moves the whole element.
    pub one_word: bool,
}

impl ElementFacts {
    /// The facts of `layout`; one without fields is all data, one load.
    ///
    /// ```
    /// use gpu_aligned::coalesce::ElementFacts;
    /// use gpu_aligned::vector::int8_3_4_t;
    /// use gpu_aligned::GpuAligned;
    ///
    /// // Three bytes in a 4-byte word: one load instead of three.
    /// const FACTS: ElementFacts = ElementFacts::of(&int8_3_4_t::LAYOUT);
    /// assert_eq!((FACTS.one_word, FACTS.loads_field_by_field), (true, 3));
    /// assert_eq!(FACTS.padding_bytes, 1);
    /// ```
    pub const fn of(layout: &GpuLayout) -> Self {
        let opaque = layout.fields.is_empty();
        let padding = if opaque { 0 } else { layout.total_padding() };
        Self {
            size: layout.size as u64,
            data_bytes: layout.size.saturating_sub(padding) as u64,
            padding_bytes: padding as u64,
            loads_field_by_field: if opaque { 1 } else { struct_loads(layout) },
            one_word: layout.is_one_word(),
        }
    }

    /// Data bytes over element bytes: the efficiency ceiling of any access
    /// that reads whole elements.
    pub fn useful_ratio(&self) -> f64 {
        if self.size == 0 {
            return 1.0;
        }
        self.data_bytes as f64 / self.size as f64
    }

    /// Padding bytes moved per byte of data.
    ///
    /// ```
    /// use gpu_aligned::coalesce::ElementFacts;
    /// use gpu_aligned::vector::float3_16_t;
    /// use gpu_aligned::GpuAligned;
    ///
    /// let overhead = ElementFacts::of(&float3_16_t::LAYOUT).padding_overhead();
    /// assert!((overhead - 1.0 / 3.0).abs() < 1e-12);
    /// ```
    pub fn padding_overhead(&self) -> f64 {
        if self.data_bytes == 0 {
            return 0.0;
        }
        self.padding_bytes as f64 / self.data_bytes as f64
    }

    /// Cost of a full warp reading 32 consecutive whole elements from a 256-byte-aligned base.
    ///
    /// ```
    /// use gpu_aligned::coalesce::ElementFacts;
    /// use gpu_aligned::vector::float3_16_t;
    /// use gpu_aligned::GpuAligned;
    ///
    /// // 32 padded float3s: 512 bytes in 16 sectors, 384 of them data.
    /// let cost = ElementFacts::of(&float3_16_t::LAYOUT).warp_of_elements();
    /// assert_eq!((cost.sectors, cost.useful_bytes, cost.efficiency()), (16, 384, 0.75));
    /// ```
    pub fn warp_of_elements(&self) -> Coalescing {
        let whole = WarpAccess::contiguous(0, self.size).measure();
        let lanes = WARP_LANES as u64;
        Coalescing {
            sectors: whole.sectors,
            useful_bytes: whole
                .useful_bytes
                .saturating_sub(self.padding_bytes.saturating_mul(lanes)),
        }
    }
}

const fn struct_loads(layout: &GpuLayout) -> u64 {
    let mut loads = 0u64;
    let mut i = 0;
    while i < layout.fields.len() {
        let field = &layout.fields[i];
        if !field.is_padding {
            loads = loads.saturating_add(type_loads(&field.ty));
        }
        i += 1;
    }
    loads
}

const fn type_loads(ty: &GpuType) -> u64 {
    match ty {
        GpuType::Scalar(_) => 1,
        GpuType::Array { elem, len } => type_loads(elem).saturating_mul(*len as u64),
        GpuType::Vector { lanes, align, .. } => {
            if ty.size() == *align {
                1
            } else {
                *lanes as u64
            }
        }
        GpuType::Struct(inner) => struct_loads(inner),
        GpuType::AlignMarker(_) => 0,
    }
}

mod advisor;

pub use advisor::{
    advise, predict, Access, Advice, AdviceError, Cost, Fields, Order, Storage, DRAM_BLOCK_BYTES,
    LINE_BYTES, STORE_REQUEST_BYTES, TIE,
};
