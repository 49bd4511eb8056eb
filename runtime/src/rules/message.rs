//! A string built by `const fn`s, so that a compile-time check can say which sizes broke which rule
//! ("`Float3` is 12 bytes (align 4)") instead of failing an assertion with a fixed text.

use super::Violation;
use core::fmt;

const CAPACITY: usize = 2048;

/// Text formatted in `const` context: the message of a broken rule. It reads
/// as a `&str` ([`Message::as_str`]) and prints with `Display`.
///
/// ```
/// use gpu_aligned::rules::Violation;
/// let message = Violation::Misaligned { size: 8, align: 4 }.describe("Pair");
/// assert!(message.to_string().starts_with("`Pair` is 8 bytes but aligned to 4"));
/// ```
#[derive(Clone, Copy)]
pub struct Message {
    buf: [u8; CAPACITY],
    len: usize,
}

impl Message {
    pub(crate) const fn new() -> Self {
        let (buf, len) = ([0; CAPACITY], 0);
        Message { buf, len }
    }

    /// Whether nothing was written (the layout broke no rule).
    pub(crate) const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The text.
    pub const fn as_str(&self) -> &str {
        match core::str::from_utf8(self.buf.split_at(self.len).0) {
            Ok(text) => text,
            Err(_) => "gpu-aligned: invalid layout (message truncated)",
        }
    }

    // By value rather than `&mut self`: mutable references in `const fn`
    // need Rust 1.83, and the crate supports older compilers.
    pub(crate) const fn text(mut self, text: &str) -> Self {
        let bytes = text.as_bytes();
        let mut i = 0;
        // Truncation can only cut a long type or field name; it stops at a
        // char boundary so `as_str` stays valid UTF-8.
        while i < bytes.len() && self.len < CAPACITY {
            if self.len + 4 >= CAPACITY && (bytes[i] & 0xC0) != 0x80 {
                break;
            }
            self.buf[self.len] = bytes[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    pub(crate) const fn number(mut self, value: usize) -> Self {
        let mut digits = [0u8; 20];
        let mut count = 0;
        let mut rest = value;
        loop {
            digits[count] = b'0' + (rest % 10) as u8;
            count += 1;
            rest /= 10;
            if rest == 0 {
                break;
            }
        }
        while count > 0 && self.len < CAPACITY {
            count -= 1;
            self.buf[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    pub(crate) const fn bytes(self, value: usize) -> Self {
        let this = self.number(value);
        if value == 1 {
            this.text(" byte")
        } else {
            this.text(" bytes")
        }
    }

    pub(crate) const fn named(self, name: &str) -> Self {
        self.text("`").text(name).text("`")
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Appends the message of `violation` about type `name`: the fact with its
/// numbers, the rule, and the fix, the holes said of `subject` (`"a GPU
/// element"`, or what `#[derive(GpuData)]` checks: `"GPU data"`).
pub(crate) const fn describe_as(
    m: Message,
    name: &str,
    violation: &Violation,
    subject: &str,
) -> Message {
    match *violation {
        Violation::TooLarge { size, .. } => m
            .named(name)
            .text(" is ")
            .bytes(size)
            .text(", more than the 16 bytes one GPU load or store can move")
            .text("\n  = rule: a GPU element is 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes")
            .text("\n  = fix, by how kernels use it:")
            .text("\n    - kernels that read or write some fields of many elements: store one array per field, `#[derive(GpuSoa)]` instead of `GpuAligned` (a 12-byte `float3` field becomes `float3_16_t`)")
            .text("\n    - kernels that read whole elements (every thread the same one, as a scene table or a BVH node, or gathered): `#[derive(GpuData)]` instead of `GpuAligned`, aligned to 16 (`#[repr(C, align(16))]`, or `#[gpu_aligned::padded]` to pad it) so the arena stores it whole as 16-byte words")
            .text("\n    - a kernel parameter passed by value, or a field of other GPU data: `#[derive(GpuData)]` instead of `GpuAligned`, any size"),
        Violation::NotWordSized { size, align } => {
            let word = match super::word_for(size) {
                Some(word) => word,
                None => super::MAX_WORD,
            };
            m.named(name)
                .text(" is ")
                .bytes(size)
                .text(" (align ")
                .number(align)
                .text("): a GPU element must be 1, 2, 4, 8 or 16 bytes")
                .text("\n  = rule: CUDA loads or stores an element in one instruction only when it is 1, 2, 4, 8 or 16 bytes, aligned to its size, with no holes")
                .text("\n  = fix: put `#[gpu_aligned::padded]` on the struct to round it up to ")
                .bytes(word)
                .text(" with explicit zeroed padding, or write `#[repr(C, align(")
                .number(word)
                .text("))]` and add a ")
                .number(word - size)
                .text("-byte pad field marked `#[gpu_aligned(padding)]`")
        }
        Violation::Misaligned { size, align } => m
            .named(name)
            .text(" is ")
            .bytes(size)
            .text(" but aligned to ")
            .number(align)
            .text(": a GPU element must be aligned to its size")
            .text("\n  = fix: `#[repr(C, align(")
            .number(size)
            .text("))]`, or `#[gpu_aligned::padded]` on the struct to choose the alignment and padding"),
        Violation::InteriorHole {
            field,
            offset,
            bytes,
        } => m
            .named(name)
            .text(" has ")
            .bytes(bytes)
            .text(" of implicit padding before field `")
            .text(field)
            .text("` (offset ")
            .number(offset)
            .text("): ")
            .text(subject)
            .text(" must have no holes")
            .text("\n  = fix: add a field `_pad: [u8; ")
            .number(bytes)
            .text("]` marked `#[gpu_aligned(padding)]` before `")
            .text(field)
            .text("`, reorder the fields, or put `#[gpu_aligned::padded]` on the struct"),
        Violation::TrailingHole { size, align, bytes } => m
            .named(name)
            .text(" has ")
            .bytes(bytes)
            .text(" of implicit padding after its last field (")
            .bytes(size)
            .text(", align ")
            .number(align)
            .text("): ")
            .text(subject)
            .text(" must have no holes")
            .text("\n  = fix: add a last field `_pad: [u8; ")
            .number(bytes)
            .text("]` marked `#[gpu_aligned(padding)]`, or put `#[gpu_aligned::padded]` on the struct"),
    }
}
