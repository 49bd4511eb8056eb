//! C++ names: identifiers, names CUDA takes, and how a Rust field is
//! spelled as a member (`0` as `_0`, `class` as `class_`), without allocating.

use super::HeaderError;
use core::fmt;

/// Members the structure-of-arrays and array-of-structs views define
/// themselves, so no column may be spelled like them.
pub(crate) const VIEW_MEMBERS: &[&str] = &["len", "load", "store", "carve", "bytes", "over"];

/// The C++ spelling of a Rust field name, written without allocating.
///
/// ```
/// use gpu_aligned::header::Member;
///
/// assert_eq!(Member("0").to_string(), "_0");
/// assert_eq!(Member("class").to_string(), "class_");
/// assert_eq!(Member("r#type").to_string(), "type");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member<'a>(pub &'a str);

impl<'a> Member<'a> {
    /// The spelling in three pieces: a prefix, the Rust name without `r#`, and a suffix.
    fn parts(self) -> (&'static str, &'a str, &'static str) {
        let raw = self.0.strip_prefix("r#").unwrap_or(self.0);
        if raw.starts_with(|c: char| c.is_ascii_digit()) {
            ("_", raw, "")
        } else if is_keyword(raw) {
            ("", raw, "_")
        } else {
            ("", raw, "")
        }
    }

    fn chars(self) -> impl Iterator<Item = char> + 'a {
        let (prefix, raw, suffix) = self.parts();
        prefix.chars().chain(raw.chars()).chain(suffix.chars())
    }

    /// Whether the spelling is an ASCII C++ identifier.
    ///
    /// ```
    /// use gpu_aligned::header::Member;
    ///
    /// assert!(Member("mass").is_identifier());
    /// assert!(!Member("größe").is_identifier());
    /// ```
    pub fn is_identifier(self) -> bool {
        let mut chars = self.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    /// Whether two Rust names are spelled alike in C++.
    ///
    /// ```
    /// use gpu_aligned::header::Member;
    ///
    /// assert!(Member("0").spelled_like(Member("_0")));
    /// assert!(!Member("a").spelled_like(Member("b")));
    /// ```
    pub fn spelled_like(self, other: Member<'_>) -> bool {
        self.chars().eq(other.chars())
    }

    /// Whether the spelling is one of `names`.
    pub(crate) fn is_one_of(self, names: &[&str]) -> bool {
        names.iter().any(|name| self.spelled_like(Member(name)))
    }
}

impl fmt::Display for Member<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (prefix, raw, suffix) = self.parts();
        f.write_str(prefix)?;
        f.write_str(raw)?;
        f.write_str(suffix)
    }
}

/// The C++ member name of a Rust field: `0` becomes `_0`, `r#x` `x`, and a
/// C++ keyword gets a trailing `_`.
///
/// ```
/// use gpu_aligned::header::member_name;
///
/// assert_eq!(member_name("1")?, "_1");
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// # Errors
///
/// [`HeaderError::InvalidName`] when the result is still not an ASCII C++
/// identifier (a non-ASCII Rust name, say).
#[cfg(feature = "alloc")]
pub fn member_name(rust_name: &'static str) -> Result<alloc_crate::string::String, HeaderError> {
    use alloc_crate::string::ToString;
    check_member(rust_name)?;
    Ok(Member(rust_name).to_string())
}

/// Refuses a field name whose C++ spelling is not an identifier.
pub(crate) fn check_member(rust_name: &'static str) -> Result<(), HeaderError> {
    if !Member(rust_name).is_identifier() {
        return Err(HeaderError::InvalidName { name: rust_name });
    }
    Ok(())
}

pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Refuses a struct name that C++ cannot declare or that CUDA already uses.
pub(crate) fn check_type_name(name: &'static str) -> Result<(), HeaderError> {
    if !is_identifier(name) {
        return Err(HeaderError::InvalidName { name });
    }
    if is_keyword(name) || is_cuda_builtin_type(name) || is_header_name(name) {
        return Err(HeaderError::ReservedName { name });
    }
    Ok(())
}

/// Names the header itself defines.
fn is_header_name(name: &str) -> bool {
    matches!(name, "gpu_load" | "gpu_store") || name.starts_with("gpu_aligned_")
}

pub(crate) fn is_keyword(name: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
    ];
    KEYWORDS.contains(&name)
}

/// CUDA's vector types, the fixed-width integer typedefs and the other
/// names CUDA code takes for granted.
pub(crate) fn is_cuda_builtin_type(name: &str) -> bool {
    const LANE_TYPES: &[&str] = &[
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "longlong",
        "ulonglong",
        "float",
        "double",
        "half",
        "bfloat",
    ];
    const OTHERS: &[&str] = &[
        "dim3",
        "size_t",
        "ptrdiff_t",
        "intptr_t",
        "uintptr_t",
        "nullptr_t",
        "__half",
        "__half2",
        "__nv_bfloat16",
        "__nv_bfloat162",
        "__int128",
    ];
    let vector = name
        .strip_suffix(['1', '2', '3', '4'])
        .is_some_and(|lane| LANE_TYPES.contains(&lane));
    let fixed_width = name
        .strip_suffix("_t")
        .and_then(|n| n.strip_prefix('u').or(Some(n)))
        .and_then(|n| n.strip_prefix("int"))
        .is_some_and(|bits| matches!(bits, "8" | "16" | "32" | "64"));
    vector || fixed_width || OTHERS.contains(&name)
}
