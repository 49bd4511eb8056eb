//! Checked indices for kernels: a `gpu_array<T>` argument (what
//! [`KernelArray`](crate::arena::KernelArray) passes) and `gpu_load`/ `gpu_store` overloads taking
//! an index. With `-DGPU_ALIGNED_CHECKED` an index past the length prints the array, index and
//! thread, then traps; without it they compile to `gpu_load(p + i)`.

use super::check::check_one_word;
use super::names::check_type_name;
use super::HeaderError;
use crate::layout::GpuLayout;
use core::fmt::Write;

/// Writes the `gpu_array<T>` template and the `GPU_LOAD`/`GPU_STORE`
/// macros, once per header, after [`write_preamble`](super::write_preamble).
///
/// ```
/// let mut text = String::new();
/// gpu_aligned::header::write_array_preamble(&mut text)?;
/// assert!(text.contains("struct gpu_array"));
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// # Errors
///
/// [`HeaderError::Write`] if `out` fails.
pub fn write_array_preamble(out: &mut impl Write) -> Result<(), HeaderError> {
    Ok(out.write_str(ARRAY_PREAMBLE)?)
}

/// Writes `gpu_load(gpu_array<const T>, i)` and `gpu_store(gpu_array<T>, i, value)` for the element
/// `layout` describes, after its [`write_accessors`](super::write_accessors).
///
/// ```
/// use gpu_aligned::GpuAligned;
///
/// #[derive(Clone, Copy, GpuAligned)]
/// #[repr(C, align(8))]
/// struct Pair { a: f32, b: f32 }
///
/// let mut text = String::new();
/// gpu_aligned::header::write_checked_accessors(&mut text, &Pair::LAYOUT)?;
/// assert!(text.contains("gpu_load(gpu_array<const Pair> a, unsigned long long i"));
/// # Ok::<(), gpu_aligned::header::HeaderError>(())
/// ```
///
/// # Errors
///
/// As [`write_accessors`](super::write_accessors).
pub fn write_checked_accessors(
    out: &mut impl Write,
    layout: &'static GpuLayout,
) -> Result<(), HeaderError> {
    check_type_name(layout.name)?;
    check_one_word(layout)?;
    Ok(checked_accessors_text(out, layout.name)?)
}

pub(crate) const ARRAY_PREAMBLE: &str = "\
// An array as a kernel argument: its first element and its length, laid out as gpu-aligned's
// KernelArray<T> (16 bytes). Index it with gpu_load(a, i) / gpu_store(a, i, v), or GPU_LOAD(a, i) /
// GPU_STORE(a, i, v), which also name the array when GPU_ALIGNED_CHECKED is defined.
template <typename T>
struct gpu_array {
    T* ptr;
    unsigned long long len;
};
#if defined(GPU_ALIGNED_CHECKED)
__device__ __forceinline__ void gpu_aligned_check(unsigned long long i, unsigned long long len,
                                                  const char* name) {
    if (i >= len) {
        printf(\"gpu-aligned: index %llu out of range for %s of length %llu \"
               \"(block %u,%u,%u thread %u,%u,%u)\\n\",
               i, name, len, blockIdx.x, blockIdx.y, blockIdx.z,
               threadIdx.x, threadIdx.y, threadIdx.z);
        __trap();
    }
}
#define GPU_ALIGNED_CHECK(a, i, name) gpu_aligned_check((i), (a).len, (name))
#else
#define GPU_ALIGNED_CHECK(a, i, name) ((void)0)
#endif
#define GPU_LOAD(a, i) gpu_load((a), (i), #a)
#define GPU_STORE(a, i, v) gpu_store((a), (i), (v), #a)
";

fn checked_accessors_text(f: &mut impl Write, name: &str) -> core::fmt::Result {
    write!(
        f,
        "__device__ __forceinline__ {name} gpu_load(gpu_array<const {name}> a, unsigned long long i,\n\
         \x20                                          const char* array = \"a gpu_array<const {name}>\") {{\n\
         \x20   GPU_ALIGNED_CHECK(a, i, array);\n\
         \x20   return gpu_load(a.ptr + i);\n\
         }}\n\
         __device__ __forceinline__ {name} gpu_load(gpu_array<{name}> a, unsigned long long i,\n\
         \x20                                          const char* array = \"a gpu_array<{name}>\") {{\n\
         \x20   GPU_ALIGNED_CHECK(a, i, array);\n\
         \x20   return gpu_load(a.ptr + i);\n\
         }}\n\
         __device__ __forceinline__ void gpu_store(gpu_array<{name}> a, unsigned long long i,\n\
         \x20                                         const {name}& value,\n\
         \x20                                         const char* array = \"a gpu_array<{name}>\") {{\n\
         \x20   GPU_ALIGNED_CHECK(a, i, array);\n\
         \x20   gpu_store(a.ptr + i, value);\n\
         }}\n"
    )
}
