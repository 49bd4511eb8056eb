//! The allocation-trace format `trace_replay` reads (described in
//! `torch_trace.py` beside this file): one `a <id> <bytes> <align>
//! <stream>` or `f <id>` per line, `#` comments. No GPU is needed to read
//! one, so the repository's tests replay the recorded traces on a host
//! arena with this parser too.

use std::io::{BufRead, BufReader, Read};

/// Any error, with a message that says what went wrong where.
pub type Error = Box<dyn std::error::Error>;

/// One operation of a trace.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Alloc { id: usize, bytes: u64, align: u64 },
    Free { id: usize },
}

/// A parsed trace: its operations, its header comments, the number of ids
/// and streams it uses, and PyTorch's peak reserved bytes if it says.
pub struct Trace {
    pub ops: Vec<Op>,
    pub comments: Vec<String>,
    pub ids: usize,
    pub streams: usize,
    pub max_align: u64,
    pub pytorch_max_reserved: Option<u64>,
}

/// Reads a trace. An operation line that is not one of the two forms (or
/// allocates zero bytes, or at an alignment that is not a power of two) is
/// an error naming the line.
pub fn parse(reader: impl Read) -> Result<Trace, Error> {
    let mut trace = Trace {
        ops: Vec::new(),
        comments: Vec::new(),
        ids: 0,
        streams: 0,
        max_align: 1,
        pytorch_max_reserved: None,
    };
    for (number, line) in BufReader::new(reader).lines().enumerate() {
        let line = line?;
        let bad = || format!("line {}: cannot read {line:?}", number + 1);
        if let Some(comment) = line.strip_prefix('#') {
            let comment = comment.trim();
            if let Some(bytes) = comment.strip_prefix("pytorch_max_reserved ") {
                trace.pytorch_max_reserved = Some(bytes.trim().parse().map_err(|_| bad())?);
            }
            trace.comments.push(comment.to_string());
            continue;
        }
        let fields: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map_err(|_| bad())?;
        let op = match (line.split_whitespace().next(), &fields[..]) {
            (Some("a"), &[id, bytes, align, stream]) if bytes > 0 && align.is_power_of_two() => {
                trace.streams = trace.streams.max(stream as usize + 1);
                trace.max_align = trace.max_align.max(align);
                Op::Alloc {
                    id: id as usize,
                    bytes,
                    align,
                }
            }
            (Some("f"), &[id]) => Op::Free { id: id as usize },
            (None, _) => continue,
            _ => return Err(bad().into()),
        };
        let (Op::Alloc { id, .. } | Op::Free { id }) = op;
        trace.ids = trace.ids.max(id + 1);
        trace.ops.push(op);
    }
    Ok(trace)
}
