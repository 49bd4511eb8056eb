//! A small loader for the NVTX v3 memory API, written from the protocol the NVTX headers implement,
//! so it needs no CUDA toolkit to build and no library to run. When `NVTX_INJECTION64_PATH` is
//! unset every call is one atomic load ([`tool`]); when it names a tool (compute-sanitizer's), the
//! tool is `dlopen`ed and fills the core tables (`InitializeInjectionNvtx2`, for
//! `nvtxDomainCreateA`) and the memory module's slots (`InitializeInjectionNvtxExtension`). A slot
//! left empty does nothing. The `#[repr(C)]` declarations are ours, from the headers' layouts.

use core::ffi::{c_char, c_int, c_uint, c_void};
use core::ptr;
use std::boxed::Box;
use std::ffi::{CStr, CString, OsStr};
use std::sync::OnceLock;

/// `NVTX_VERSION`.
const NVTX_VERSION: u32 = 3;
/// `NVTX_EXT_MODULEID_MEM`.
const MODULE_ID_MEM: u16 = 1;
/// `NVTX_EXT_COMPATID_MEM`.
const COMPAT_ID_MEM: u16 = 0x0102;
/// `NVTX_EXT_MEM_SLOT_COUNT`.
const MEM_SLOT_COUNT: usize = 63;

/// The memory extension's callback ids (`NVTX3EXT_CBID_nvtxMem*`).
mod cbid {
    pub const HEAP_REGISTER: usize = 0;
    pub const HEAP_UNREGISTER: usize = 1;
    pub const HEAP_RESET: usize = 2;
    pub const REGIONS_REGISTER: usize = 3;
    pub const REGIONS_UNREGISTER: usize = 5;
    pub const REGIONS_NAME: usize = 6;
    #[cfg(feature = "cuda")]
    pub const PERMISSIONS_ASSIGN: usize = 7;
    #[cfg(feature = "cuda")]
    pub const CUDA_GET_PROCESS_WIDE_PERMISSIONS: usize = 13;
}

/// The core callback modules (`NvtxCallbackModule`, 1 to 6) and the number of entries of each one's
/// table (`NVTX_CBID_<MODULE>_SIZE`): CORE, CUDA, OPENCL, CUDART, CORE2, SYNC.
const CORE_MODULE_SIZES: [usize; 6] = [16, 9, 15, 7, 16, 7];
/// `NVTX_CB_MODULE_CORE2`, and `NVTX_CBID_CORE2_DomainCreateA` in it.
const MODULE_CORE2: usize = 5;
const CORE2_DOMAIN_CREATE_A: usize = 12;
/// The longest table, plus the null entry that ends every table.
const TABLE_LEN: usize = 17;

/// `NVTX_ETID_CALLBACKS`, `NVTX_ETID_VERSIONINFO`.
const ETID_CALLBACKS: u32 = 1;
const ETID_VERSIONINFO: u32 = 3;

/// `NVTX_MEM_HEAP_USAGE_TYPE_SUB_ALLOCATOR`, `NVTX_MEM_TYPE_VIRTUAL_ADDRESS`,
/// `NVTX_MEM_REGION_REF_TYPE_POINTER`, `NVTX_MESSAGE_TYPE_ASCII`.
const HEAP_USAGE_SUB_ALLOCATOR: u32 = 1;
const MEM_TYPE_VIRTUAL_ADDRESS: u32 = 1;
const REGION_REF_POINTER: u32 = 1;
const MESSAGE_TYPE_ASCII: u32 = 1;

type Domain = *mut c_void;
type Heap = *mut c_void;

/// `nvtxMemVirtualRangeDesc_v1`.
#[repr(C)]
struct VirtualRange {
    size: usize,
    ptr: *const c_void,
}

impl VirtualRange {
    fn new(address: u64, len: u64) -> VirtualRange {
        let (size, ptr) = (len as usize, pointer(address));
        VirtualRange { size, ptr }
    }
}

/// A device address as the pointer NVTX's structures hold.
fn pointer(address: u64) -> *const c_void {
    address as usize as *const c_void
}

/// `nvtxMemHeapDesc_v1`.
#[repr(C)]
struct HeapDesc {
    ext_compat_id: u16,
    struct_size: u16,
    reserved0: u32,
    usage: u32,
    kind: u32,
    type_specific_desc_size: usize,
    type_specific_desc: *const c_void,
    category: u32,
    message_type: u32,
    message: *const c_void,
}

/// `nvtxMemRegionsRegisterBatch_v1`.
#[repr(C)]
struct RegionsRegister {
    ext_compat_id: u16,
    struct_size: u16,
    region_type: u32,
    heap: Heap,
    region_count: usize,
    region_desc_element_size: usize,
    region_desc_elements: *const c_void,
    region_handle_elements_out: *mut *mut c_void,
}

/// `nvtxMemRegionsUnregisterBatch_v1`.
#[repr(C)]
struct RegionsUnregister {
    ext_compat_id: u16,
    struct_size: u16,
    ref_type: u32,
    ref_count: usize,
    ref_element_size: usize,
    ref_elements: *const *const c_void,
}

/// `nvtxMemRegionNameDesc_v1`.
#[repr(C)]
struct RegionName {
    region_ref_type: u32,
    name_type: u32,
    region: *const c_void,
    name: *const c_char,
    category: u32,
    reserved0: u32,
}

/// `nvtxMemRegionsNameBatch_v1`.
#[repr(C)]
struct RegionsName {
    ext_compat_id: u16,
    struct_size: u16,
    reserved0: u32,
    region_count: usize,
    region_element_size: usize,
    region_elements: *const RegionName,
    reserved1: usize,
}

/// `nvtxMemPermissionsAssignRegionDesc_v1`.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
#[repr(C)]
struct PermissionsRegion {
    flags: u32,
    region_ref_type: u32,
    region: *const c_void,
}

/// `nvtxMemPermissionsAssignBatch_v1`.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
#[repr(C)]
struct PermissionsAssign {
    ext_compat_id: u16,
    struct_size: u16,
    reserved0: u32,
    permissions: *mut c_void,
    region_count: usize,
    region_element_size: usize,
    region_elements: *const PermissionsRegion,
    reserved1: usize,
}

/// `nvtxExtModuleSegment_t`.
#[repr(C)]
struct ModuleSegment {
    segment_id: usize,
    slot_count: usize,
    function_slots: *mut usize,
}

/// `nvtxExtModuleInfo_t`.
#[repr(C)]
struct ModuleInfo {
    nvtx_ver: u16,
    struct_size: u16,
    module_id: u16,
    compat_id: u16,
    segments_count: usize,
    segments: *mut ModuleSegment,
    get_export_function: *const c_void,
    ext_info: *const c_void,
}

/// `NvtxExportTableCallbacks`.
#[repr(C)]
struct ExportCallbacks {
    struct_size: usize,
    get_module_function_table: unsafe extern "C" fn(
        module: c_int,
        out_table: *mut *mut *mut usize,
        out_size: *mut c_uint,
    ) -> c_int,
}

/// `NvtxExportTableVersionInfo`.
#[repr(C)]
struct ExportVersionInfo {
    struct_size: usize,
    version: u32,
    reserved0: u32,
    set_injection_nvtx_version: extern "C" fn(version: u32),
}

/// The core modules' slots and the tables that point at them, handed to the
/// tool once and never freed: the tool may keep the pointers.
struct CoreTables {
    slots: [[usize; TABLE_LEN]; 6],
    tables: [[*mut usize; TABLE_LEN]; 6],
}

/// Where the export-table callback finds the tables while the tool initialises (set once, before
/// the tool is called, under [`TOOL`]'s initialisation).
static CORE_TABLES: core::sync::atomic::AtomicPtr<CoreTables> =
    core::sync::atomic::AtomicPtr::new(ptr::null_mut());

unsafe extern "C" fn get_module_function_table(
    module: c_int,
    out_table: *mut *mut *mut usize,
    out_size: *mut c_uint,
) -> c_int {
    let tables = CORE_TABLES.load(core::sync::atomic::Ordering::Acquire);
    let index = match usize::try_from(module) {
        Ok(module @ 1..=6) => module - 1,
        _ => return 0,
    };
    if tables.is_null() {
        return 0;
    }
    // SAFETY: `tables` was leaked by `load` and is never freed; the tool asks from the thread that
    // runs its initialisation, while nothing else touches the tables.
    let table = unsafe { (*tables).tables[index].as_mut_ptr() };
    if !out_size.is_null() {
        // SAFETY: the tool passes a valid `unsigned int*` or null.
        unsafe { *out_size = CORE_MODULE_SIZES[index] as c_uint };
    }
    if !out_table.is_null() {
        // SAFETY: as above, for the table pointer.
        unsafe { *out_table = table };
    }
    1
}

extern "C" fn set_injection_nvtx_version(_version: u32) {}

static EXPORT_CALLBACKS: ExportCallbacks = ExportCallbacks {
    struct_size: core::mem::size_of::<ExportCallbacks>(),
    get_module_function_table,
};

static EXPORT_VERSION_INFO: ExportVersionInfo = ExportVersionInfo {
    struct_size: core::mem::size_of::<ExportVersionInfo>(),
    version: NVTX_VERSION,
    reserved0: 0,
    set_injection_nvtx_version,
};

extern "C" fn get_export_table(id: u32) -> *const c_void {
    match id {
        ETID_CALLBACKS => ptr::from_ref(&EXPORT_CALLBACKS).cast(),
        ETID_VERSIONINFO => ptr::from_ref(&EXPORT_VERSION_INFO).cast(),
        _ => ptr::null(),
    }
}

/// An attached NVTX tool: its domain for this crate and the memory functions it filled in.
pub(crate) struct Tool {
    domain: Domain,
    mem: [usize; MEM_SLOT_COUNT],
    /// The library the tool was loaded from, as `NVTX_INJECTION64_PATH` named it.
    pub(crate) library: std::string::String,
}

// SAFETY: the domain handle is an opaque token the tool hands out for use
// from any thread (NVTX calls are thread-safe by contract), and the slots
// are plain function addresses written once before `Tool` is shared.
unsafe impl Send for Tool {}
// SAFETY: as for `Send`: nothing in `Tool` is mutated after it is made.
unsafe impl Sync for Tool {}

impl core::fmt::Debug for Tool {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Tool")
            .field("library", &self.library)
            .finish_non_exhaustive()
    }
}

static TOOL: OnceLock<Option<Tool>> = OnceLock::new();

/// The attached NVTX tool, loaded at the first call; `None` (after one atomic load, from the second
/// call on) when no tool is attached or it could not be loaded.
pub(crate) fn tool() -> Option<&'static Tool> {
    TOOL.get_or_init(load).as_ref()
}

fn injection_path() -> Option<std::ffi::OsString> {
    #[cfg(target_pointer_width = "64")]
    let name = "NVTX_INJECTION64_PATH";
    #[cfg(not(target_pointer_width = "64"))]
    let name = "NVTX_INJECTION32_PATH";
    std::env::var_os(name).filter(|path| !path.is_empty())
}

/// Whether `NVTX_INJECTION64_PATH` names compute-sanitizer's collection
/// library, read without loading anything.
pub(crate) fn sanitizer_named() -> bool {
    injection_path().is_some_and(|path| is_sanitizer(&path))
}

fn is_sanitizer(path: &OsStr) -> bool {
    path.to_string_lossy().contains("sanitizer")
}

fn load() -> Option<Tool> {
    let path = injection_path()?;
    let library = path.to_string_lossy().into_owned();
    let c_path = CString::new(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str())).ok()?;
    // SAFETY: a NUL-terminated path; loading a library runs its
    // initialisers, which is what NVTX's own loader does with this path.
    let handle = unsafe { libc::dlopen(c_path.as_ptr(), libc::RTLD_LAZY) };
    if handle.is_null() {
        return None;
    }
    let domain = init_core(handle);
    let mem = init_mem(handle)?;
    Some(Tool {
        domain,
        mem,
        library,
    })
}

/// Looks `name` up in the tool's library.
fn symbol(handle: *mut c_void, name: &CStr) -> *mut c_void {
    // SAFETY: `handle` came from `dlopen`, `name` is NUL-terminated.
    unsafe { libc::dlsym(handle, name.as_ptr()) }
}

/// Runs the tool's core initialisation and creates this crate's domain
/// (the default domain, null, when the tool offers none).
fn init_core(handle: *mut c_void) -> Domain {
    let init = symbol(handle, c"InitializeInjectionNvtx2");
    if init.is_null() {
        return ptr::null_mut();
    }
    let tables = Box::leak(Box::new(CoreTables {
        slots: [[0; TABLE_LEN]; 6],
        tables: [[ptr::null_mut(); TABLE_LEN]; 6],
    }));
    for (module, &size) in CORE_MODULE_SIZES.iter().enumerate() {
        // Entry 0 and entry `size` stay null, as NVTX's tables are.
        for cbid in 1..size {
            tables.tables[module][cbid] = ptr::from_mut(&mut tables.slots[module][cbid]);
        }
    }
    let tables: *mut CoreTables = tables;
    CORE_TABLES.store(tables, core::sync::atomic::Ordering::Release);
    type InitCore = unsafe extern "C" fn(extern "C" fn(u32) -> *const c_void) -> c_int;
    // SAFETY: `InitializeInjectionNvtx2` has this signature (`NvtxInitializeInjectionNvtxFunc_t`).
    let init: InitCore = unsafe { core::mem::transmute::<*mut c_void, InitCore>(init) };
    // SAFETY: the export tables it will ask for live for the program.
    if unsafe { init(get_export_table) } == 0 {
        return ptr::null_mut();
    }
    // SAFETY: the tool has returned; the slots are ours again to read.
    let create = unsafe { (*tables).slots[MODULE_CORE2 - 1][CORE2_DOMAIN_CREATE_A] };
    if create == 0 {
        return ptr::null_mut();
    }
    type DomainCreateA = unsafe extern "C" fn(*const c_char) -> Domain;
    // SAFETY: the tool filled this slot with its `nvtxDomainCreateA`.
    let create: DomainCreateA = unsafe { core::mem::transmute::<usize, DomainCreateA>(create) };
    // SAFETY: a NUL-terminated name.
    unsafe { create(c"gpu-aligned".as_ptr()) }
}

/// Runs the tool's extension initialisation for the memory module; `None`
/// when the tool has no memory functions.
fn init_mem(handle: *mut c_void) -> Option<[usize; MEM_SLOT_COUNT]> {
    let init = symbol(handle, c"InitializeInjectionNvtxExtension");
    if init.is_null() {
        return None;
    }
    let mut slots = [0usize; MEM_SLOT_COUNT];
    let mut segment = ModuleSegment {
        segment_id: 1,
        slot_count: MEM_SLOT_COUNT,
        function_slots: slots.as_mut_ptr(),
    };
    let mut info = ModuleInfo {
        nvtx_ver: NVTX_VERSION as u16,
        struct_size: core::mem::size_of::<ModuleInfo>() as u16,
        module_id: MODULE_ID_MEM,
        compat_id: COMPAT_ID_MEM,
        segments_count: 1,
        segments: &mut segment,
        get_export_function: ptr::null(),
        ext_info: ptr::null(),
    };
    type InitExtension = unsafe extern "C" fn(*mut ModuleInfo) -> c_int;
    // SAFETY: `InitializeInjectionNvtxExtension` has this signature
    // (`NvtxExtInitializeInjectionFunc_t`).
    let init: InitExtension = unsafe { core::mem::transmute::<*mut c_void, InitExtension>(init) };
    // SAFETY: `info` and the segment and slots it points to outlive the
    // call; the tool fills the slots during it.
    if unsafe { init(&mut info) } == 0 {
        return None;
    }
    // NVTX marks a slot the tool left alone as disabled (1); treat both
    // that and an untouched 0 as "not implemented".
    for slot in &mut slots {
        if *slot == 1 {
            *slot = 0;
        }
    }
    slots.iter().any(|&slot| slot != 0).then_some(slots)
}

/// A heap the tool knows, as `nvtxMemHeapRegister` returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct HeapHandle(usize);

impl HeapHandle {
    /// No heap: what an arena records when no tool is attached.
    pub(crate) const NONE: HeapHandle = HeapHandle(0);
}

impl Tool {
    fn slot(&self, cbid: usize) -> Option<usize> {
        Some(self.mem[cbid]).filter(|&slot| slot != 0)
    }

    /// Registers `[address, address + len)` as a sub-allocator heap.
    pub(crate) fn heap_register(&self, address: u64, len: u64) -> Option<HeapHandle> {
        let slot = self.slot(cbid::HEAP_REGISTER)?;
        let range = VirtualRange::new(address, len);
        let desc = HeapDesc {
            ext_compat_id: COMPAT_ID_MEM,
            struct_size: core::mem::size_of::<HeapDesc>() as u16,
            reserved0: 0,
            usage: HEAP_USAGE_SUB_ALLOCATOR,
            kind: MEM_TYPE_VIRTUAL_ADDRESS,
            type_specific_desc_size: core::mem::size_of::<VirtualRange>(),
            type_specific_desc: ptr::from_ref(&range).cast(),
            category: 0,
            message_type: 0,
            message: ptr::null(),
        };
        type F = unsafe extern "C" fn(Domain, *const HeapDesc) -> Heap;
        // SAFETY: the tool filled this slot with its `nvtxMemHeapRegister`; the descriptor and the
        // range it points to outlive the call, and the tool only records the addresses.
        let heap = unsafe { core::mem::transmute::<usize, F>(slot)(self.domain, &desc) };
        // NVTX_MEM_HEAP_HANDLE_NO_TOOL is -1; null is a failure.
        match heap as usize {
            0 | usize::MAX => None,
            heap => Some(HeapHandle(heap)),
        }
    }

    /// Forgets a heap and every region in it.
    pub(crate) fn heap_unregister(&self, heap: HeapHandle) {
        self.heap_call(cbid::HEAP_UNREGISTER, heap);
    }

    /// Forgets every region of a heap, keeping the heap.
    pub(crate) fn heap_reset(&self, heap: HeapHandle) {
        self.heap_call(cbid::HEAP_RESET, heap);
    }

    fn heap_call(&self, cbid: usize, heap: HeapHandle) {
        let Some(slot) = self.slot(cbid) else { return };
        type F = unsafe extern "C" fn(Domain, Heap);
        // SAFETY: `nvtxMemHeapUnregister` and `nvtxMemHeapReset` share this
        // signature; the heap is one the tool handed out.
        unsafe { core::mem::transmute::<usize, F>(slot)(self.domain, heap.0 as Heap) }
    }

    /// Registers `[address, address + len)` as a region of `heap`.
    pub(crate) fn region_register(&self, heap: HeapHandle, address: u64, len: u64) {
        let Some(slot) = self.slot(cbid::REGIONS_REGISTER) else {
            return;
        };
        let range = VirtualRange::new(address, len);
        let batch = RegionsRegister {
            ext_compat_id: COMPAT_ID_MEM,
            struct_size: core::mem::size_of::<RegionsRegister>() as u16,
            region_type: MEM_TYPE_VIRTUAL_ADDRESS,
            heap: heap.0 as Heap,
            region_count: 1,
            region_desc_element_size: core::mem::size_of::<VirtualRange>(),
            region_desc_elements: ptr::from_ref(&range).cast(),
            region_handle_elements_out: ptr::null_mut(),
        };
        type F = unsafe extern "C" fn(Domain, *const RegionsRegister);
        // SAFETY: the tool's `nvtxMemRegionsRegister`; the batch outlives the call, and a null
        // handle array is allowed for virtual addresses (the region is then named by its address).
        unsafe { core::mem::transmute::<usize, F>(slot)(self.domain, &batch) }
    }

    /// Unregisters the region that starts at `address`.
    pub(crate) fn region_unregister(&self, address: u64) {
        let Some(slot) = self.slot(cbid::REGIONS_UNREGISTER) else {
            return;
        };
        let reference = pointer(address);
        let batch = RegionsUnregister {
            ext_compat_id: COMPAT_ID_MEM,
            struct_size: core::mem::size_of::<RegionsUnregister>() as u16,
            ref_type: REGION_REF_POINTER,
            ref_count: 1,
            ref_element_size: core::mem::size_of::<*const c_void>(),
            ref_elements: &reference,
        };
        type F = unsafe extern "C" fn(Domain, *const RegionsUnregister);
        // SAFETY: the tool's `nvtxMemRegionsUnregister`; the batch outlives the call.
        unsafe { core::mem::transmute::<usize, F>(slot)(self.domain, &batch) }
    }

    /// Names the region that starts at `address`.
    pub(crate) fn region_name(&self, address: u64, name: &CStr) {
        let Some(slot) = self.slot(cbid::REGIONS_NAME) else {
            return;
        };
        let element = RegionName {
            region_ref_type: REGION_REF_POINTER,
            name_type: MESSAGE_TYPE_ASCII,
            region: pointer(address),
            name: name.as_ptr(),
            category: 0,
            reserved0: 0,
        };
        let batch = RegionsName {
            ext_compat_id: COMPAT_ID_MEM,
            struct_size: core::mem::size_of::<RegionsName>() as u16,
            reserved0: 0,
            region_count: 1,
            region_element_size: core::mem::size_of::<RegionName>(),
            region_elements: &element,
            reserved1: 0,
        };
        type F = unsafe extern "C" fn(Domain, *const RegionsName);
        // SAFETY: the tool's `nvtxMemRegionsName`; the batch and the name
        // outlive the call (the tool copies the name).
        unsafe { core::mem::transmute::<usize, F>(slot)(self.domain, &batch) }
    }

    /// Gives the region that starts at `address` the permissions `flags` (the sanitizer module's
    /// `PERMISSION_*`) for every kernel of the process. Returns whether the tool supports it.
    #[cfg(feature = "cuda")]
    pub(crate) fn permissions_assign(&self, address: u64, flags: u32) -> bool {
        let (Some(assign), Some(process_wide)) = (
            self.slot(cbid::PERMISSIONS_ASSIGN),
            self.slot(cbid::CUDA_GET_PROCESS_WIDE_PERMISSIONS),
        ) else {
            return false;
        };
        type GetPermissions = unsafe extern "C" fn(Domain) -> *mut c_void;
        // SAFETY: the tool's `nvtxMemCudaGetProcessWidePermissions`.
        let permissions =
            unsafe { core::mem::transmute::<usize, GetPermissions>(process_wide)(self.domain) };
        let element = PermissionsRegion {
            flags,
            region_ref_type: REGION_REF_POINTER,
            region: pointer(address),
        };
        let batch = PermissionsAssign {
            ext_compat_id: COMPAT_ID_MEM,
            struct_size: core::mem::size_of::<PermissionsAssign>() as u16,
            reserved0: 0,
            permissions,
            region_count: 1,
            region_element_size: core::mem::size_of::<PermissionsRegion>(),
            region_elements: &element,
            reserved1: 0,
        };
        type F = unsafe extern "C" fn(Domain, *const PermissionsAssign);
        // SAFETY: the tool's `nvtxMemPermissionsAssign`; the batch outlives the call.
        unsafe { core::mem::transmute::<usize, F>(assign)(self.domain, &batch) };
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The layouts the tool reads, checked against the headers' (x86-64 and
    // aarch64 Linux: 8-byte pointers and `size_t`).
    #[test]
    #[cfg(target_pointer_width = "64")]
    fn layouts_match_the_headers() {
        use core::mem::size_of;
        assert_eq!(size_of::<VirtualRange>(), 16);
        assert_eq!(size_of::<HeapDesc>(), 48);
        assert_eq!(size_of::<RegionsRegister>(), 48);
        assert_eq!(size_of::<RegionsUnregister>(), 32);
        assert_eq!(size_of::<RegionName>(), 32);
        assert_eq!(size_of::<RegionsName>(), 40);
        assert_eq!(size_of::<PermissionsRegion>(), 16);
        assert_eq!(size_of::<PermissionsAssign>(), 48);
        assert_eq!(size_of::<ModuleSegment>(), 24);
        assert_eq!(size_of::<ModuleInfo>(), 40);
        assert_eq!(size_of::<ExportCallbacks>(), 16);
        assert_eq!(size_of::<ExportVersionInfo>(), 24);
    }

    #[test]
    fn the_sanitizer_is_told_apart_by_its_library() {
        assert!(is_sanitizer(OsStr::new(
            "/usr/local/cuda/compute-sanitizer/libsanitizer-collection.so"
        )));
        assert!(!is_sanitizer(OsStr::new("libToolsInjection64.so")));
    }

    #[test]
    fn the_export_table_answers_only_its_ids() {
        assert!(!get_export_table(ETID_CALLBACKS).is_null());
        assert!(!get_export_table(ETID_VERSIONINFO).is_null());
        assert!(get_export_table(2).is_null());
        assert!(get_export_table(0).is_null());
    }
}
