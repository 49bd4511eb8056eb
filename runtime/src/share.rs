//! A device arena's memory for peer devices and other processes (feature `cuda`, Unix): an arena
//! made with [`ArenaOptions::share`](crate::arena::ArenaOptions::share), [`send`] over a Unix
//! socket and [`Imported`] in the other process. Errors: the arena's and the driver's,
//! [`CudaError::Socket`], and [`CudaError::Sharing`] for what the peer or the arena got wrong.
//! `docs/SHARING.md` has the protocol, the why (descriptors over the socket: no `pidfd_getfd`)
//! and the pitfalls.

use core::marker::PhantomData;
use core::mem::{size_of, size_of_val};
use core::ops::RangeBounds;
use core::ptr::addr_of_mut;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::string::{String, ToString};
use std::sync::Arc;
use std::vec::Vec;

use cudarc::driver::CudaStream;

use crate::arena::{
    bounds, Arena, ArenaError, ArenaResult, Lent, Sealed, TypedArray, View, ViewMut, SEALED,
};
use crate::backend::cuda::{Access, Chunk, CudaBackend, CudaError, CudaVm, LastUses, Sharing};
use crate::backend::{Buffer, Span};
use crate::{GpuData, GpuType, GpuWords};

type Shared<T> = ArenaResult<T, CudaBackend>;

/// Whom a growing device arena shares its memory with
/// ([`ArenaOptions::share`](crate::arena::ArenaOptions::share)).
///
/// ```no_run
/// # use gpu_aligned::{arena::{ArenaOptions, GrowthPolicy}, share::Share};
/// # let stream = gpu_aligned::backend::cuda::cudarc::driver::CudaContext::new(0)?.new_stream()?;
/// let options = ArenaOptions::new().growth(GrowthPolicy::up_to(1 << 30));
/// let peer = Share::Peer { device: 1, writable: true }; // kernels on GPU 1 read and write it
/// let arena = options.share(peer).device(&stream, 2 << 20)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Share {
    /// Other processes, through [`send`].
    Processes,
    /// Kernels on `device` (an ordinal below 64), writing too if `writable`: the arena's views
    /// then take that device's streams.
    #[allow(missing_docs)]
    Peer { device: usize, writable: bool },
}

impl Share {
    /// `sharing` with this grant added.
    pub(crate) const fn grant(self, mut sharing: Sharing) -> Sharing {
        match self {
            Share::Processes => sharing.processes = true,
            Share::Peer { device, writable } => {
                let bit = if device < 64 { 1 << device } else { 0 };
                match writable {
                    true => sharing.writers |= bit,
                    false => sharing.readers |= bit,
                }
            }
        }
        sharing
    }
}

/// An array [`send`] (and `nccl::rendezvous`) can name: a typed array of a device arena.
pub trait Exportable {
    #[doc(hidden)]
    fn entry(&self, arena: &Arena<CudaBackend>, _: Sealed) -> Shared<(Span, u64)>;
}

impl<A: TypedArray<CudaBackend>> Exportable for A {
    fn entry(&self, arena: &Arena<CudaBackend>, _: Sealed) -> Shared<(Span, u64)> {
        Ok((arena.shared_span(self)?, layout_hash(&A::Element::TYPE)))
    }
}

/// FNV-1a of the type's whole description: names, sizes, alignments and fields, recursively.
fn layout_hash(ty: &GpuType) -> u64 {
    fnv(std::format!("{ty:?}").as_bytes(), FNV)
}

/// FNV-1a's start.
pub(crate) const FNV: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a over `bytes` from `hash`: the same on every host and build.
pub(crate) fn fnv(bytes: &[u8], hash: u64) -> u64 {
    let step = |h: u64, b: &u8| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
    bytes.iter().fold(hash, step)
}

fn bad(why: &'static str) -> ArenaError<CudaError> {
    CudaError::Sharing(why).into()
}

fn io_error(e: io::Error) -> ArenaError<CudaError> {
    match e.kind() {
        io::ErrorKind::UnexpectedEof => bad("the peer closed the socket"),
        kind => CudaError::Socket(kind).into(),
    }
}

const MAGIC: u64 = u64::from_le_bytes(*b"gpua-sh1");
const PEEK: i32 = libc::MSG_PEEK | libc::MSG_DONTWAIT;
/// The most words a message may have.
const MAX_WORDS: usize = 1 << 21;

/// An array as sent: its name, bytes in the arena and element layout hash.
type Entry = (String, Span, u64);
/// A message: the reservation's length, the chunks and the arrays.
type Message = (usize, Vec<Chunk>, Vec<Entry>);
/// A message received, with a descriptor for each chunk.
type Received = (usize, Vec<(Chunk, OwnedFd)>, Vec<Entry>);

fn encode((reserved, chunks, arrays): &Message) -> Vec<u64> {
    let mut out = std::vec![MAGIC, *reserved as u64];
    out.extend([chunks.len(), arrays.len()].map(|n| n as u64));
    let chunk = |c: &Chunk| [c.offset as u64, c.size as u64, c.serial];
    out.extend(chunks.iter().flat_map(chunk));
    for (name, span, hash) in arrays {
        out.push(name.len() as u64);
        out.extend(name.as_bytes().chunks(8).map(word));
        out.extend([span.offset, span.len as u64, *hash]);
    }
    out
}

/// Up to 8 bytes as a little-endian word.
fn word(bytes: &[u8]) -> u64 {
    let mut word = [0; 8];
    word[..bytes.len()].copy_from_slice(bytes);
    u64::from_le_bytes(word)
}

fn decode(words: &[u64]) -> Shared<Message> {
    let mut words = words.iter().copied();
    let mut next = || words.next().ok_or(bad("a short message"));
    let size = |word| usize::try_from(word).map_err(|_| bad("a length past this host's"));
    if next()? != MAGIC {
        return Err(bad("not a gpu-aligned share message"));
    }
    let (reserved, chunks, arrays) = (size(next()?)?, next()?, next()?);
    let mut message = (reserved, Vec::new(), Vec::new());
    for _ in 0..chunks {
        let (offset, size, serial, handle) = (size(next()?)?, size(next()?)?, next()?, 0);
        message.1.push(Chunk {
            handle,
            offset,
            size,
            serial,
        });
    }
    for _ in 0..arrays {
        let len = size(next()?)?;
        let name = (0..len.div_ceil(8)).map(|_| next().map(u64::to_le_bytes));
        let mut name = name.collect::<Shared<Vec<_>>>()?.concat();
        name.truncate(len);
        let name = String::from_utf8(name).map_err(|_| bad("a name not UTF-8"))?;
        let (offset, len) = (next()?, size(next()?)?);
        message.2.push((name, Span { offset, len }, next()?));
    }
    match next() {
        Ok(_) => Err(bad("a long message")),
        Err(_) => Ok(message),
    }
}

/// Sends the chunks of `arena` (made with [`Share::Processes`]) and the named `arrays` over
/// `socket`, once the arena's stream is done (wait for your other streams yourself). Send again
/// after growth: the [`Imported`] maps the chunks it lacks and drops those trimmed since.
///
/// ```no_run
/// # use gpu_aligned::{arena::{ArenaOptions, GrowthPolicy}, share::{send, Share}};
/// # let stream = gpu_aligned::backend::cuda::cudarc::driver::CudaContext::new(0)?.new_stream()?;
/// # let options = ArenaOptions::new().growth(GrowthPolicy::up_to(1 << 30));
/// let mut arena = options.share(Share::Processes).device(&stream, 2 << 20)?;
/// let points = arena.alloc_from(&[1.0f32; 256])?;
/// let (socket, _) = std::os::unix::net::UnixListener::bind("/tmp/points")?.accept()?;
/// send(&socket, &arena, &[("points", &points)])?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn send(
    socket: &UnixStream,
    arena: &Arena<CudaBackend>,
    arrays: &[(&str, &dyn Exportable)],
) -> Shared<()> {
    let backend = arena.backend();
    let vm = backend.mapping().ok_or(bad("the arena is not shared"))?;
    backend.synchronize()?;
    let exported = vm.export()?;
    let mut entries = Vec::new();
    for (name, array) in arrays {
        let (span, hash) = array.entry(arena, SEALED)?;
        entries.push((name.to_string(), span, hash));
    }
    let chunks = exported.iter().map(|(chunk, _)| *chunk).collect();
    let words = encode(&(vm.reserved(), chunks, entries));
    let words = core::iter::once(words.len() as u64).chain(words);
    let bytes: Vec<u8> = words.flat_map(u64::to_le_bytes).collect();
    (&*socket).write_all(&bytes).map_err(io_error)?;
    for (_, fd) in &exported {
        pass(socket, Some(fd.as_raw_fd()))?;
    }
    Ok(())
    // `exported` drops here, closing this process's descriptors.
}

/// Sends one byte with the descriptor `fd`, or with `None` receives one byte and the descriptor
/// it carries, owned (so closed once) as soon as it arrives.
fn pass(socket: &UnixStream, fd: Option<RawFd>) -> Shared<Option<OwnedFd>> {
    let mut byte = [1u8];
    let (iov_base, iov_len) = (byte.as_mut_ptr().cast(), 1);
    let mut iov = libc::iovec { iov_base, iov_len };
    let mut control = [0u64; 8];
    // SAFETY: `msghdr` is plain C data; all zeros is a valid empty header.
    let mut msg: libc::msghdr = unsafe { core::mem::zeroed() };
    (msg.msg_iov, msg.msg_iovlen) = (&mut iov, 1);
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    let (socket, one) = (socket.as_raw_fd(), size_of::<RawFd>() as u32);
    let mut fds = Vec::new();
    // SAFETY: `msg` points at live locals; `control` holds a header and several descriptors,
    // and the `CMSG_*` walk stays inside what the kernel filled. Each descriptor received is new
    // and ours: owned at once.
    let done = unsafe {
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if let Some(fd) = fd {
            ((*cmsg).cmsg_level, (*cmsg).cmsg_type) = (libc::SOL_SOCKET, libc::SCM_RIGHTS);
            (*cmsg).cmsg_len = libc::CMSG_LEN(one) as _;
            msg.msg_controllen = libc::CMSG_SPACE(one) as _;
            libc::CMSG_DATA(cmsg).cast::<RawFd>().write_unaligned(fd);
            libc::sendmsg(socket, &msg, libc::MSG_NOSIGNAL)
        } else {
            let done = libc::recvmsg(socket, &mut msg, libc::MSG_CMSG_CLOEXEC);
            let mut cmsg = libc::CMSG_FIRSTHDR(&msg);
            while done > 0 && !cmsg.is_null() {
                let data = libc::CMSG_DATA(cmsg).cast::<RawFd>();
                let count = ((*cmsg).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / one as usize;
                if (*cmsg).cmsg_type == libc::SCM_RIGHTS {
                    let each =
                        (0..count).map(|i| OwnedFd::from_raw_fd(data.add(i).read_unaligned()));
                    fds.extend(each);
                }
                cmsg = libc::CMSG_NXTHDR(&msg, cmsg);
            }
            done
        }
    };
    let lost = msg.msg_flags & libc::MSG_CTRUNC != 0 || fds.len() != usize::from(fd.is_none());
    match done {
        ..0 => Err(io_error(io::Error::last_os_error())),
        0 => Err(bad("the peer closed the socket")),
        _ if lost => Err(bad("not one descriptor with a byte")),
        _ => Ok(fds.pop()),
    }
}

/// Reads one message and a descriptor for each of its chunks.
fn receive(socket: &UnixStream) -> Shared<Received> {
    let (mut reader, mut len) = (socket, [0u8; 8]);
    reader.read_exact(&mut len).map_err(io_error)?;
    let len = usize::try_from(u64::from_le_bytes(len)).unwrap_or(usize::MAX);
    if len > MAX_WORDS {
        return Err(bad("a message too long"));
    }
    let mut body = std::vec![0u8; len * 8];
    reader.read_exact(&mut body).map_err(io_error)?;
    let (reserved, chunks, arrays) = decode(&body.chunks(8).map(word).collect::<Vec<_>>())?;
    let mut received = Vec::new();
    for chunk in chunks {
        let fd = pass(socket, None)?.ok_or(bad("no descriptor"))?;
        received.push((chunk, fd));
    }
    Ok((reserved, received, arrays))
}

/// Another process's arena memory, mapped here for one device: [`send`]'s arrays, lent only as
/// the type they were sent as, in [`View`]s and [`ViewMut`]s as an arena lends (nothing is
/// allocated here). Dropping it waits for the device, then unmaps and releases every chunk.
///
/// ```no_run
/// # use gpu_aligned::backend::cuda::cudarc::driver::{CudaContext, DeviceSlice};
/// # let stream = CudaContext::new(0)?.new_stream()?;
/// let socket = std::os::unix::net::UnixStream::connect("/tmp/points")?; // `send`'s example
/// let mut imported = gpu_aligned::share::Imported::receive(socket, &stream, false)?;
/// let points = imported.array::<f32>("points")?; // refused unless sent as f32
/// assert_eq!(imported.view(&points, .., &stream)?.len(), 256);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Imported {
    backend: CudaBackend,
    socket: UnixStream,
    arrays: Vec<Entry>,
}

/// An array of an [`Imported`], of elements `T`, ordered on streams as an arena's array.
#[derive(Debug)]
pub struct ImportedArray<T> {
    span: Span,
    uses: LastUses,
    _element: PhantomData<fn() -> T>,
}

impl Imported {
    /// Receives [`send`]'s first message and maps it for `stream`'s device, read-only unless
    /// `writable` (then `view_mut` is refused, and a kernel's write faults).
    pub fn receive(socket: UnixStream, stream: &Arc<CudaStream>, writable: bool) -> Shared<Self> {
        let (reserved, chunks, arrays) = receive(&socket)?;
        let (context, mut sharing) = (stream.context(), Sharing::NONE);
        sharing.read_only = !writable;
        let granularity = CudaVm::granularity(context, sharing)?;
        let mut vm = CudaVm::reserve(context, Some(reserved), granularity, sharing)?;
        vm.import(&chunks)?;
        let backend = CudaBackend::imported(vm, stream)?;
        Ok(Imported {
            backend,
            socket,
            arrays,
        })
    }

    /// The array sent as `name` if its element layout is `T`'s, after applying the messages
    /// waiting on the socket (growth mapped, trimmed chunks unmapped), and waiting for more while
    /// no array has that name.
    pub fn array<T: GpuWords>(&mut self, name: &str) -> Shared<ImportedArray<T>> {
        loop {
            let (fd, mut byte) = (self.socket.as_raw_fd(), 0u8);
            // SAFETY: a one-byte peek into a live local.
            let waiting = unsafe { libc::recv(fd, addr_of_mut!(byte).cast(), 1, PEEK) } > 0;
            let found = self.arrays.iter().find(|(sent, ..)| sent == name);
            if let (Some(&(_, span, hash)), false) = (found, waiting) {
                if hash != layout_hash(&T::TYPE) {
                    return Err(bad("the array was shared as another element type"));
                }
                let (uses, _element) = (LastUses::default(), PhantomData);
                return Ok(ImportedArray {
                    span,
                    uses,
                    _element,
                });
            }
            let (_, chunks, arrays) = receive(&self.socket)?;
            let vm = self.backend.mapping_mut().ok_or(bad("no mapping"))?;
            vm.import(&chunks)?;
            self.arrays = arrays;
        }
    }

    /// Elements `range` of `array`, read-only, for work on `stream` (as [`Arena::view`]).
    pub fn view<'a, T>(
        &'a self,
        array: &'a ImportedArray<T>,
        range: impl RangeBounds<usize>,
        stream: &'a Arc<CudaStream>,
    ) -> Shared<View<'a, T>> {
        let lent = self.lend(array, range, stream, Access::Read)?;
        Ok(View::new(lent, None))
    }

    /// As [`view`](Imported::view), writable.
    pub fn view_mut<'a, T>(
        &'a self,
        array: &'a mut ImportedArray<T>,
        range: impl RangeBounds<usize>,
        stream: &'a Arc<CudaStream>,
    ) -> Shared<ViewMut<'a, T>> {
        let lent = self.lend(array, range, stream, Access::Write)?;
        Ok(ViewMut::new(lent))
    }

    fn lend<'a, T>(
        &'a self,
        array: &'a ImportedArray<T>,
        range: impl RangeBounds<usize>,
        stream: &'a Arc<CudaStream>,
        access: Access,
    ) -> Shared<Lent<'a>> {
        let (size, span) = (size_of::<T>().max(1) as u64, array.span);
        let (start, len) = bounds(&range, span.len / size as usize)?;
        if !span.within(self.backend.len()) {
            return Err(bad("the exporter trimmed the array's memory"));
        }
        let address = self.backend.base_address() + span.offset + start as u64 * size;
        let (backend, uses) = (&self.backend, &array.uses);
        let ordered = backend.begin_use(uses, span, stream, access)?;
        Ok(Lent {
            backend,
            uses,
            ordered,
            stream,
            address,
            len,
        })
    }
}

/// The wire format, descriptor passing and the layout hash, on the host.
#[cfg(test)]
mod tests {
    use super::*;

    mod one {
        #[derive(Clone, Copy, crate::GpuAligned)]
        #[repr(C, align(8))]
        pub struct Pair(pub u32, pub f32);
    }

    mod other {
        #[derive(Clone, Copy, crate::GpuAligned)]
        #[repr(C, align(8))]
        pub struct Pair(pub f32, pub u32);
    }

    #[test]
    fn messages_encode_as_decoded_and_bad_ones_are_typed_errors() {
        // The header (magic, reserved bytes, one chunk, one array), the chunk, the array.
        let (head, chunk) = ([MAGIC, 64 << 20, 1, 1], [2 << 20, 4 << 20, 7]);
        let array = [6, word(b"points"), 256, 4096, 9];
        let good = [&head[..], &chunk, &array].concat();
        let message = decode(&good).unwrap();
        assert_eq!(
            (message.1[0].serial, message.2[0].0.as_str()),
            (7, "points")
        );
        assert_eq!(encode(&message), good);
        let (mut magic, mut huge) = (good.clone(), good.clone());
        (magic[0], huge[2]) = (1, u64::MAX);
        let long = [&good[..], &[0]].concat();
        for bad in [&magic[..], &good[..11], &huge, &long, &[]] {
            let refused = decode(bad).unwrap_err();
            let typed = matches!(refused, ArenaError::Backend(CudaError::Sharing(_)));
            assert!(typed, "{bad:?}");
        }
    }

    #[test]
    fn a_reordered_or_other_type_hashes_apart() {
        let hash = |ty: GpuType| layout_hash(&ty);
        assert_eq!(hash(one::Pair::TYPE), hash(one::Pair::TYPE));
        assert_ne!(hash(one::Pair::TYPE), hash(other::Pair::TYPE));
        assert_ne!(hash(f32::TYPE), hash(u32::TYPE));
    }

    #[test]
    fn descriptors_pass_once_each() {
        let (a, b) = UnixStream::pair().unwrap();
        let null = OwnedFd::from(std::fs::File::open("/dev/null").unwrap());
        pass(&a, Some(null.as_raw_fd())).unwrap();
        let got = pass(&b, None).unwrap().unwrap();
        assert_ne!(got.as_raw_fd(), null.as_raw_fd());
        (&a).write_all(&[1]).unwrap(); // a byte without a descriptor
        assert!(pass(&b, None).is_err());
        drop(a);
        assert!(pass(&b, None).is_err());
    }
}
