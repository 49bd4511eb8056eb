//! The layout advisor: given a struct and what a kernel does with it, it
//! predicts the traffic and instructions per element of an array of structs,
//! a padded one (16-byte slots) and a structure of arrays, and picks one.
//!
//! The model (fitted on an H100; docs/LAYOUT-MEASUREMENTS.md says how well it predicts): DRAM moves
//! 64-byte blocks, each once when walked in order, per element when gathered; each warp-wide store
//! costs a request per 128-byte line, worth [`STORE_REQUEST_BYTES`]; time is the larger of the two,
//! and layouts within [`TIE`] are ranked by instructions, then arrays. A uniform read
//! ([`Order::Uniform`]) stays in cache and is priced by the instructions and sectors it requests.
//!
//! ```
//! use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
//! use gpu_aligned::vector::float4;
//! use gpu_aligned::GpuAligned;
//!
//! // A float4 read at random indices: one 16-byte word, one DRAM block.
//! let advice = advise(&float4::LAYOUT, &Access::gather(Fields::All, Fields::None))?;
//! assert_eq!(advice.best, Storage::Aos);
//! assert_eq!(advice.cost(Storage::Aos).bytes(), 64.0);
//! # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
//! ```

use super::{distinct_units, WarpAccess, SECTOR_BYTES, WARP_LANES};
use crate::align::const_round_up;
use crate::layout::{GpuField, GpuLayout, GpuType};
use crate::rules::MAX_WORD;
use core::fmt;

/// Bytes DRAM moves for each block an access touches.
pub const DRAM_BLOCK_BYTES: u64 = 64;

/// DRAM bytes that take as long as one store request, on an H100 (docs/SOA.md).
pub const STORE_REQUEST_BYTES: f64 = 82.0;

/// The line a store request is counted in.
pub const LINE_BYTES: u64 = 128;

/// Layouts within this fraction of the fastest are ranked by instructions,
/// then by arrays: the model cannot tell them apart.
pub const TIE: f64 = 0.05;

/// How a kernel walks the array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// Consecutive threads take consecutive elements, and the whole array is covered.
    Streaming,
    /// Each element is taken at a random index.
    Gather,
    /// Every lane of a warp takes the same element (a scene table, a BVH
    /// node), which stays in cache.
    Uniform,
}

/// One of the layouts the advisor compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    /// The struct stored whole, `size_of` bytes apart.
    Aos,
    /// The struct stored whole in 16-aligned slots of a multiple of 16 bytes.
    PaddedAos,
    /// One column per field.
    Soa,
}

impl Storage {
    /// The three layouts, in the order preferred among equals.
    pub const ALL: [Storage; 3] = [Storage::Aos, Storage::PaddedAos, Storage::Soa];

    /// What the layout is called in a report.
    pub const fn name(self) -> &'static str {
        match self {
            Storage::Aos => "array of structs",
            Storage::PaddedAos => "padded array of structs",
            Storage::Soa => "structure of arrays",
        }
    }
}

/// Which fields of the struct a kernel reads, or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fields<'a> {
    /// No field.
    None,
    /// Every data field (padding is never read for its value).
    All,
    /// The fields with these names.
    Only(&'a [&'a str]),
}

/// What a kernel does with each element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access<'a> {
    /// The fields it reads.
    pub reads: Fields<'a>,
    /// The fields it writes.
    pub writes: Fields<'a>,
    /// How it walks the array.
    pub order: Order,
}

impl<'a> Access<'a> {
    /// A kernel that walks the array in order ([`Order::Streaming`]).
    pub const fn streaming(reads: Fields<'a>, writes: Fields<'a>) -> Self {
        Self::new(reads, writes, Order::Streaming)
    }

    /// A kernel that takes elements at random indices ([`Order::Gather`]).
    pub const fn gather(reads: Fields<'a>, writes: Fields<'a>) -> Self {
        Self::new(reads, writes, Order::Gather)
    }

    const fn new(reads: Fields<'a>, writes: Fields<'a>, order: Order) -> Self {
        Self {
            reads,
            writes,
            order,
        }
    }

    /// A kernel whose warps read one element with every lane at once (see [`Order::Uniform`]).
    ///
    /// ```
    /// use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
    /// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
    ///
    /// const F32: GpuType = GpuType::Scalar(Scalar::F32);
    /// // A sphere: centre, radius, colour, roughness; 32 bytes, align 4.
    /// static SPHERE: GpuLayout = GpuLayout::new("Sphere", 32, 4, 0, &[
    ///     GpuField::new("x", 0, 4, 4, false, F32), GpuField::new("y", 4, 4, 4, false, F32),
    ///     GpuField::new("z", 8, 4, 4, false, F32), GpuField::new("radius", 12, 4, 4, false, F32),
    ///     GpuField::new("r", 16, 4, 4, false, F32), GpuField::new("g", 20, 4, 4, false, F32),
    ///     GpuField::new("b", 24, 4, 4, false, F32), GpuField::new("rough", 28, 4, 4, false, F32),
    /// ]);
    /// // Every thread tests every sphere: two 16-byte words a sphere, one
    /// // sector each, where columns take eight loads and eight sectors.
    /// let advice = advise(&SPHERE, &Access::uniform(Fields::All, Fields::None))?;
    /// assert_eq!(advice.best, Storage::PaddedAos);
    /// assert_eq!(advice.cost(Storage::PaddedAos).instructions, 2);
    /// assert_eq!(advice.cost(Storage::Soa).instructions, 8);
    /// assert_eq!(advice.ratio(Storage::Soa), 4.0);
    /// # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
    /// ```
    pub const fn uniform(reads: Fields<'a>, writes: Fields<'a>) -> Self {
        Self::new(reads, writes, Order::Uniform)
    }
}

/// Why an access pattern cannot be priced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdviceError<'a> {
    /// A named field that the struct does not have (or that is padding).
    UnknownField {
        /// The name as given.
        name: &'a str,
    },
    /// The kernel reads and writes nothing.
    NothingAccessed,
    /// The layout has no data fields or a stride of zero.
    Empty,
    /// The layout is larger than `isize::MAX` bytes.
    TooLarge {
        /// The layout's size.
        size: usize,
    },
}

impl fmt::Display for AdviceError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdviceError::UnknownField { name } => {
                write!(f, "the struct has no data field called `{name}`")
            }
            AdviceError::NothingAccessed => f.write_str("the kernel reads and writes no field"),
            AdviceError::Empty => f.write_str("the layout has no data to lay out"),
            AdviceError::TooLarge { size } => write!(
                f,
                "the layout is {size} bytes, more than any object can be (isize::MAX)"
            ),
        }
    }
}

impl core::error::Error for AdviceError<'_> {}

/// The predicted cost of one layout, per element (per warp and element,
/// in sectors requested, for a uniform access).
///
/// ```
/// use gpu_aligned::coalesce::{predict, Access, Fields, Storage, SECTOR_BYTES};
/// use gpu_aligned::vector::float4;
/// use gpu_aligned::GpuAligned;
///
/// // A warp reads two lanes of one float4, field by field: two loads, each
/// // of one sector (the same one, requested twice).
/// let access = Access::uniform(Fields::Only(&["x", "y"]), Fields::None);
/// let cost = predict(&float4::LAYOUT, &access, Storage::Aos)?;
/// assert_eq!(cost.instructions, 2);
/// assert_eq!(cost.read_bytes, 2.0 * SECTOR_BYTES as f64);
/// # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cost {
    /// The layout.
    pub storage: Storage,
    /// Bytes fetched from DRAM per element.
    pub read_bytes: f64,
    /// Bytes written back to DRAM per element.
    pub write_bytes: f64,
    /// Store requests (128-byte lines per warp-wide store) per element.
    pub store_requests: f64,
    /// Global-memory load and store instructions per element.
    pub instructions: u64,
    /// Arrays the kernel touches (one per used field for columns).
    pub arrays: usize,
}

impl Cost {
    /// DRAM bytes moved per element, both ways.
    pub fn bytes(&self) -> f64 {
        self.read_bytes + self.write_bytes
    }

    /// The predicted time per element in DRAM bytes: the larger of
    /// [`Cost::bytes`] and the store requests' worth.
    ///
    /// ```
    /// use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
    /// use gpu_aligned::GpuAligned;
    ///
    /// // Read and written in place: 4 bytes each way, and store requests
    /// // that take less time than those 8 bytes.
    /// let advice = advise(&u32::LAYOUT, &Access::streaming(Fields::All, Fields::All))?;
    /// let cost = advice.cost(Storage::Soa);
    /// assert_eq!((cost.bytes(), cost.time()), (8.0, 8.0));
    /// # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
    /// ```
    pub fn time(&self) -> f64 {
        self.bytes().max(self.store_requests * STORE_REQUEST_BYTES)
    }
}

/// The three predictions and the pick; `Display` prints them as a table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Advice<'a> {
    /// The struct.
    pub layout: &'a GpuLayout,
    /// What the kernel does.
    pub access: Access<'a>,
    /// One cost per layout, in [`Storage::ALL`] order.
    pub costs: [Cost; 3],
    /// The recommended layout.
    pub best: Storage,
}

impl Advice<'_> {
    /// The cost predicted for `storage`.
    pub fn cost(&self, storage: Storage) -> &Cost {
        let index = Storage::ALL.iter().position(|s| *s == storage).unwrap_or(0);
        &self.costs[index]
    }

    /// How many times longer than the recommended layout `storage` is predicted to take.
    ///
    /// ```
    /// use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
    /// use gpu_aligned::vector::float3_16_t;
    /// use gpu_aligned::GpuAligned;
    ///
    /// // Reading a 16-byte element at random: one DRAM block in every layout
    /// // but columns, which fetch one block per field.
    /// let advice = advise(&float3_16_t::LAYOUT, &Access::gather(Fields::All, Fields::None))?;
    /// assert_eq!(advice.best, Storage::Aos);
    /// assert_eq!(advice.ratio(Storage::Soa), 3.0);
    /// # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
    /// ```
    pub fn ratio(&self, storage: Storage) -> f64 {
        let best = self.cost(self.best).time();
        if best == 0.0 {
            return 1.0;
        }
        self.cost(storage).time() / best
    }
}

/// Predicts the three layouts' costs for `access` over `layout` and picks the cheapest.
///
/// ```
/// use gpu_aligned::coalesce::{advise, Access, Fields, Storage};
/// use gpu_aligned::{GpuField, GpuLayout, GpuType, Scalar};
///
/// const F32: GpuType = GpuType::Scalar(Scalar::F32);
/// // 32 bytes: eight floats.
/// static BODY: GpuLayout = GpuLayout::new("Body", 32, 4, 0, &[
///     GpuField::new("x", 0, 4, 4, false, F32), GpuField::new("y", 4, 4, 4, false, F32),
///     GpuField::new("z", 8, 4, 4, false, F32), GpuField::new("vx", 12, 4, 4, false, F32),
///     GpuField::new("vy", 16, 4, 4, false, F32), GpuField::new("vz", 20, 4, 4, false, F32),
///     GpuField::new("mass", 24, 4, 4, false, F32), GpuField::new("charge", 28, 4, 4, false, F32),
/// ]);
/// let one_field = Access::streaming(Fields::Only(&["mass"]), Fields::None);
/// let advice = advise(&BODY, &one_field)?;
/// assert_eq!(advice.best, Storage::Soa);
/// assert_eq!(advice.ratio(Storage::Aos), 8.0);
/// # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
/// ```
///
/// # Errors
///
/// [`AdviceError`] for a field name the struct does not have, an access
/// that touches nothing, or a layout with no data.
pub fn advise<'a>(
    layout: &'a GpuLayout,
    access: &Access<'a>,
) -> Result<Advice<'a>, AdviceError<'a>> {
    let costs = [
        predict(layout, access, Storage::Aos)?,
        predict(layout, access, Storage::PaddedAos)?,
        predict(layout, access, Storage::Soa)?,
    ];
    let fastest = costs.iter().map(Cost::time).fold(f64::INFINITY, f64::min);
    let best = costs
        .iter()
        .filter(|cost| cost.time() <= fastest * (1.0 + TIE))
        .min_by_key(|cost| (cost.instructions, cost.arrays))
        .map_or(Storage::Aos, |cost| cost.storage);
    Ok(Advice {
        layout,
        access: *access,
        costs,
        best,
    })
}

/// The cost of `access` over `layout` stored as `storage`.
///
/// ```
/// use gpu_aligned::coalesce::{predict, Access, Fields, Storage};
/// use gpu_aligned::vector::float4;
/// use gpu_aligned::GpuAligned;
///
/// let cost = predict(&float4::LAYOUT, &Access::streaming(Fields::All, Fields::All), Storage::PaddedAos)?;
/// assert_eq!((cost.bytes(), cost.instructions), (32.0, 2));
/// # Ok::<(), gpu_aligned::coalesce::AdviceError<'static>>(())
/// ```
///
/// # Errors
///
/// As for [`advise`].
pub fn predict<'a>(
    layout: &'a GpuLayout,
    access: &Access<'a>,
    storage: Storage,
) -> Result<Cost, AdviceError<'a>> {
    if layout.size == 0 || data_fields(layout).next().is_none() {
        return Err(AdviceError::Empty);
    }
    if layout.size > isize::MAX as usize {
        return Err(AdviceError::TooLarge { size: layout.size });
    }
    check_names(layout, access.reads)?;
    check_names(layout, access.writes)?;
    if matches!(
        (access.reads, access.writes),
        (
            Fields::None | Fields::Only(&[]),
            Fields::None | Fields::Only(&[])
        )
    ) {
        return Err(AdviceError::NothingAccessed);
    }
    let reads = Direction::of(layout, access, access.reads, storage, false);
    let writes = Direction::of(layout, access, access.writes, storage, true);
    let arrays = match storage {
        Storage::Aos | Storage::PaddedAos => 1,
        Storage::Soa => data_fields(layout)
            .filter(|field| selects(access.reads, field.name) || selects(access.writes, field.name))
            .count(),
    };
    Ok(Cost {
        storage,
        read_bytes: reads.bytes,
        write_bytes: writes.bytes,
        store_requests: writes.requests,
        instructions: reads.instructions.saturating_add(writes.instructions),
        arrays,
    })
}

/// A data field (a layout without fields is one, the whole value).
#[derive(Clone, Copy)]
struct Part<'a> {
    name: &'a str,
    offset: usize,
    size: usize,
    instructions: u64,
}

fn data_fields(layout: &GpuLayout) -> impl Iterator<Item = Part<'_>> + Clone {
    let whole = layout.fields.is_empty().then_some(Part {
        name: layout.name,
        offset: 0,
        size: layout.size,
        instructions: 1,
    });
    layout
        .fields
        .iter()
        .filter(|field| !field.is_padding)
        .map(|field: &GpuField| Part {
            name: field.name,
            offset: field.offset,
            size: field.size,
            instructions: instructions_of(&field.ty),
        })
        .chain(whole)
}

fn check_names<'a>(layout: &GpuLayout, fields: Fields<'a>) -> Result<(), AdviceError<'a>> {
    if let Fields::Only(names) = fields {
        for name in names {
            if !data_fields(layout).any(|field| field.name == *name) {
                return Err(AdviceError::UnknownField { name });
            }
        }
    }
    Ok(())
}

fn selects(fields: Fields<'_>, name: &str) -> bool {
    match fields {
        Fields::None => false,
        Fields::All => true,
        Fields::Only(names) => names.contains(&name),
    }
}

/// Instructions one value of `ty` costs when moved on its own.
fn instructions_of(ty: &GpuType) -> u64 {
    if ty.is_one_word() {
        1
    } else {
        super::type_loads(ty).max(1)
    }
}

/// The traffic of the loads, or of the stores, of one element.
#[derive(Default)]
struct Direction {
    bytes: f64,
    requests: f64,
    instructions: u64,
}

impl Direction {
    fn of(
        layout: &GpuLayout,
        access: &Access<'_>,
        fields: Fields<'_>,
        storage: Storage,
        writes: bool,
    ) -> Self {
        let mut total = Direction::default();
        let used = || data_fields(layout).filter(move |field| selects(fields, field.name));
        if used().next().is_none() {
            return total;
        }
        let order = access.order;
        let every = data_fields(layout).all(|field| selects(fields, field.name));
        if order == Order::Uniform {
            for moves in Moves::of(layout, fields, storage, every) {
                total.bytes += moves.units(SECTOR_BYTES) * SECTOR_BYTES as f64;
                if writes {
                    total.requests += moves.units(LINE_BYTES);
                }
                total.instructions = total.instructions.saturating_add(moves.count);
            }
            return total;
        }
        match storage {
            Storage::Soa => {
                for field in used() {
                    let size = field.size as u64;
                    total.bytes += Span::new(size, &[(0, size)]).dram_bytes(order);
                    if writes {
                        total.requests += requests(size, 0, size, order);
                    }
                    total.instructions = total.instructions.saturating_add(field.instructions);
                }
            }
            Storage::Aos | Storage::PaddedAos => {
                let (stride, word) = slot(layout, storage);
                if every {
                    total.bytes += Span::new(stride, &[(0, stride)]).dram_bytes(order);
                    let words = stride / word;
                    total.instructions = total.instructions.saturating_add(words);
                    if writes {
                        // The count repeats every `LINE_BYTES / word`
                        // words: sum one period, not a huge slot's words.
                        let period = (LINE_BYTES / word).max(1);
                        let sum = |count: u64| -> f64 {
                            (0..count)
                                .map(|k| requests(stride, k * word, word, order))
                                .sum()
                        };
                        total.requests +=
                            (words / period) as f64 * sum(period.min(words)) + sum(words % period);
                    }
                } else {
                    let mut ranges = [(0u64, 0u64); MAX_RANGES];
                    let mut count = 0;
                    // Ranges past MAX_RANGES merge into the last.
                    for field in used() {
                        let (start, size) = (field.offset as u64, field.size as u64);
                        total.instructions = total.instructions.saturating_add(field.instructions);
                        if writes {
                            total.requests += requests(stride, start, size, order);
                        }
                        if count < MAX_RANGES {
                            ranges[count] = (start, start.saturating_add(size));
                            count += 1;
                        } else {
                            ranges[MAX_RANGES - 1].1 = start.saturating_add(size);
                        }
                    }
                    total.bytes += Span::new(stride, &ranges[..count]).dram_bytes(order);
                }
            }
        }
        total
    }
}

/// The stride of a whole-struct layout and the word an element moves in
/// (columns get the packed answer, unread).
fn slot(layout: &GpuLayout, storage: Storage) -> (u64, u64) {
    let (stride, word) = match storage {
        Storage::PaddedAos => (
            const_round_up(layout.size, MAX_WORD) as u64,
            MAX_WORD as u64,
        ),
        Storage::Aos | Storage::Soa => (layout.size as u64, layout.align.min(MAX_WORD) as u64),
    };
    (stride, word.max(1))
}

/// `count` instructions of one element, each moving `width` bytes, the `k`-th at `offset + k *
/// width`, elements `stride` bytes apart (uniform pricing only).
#[derive(Clone, Copy, Debug)]
struct Moves {
    stride: u64,
    offset: u64,
    width: u64,
    count: u64,
}

impl Moves {
    /// The instructions that move `fields` of one element stored as
    /// `storage` (`every`: all data fields): words, or field by field.
    fn of<'l>(
        layout: &'l GpuLayout,
        fields: Fields<'l>,
        storage: Storage,
        every: bool,
    ) -> impl Iterator<Item = Moves> + 'l {
        let (stride, word) = slot(layout, storage);
        let words = (every && storage != Storage::Soa).then_some(Moves {
            stride,
            offset: 0,
            width: word,
            count: stride / word,
        });
        let by_field = !every || storage == Storage::Soa;
        data_fields(layout)
            .filter(move |field| by_field && selects(fields, field.name))
            .map(move |field| {
                let size = field.size as u64;
                let count = field.instructions.max(1);
                // A field of several loads splits into equal parts (an
                // approximation for a nested struct of mixed widths).
                let (stride, offset) = match storage {
                    Storage::Soa => (size, 0),
                    Storage::Aos | Storage::PaddedAos => (stride, field.offset as u64),
                };
                Moves {
                    stride,
                    offset,
                    width: size / count,
                    count,
                }
            })
            .chain(words)
    }

    /// `unit`-sized blocks the instructions touch per element, each instruction counting its own.
    fn units(&self, unit: u64) -> f64 {
        // The count repeats every `period` instructions: sum one period.
        let period = unit / gcd(self.width % unit, unit);
        let sum = |count: u64| -> f64 {
            (0..count)
                .map(|k| {
                    let start = self.offset.saturating_add(k.saturating_mul(self.width));
                    Span::new(self.stride, &[(start, start.saturating_add(self.width))])
                        .units(unit, true)
                })
                .sum()
        };
        (self.count / period) as f64 * sum(period.min(self.count)) + sum(self.count % period)
    }
}

/// Store requests per element of one warp-wide instruction moving `width` bytes at `offset`,
/// elements `stride` apart, averaged over where a warp can start within a line.
fn requests(stride: u64, offset: u64, width: u64, order: Order) -> f64 {
    let lanes = WARP_LANES as u64;
    match order {
        Order::Streaming => {
            let warp_bytes = stride.saturating_mul(lanes);
            let positions = LINE_BYTES / gcd(warp_bytes % LINE_BYTES, LINE_BYTES);
            let mut lines = 0u64;
            for position in 0..positions {
                let base =
                    (position * (warp_bytes % LINE_BYTES) % LINE_BYTES).saturating_add(offset);
                let addresses = WarpAccess::strided(base, stride, width).addresses();
                lines = lines.saturating_add(distinct_units(&addresses, width, LINE_BYTES));
            }
            lines as f64 / (positions * lanes) as f64
        }
        // Lanes take unrelated elements, or all one: each element touches its own lines.
        Order::Gather | Order::Uniform => {
            Span::new(stride, &[(offset, offset + width)]).units(LINE_BYTES, true)
        }
    }
}

/// Ranges one partial access prices at once; more are merged.
const MAX_RANGES: usize = 64;

const fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        let t = a % b;
        a = b;
        b = t;
    }
    a
}

/// Increasing byte ranges `[start, end)` within `[0, stride)` touched in
/// each element, from a base aligned to at least 128 bytes.
struct Span<'r> {
    stride: u64,
    ranges: &'r [(u64, u64)],
}

impl<'r> Span<'r> {
    fn new(stride: u64, ranges: &'r [(u64, u64)]) -> Self {
        Self { stride, ranges }
    }

    /// DRAM bytes per element: blocks touched in order (each once), or
    /// element by element for a gather.
    fn dram_bytes(&self, order: Order) -> f64 {
        let alone = order == Order::Gather;
        self.units(DRAM_BLOCK_BYTES, alone) * DRAM_BLOCK_BYTES as f64
    }

    /// `unit`-sized blocks touched per element, over a stretch after which positions repeat; a
    /// block shared by neighbours counts once unless `alone`.
    fn units(&self, unit: u64, alone: bool) -> f64 {
        let elements = unit / gcd(self.stride % unit, unit);
        let mut counted = 0u64;
        let mut last: Option<u64> = None;
        for element in 0..elements {
            let base = element.saturating_mul(self.stride);
            if alone {
                last = None;
            }
            for &(start, end) in self.ranges {
                if end <= start {
                    continue;
                }
                let first = base.saturating_add(start) / unit;
                let final_block = base.saturating_add(end - 1) / unit;
                let from = last.map_or(first, |l| first.max(l.saturating_add(1)));
                if final_block >= from {
                    counted = counted.saturating_add(final_block - from + 1);
                }
                last = Some(last.map_or(final_block, |l| l.max(final_block)));
            }
        }
        counted as f64 / elements as f64
    }
}

impl fmt::Display for Advice<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let order = match self.access.order {
            Order::Streaming => "walked in order",
            Order::Gather => "gathered at random indices",
            Order::Uniform => "each element taken by a whole warp at once",
        };
        let (traffic, scale) = match self.access.order {
            Order::Uniform => ("sectors", 1.0 / SECTOR_BYTES as f64),
            Order::Streaming | Order::Gather => ("DRAM bytes", 1.0),
        };
        write!(
            f,
            "{} ({} bytes, align {}), {order}; reads ",
            self.layout.name, self.layout.size, self.layout.align
        )?;
        write_fields(f, self.access.reads)?;
        f.write_str(", writes ")?;
        write_fields(f, self.access.writes)?;
        writeln!(f, ":")?;
        writeln!(
            f,
            "  {:<25}{:>11}{:>11}{:>14}{:>8}{:>7}",
            "layout", traffic, "store req", "instructions", "arrays", "time"
        )?;
        for cost in &self.costs {
            let mark = if cost.storage == self.best { '*' } else { ' ' };
            writeln!(
                f,
                "{mark} {:<25}{:>11.1}{:>11.2}{:>14}{:>8}{:>6.2}x",
                cost.storage.name(),
                cost.bytes() * scale,
                cost.store_requests,
                cost.instructions,
                cost.arrays,
                self.ratio(cost.storage),
            )?;
        }
        write!(f, "  recommended: {}", self.best.name())?;
        let mut first = true;
        for cost in self.costs.iter().filter(|c| c.storage != self.best) {
            f.write_str(if first { " (" } else { ", " })?;
            first = false;
            write!(
                f,
                "{} predicted {:.2}x slower",
                cost.storage.name(),
                self.ratio(cost.storage),
            )?;
        }
        if !first {
            f.write_str(")")?;
        }
        f.write_str("\n")
    }
}

fn write_fields(f: &mut fmt::Formatter<'_>, fields: Fields<'_>) -> fmt::Result {
    match fields {
        Fields::None => f.write_str("nothing"),
        Fields::All => f.write_str("every field"),
        Fields::Only(names) => {
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    f.write_str(" ")?;
                }
                f.write_str(name)?;
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Moves, Span};

    /// The blocks `moves` touches, walked instruction by instruction.
    fn walked(moves: Moves, unit: u64) -> f64 {
        (0..moves.count)
            .map(|k| {
                let start = moves.offset + k * moves.width;
                Span::new(moves.stride, &[(start, start + moves.width)]).units(unit, true)
            })
            .sum()
    }

    #[test]
    fn counting_a_period_of_instructions_is_walking_them_all() {
        // Widths that divide a sector, straddle one, or span several; odd
        // strides and offsets, so many instructions cross a boundary.
        for unit in [32, 128] {
            for width in [1, 3, 4, 12, 16, 40] {
                for stride in [4, 12, 52, 60, 100] {
                    for offset in [0, 2, 30] {
                        for count in [1, 3, 7, 33, 70] {
                            let moves = Moves {
                                stride,
                                offset,
                                width,
                                count,
                            };
                            let fast = moves.units(unit);
                            let slow = walked(moves, unit);
                            assert!(
                                (fast - slow).abs() < 1e-9 * slow.max(1.0),
                                "{moves:?} in {unit}-byte blocks: {fast} counted, {slow} walked"
                            );
                        }
                    }
                }
            }
        }
        // A 16-byte word inside one sector is one sector; a 4-byte field at
        // offset 30 straddles two in every element.
        let word = Moves {
            stride: 32,
            offset: 16,
            width: 16,
            count: 1,
        };
        assert_eq!(word.units(32), 1.0);
        let straddling = Moves {
            offset: 30,
            width: 4,
            ..word
        };
        assert_eq!(straddling.units(32), 2.0);
    }
}
