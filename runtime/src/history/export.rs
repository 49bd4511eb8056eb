//! A [`History`] for viewers people use, written by hand: PyTorch's memory snapshot (a pickle),
//! the Chrome trace format (Perfetto) and a page of inline SVG that fetches nothing.

use std::io::{self, Write};
use std::string::String;
use std::vec::Vec;

use super::ledger::Block;
use super::{Event, History, Kind, Ledger, Replay};
use crate::sanitizer::short_type_name;

/// A pickle value (protocol 2).
enum P<'a> {
    Int(u64),
    Str(&'a str),
    /// An array's frames: `[{filename: label, line: 0, name: type}]`.
    Frames(Option<(&'a str, &'a str)>),
}

/// Bytes through a buffer written out 64 KiB at a time.
struct Out<'a>(Vec<u8>, &'a mut dyn Write);

impl Out<'_> {
    fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.0.extend_from_slice(bytes);
        Ok(())
    }

    /// Writes the buffer out once it holds 64 KiB (once per event).
    fn flush(&mut self) -> io::Result<()> {
        if self.0.len() >= 1 << 16 {
            self.1.write_all(&self.0)?;
            self.0.clear();
        }
        Ok(())
    }

    /// `value` in decimal, two digits at a time.
    fn num(&mut self, mut value: u64) -> io::Result<()> {
        const PAIRS: [u8; 200] = {
            let (mut pairs, mut i) = ([0u8; 200], 0);
            while i < 100 {
                (pairs[2 * i], pairs[2 * i + 1]) = (b'0' + (i / 10) as u8, b'0' + (i % 10) as u8);
                i += 1;
            }
            pairs
        };
        let (mut digits, mut at) = ([0u8; 20], 20);
        while value >= 10 {
            let pair = (value % 100) as usize * 2;
            value /= 100;
            at -= 2;
            digits[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
        }
        if value > 0 || at == 20 {
            at -= 1;
            digits[at] = b'0' + value as u8;
        }
        self.raw(&digits[at..])
    }

    /// Nanoseconds as microseconds, to the nanosecond.
    fn micros(&mut self, nanos: u64) -> io::Result<()> {
        self.num(nanos / 1000)?;
        let digit = |n: u64| b'0' + (n % 10) as u8;
        self.raw(&[b'.', digit(nanos / 100), digit(nanos / 10), digit(nanos)])
    }

    /// `text` in a JSON string, or in HTML.
    fn text(&mut self, text: &str, html: bool) -> io::Result<()> {
        if !text.bytes().any(|b| b"\"\\<&".contains(&b) || b < b' ') {
            return self.raw(text.as_bytes());
        }
        for ch in text.chars() {
            let escaped = match (ch, html) {
                ('"', false) => "\\\"",
                ('\\', false) => "\\\\",
                ('<', true) => "&lt;",
                ('&', true) => "&amp;",
                ('"', true) => "&quot;",
                (c, false) if c < ' ' => "?",
                (c, _) => self
                    .raw(c.encode_utf8(&mut [0; 4]).as_bytes())
                    .map(|_| "")?,
            };
            self.raw(escaped.as_bytes())?;
        }
        Ok(())
    }

    fn finish(self) -> io::Result<()> {
        self.1.write_all(&self.0)?;
        self.1.flush()
    }

    fn p(&mut self, value: &P) -> io::Result<()> {
        match *value {
            P::Int(value) if value < 1 << 31 => {
                self.raw(b"J")?;
                self.raw(&(value as u32).to_le_bytes())
            }
            // LONG1: 9 bytes of little-endian two's complement.
            P::Int(value) => {
                self.raw(&[0x8a, 9])?;
                self.raw(&value.to_le_bytes())?;
                self.raw(&[0])
            }
            P::Str(text) => {
                self.raw(b"X")?;
                self.raw(&(text.len() as u32).to_le_bytes())?;
                self.raw(text.as_bytes())
            }
            P::Frames(names) => {
                self.raw(b"](")?;
                if let Some((ty, label)) = names {
                    let (line, name) = (("line", P::Int(0)), ("name", P::Str(ty)));
                    self.dict(&[("filename", P::Str(label)), line, name])?;
                }
                self.raw(b"e")
            }
        }
    }

    fn dict(&mut self, items: &[(&str, P)]) -> io::Result<()> {
        self.raw(b"}(")?;
        for (key, value) in items {
            self.p(&P::Str(key))?;
            self.p(value)?;
        }
        self.raw(b"u")
    }
}

impl History {
    /// The element type and label of `block`.
    fn names(&self, block: &Block) -> (&'static str, &str) {
        let label = block
            .label
            .checked_sub(1)
            .map(|i| &*self.labels[usize::from(i)]);
        let ty = short_type_name(self.types[usize::from(block.ty)].0);
        (ty, label.unwrap_or(""))
    }

    /// Writes the history as PyTorch's memory snapshot (a pickle of
    /// `segments` and `device_traces`, as `torch.cuda.memory._snapshot()`
    /// makes) for `python3 -m torch.cuda._memory_viz trace_plot` or
    /// `pytorch.org/memory_viz`: actions `alloc`, `free_requested`,
    /// `free_completed`, `segment_map`, `segment_unmap`; an array's frame is
    /// its type in a file named by its label.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.record_history(10)?;
    /// drop(arena.alloc::<u8>(10)?);
    /// let mut pickle = Vec::new();
    /// arena.history().unwrap().to_pytorch_pickle(&mut pickle)?;
    /// assert_eq!((pickle[0], pickle.last()), (0x80, Some(&b'.')));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// What `out` returns.
    pub fn to_pytorch_pickle(&self, out: &mut impl Write) -> io::Result<()> {
        let mut out = Out(Vec::with_capacity(1 << 16), out);
        out.raw(b"\x80\x02}(")?;
        out.p(&P::Str("device_traces"))?;
        out.raw(b"](](")?;
        let mut replay = Replay::new(self);
        let entry = |out: &mut Out, action, event: &Event, at, size, block: Option<&Block>| {
            out.dict(&[
                ("action", P::Str(action)),
                ("addr", P::Int(self.frame.base + at)),
                ("size", P::Int(size)),
                ("stream", P::Int(0)),
                ("time_us", P::Int(event.time / 1000)),
                ("frames", P::Frames(block.map(|block| self.names(block)))),
            ])
        };
        while let Some(next) = self.events.get(replay.next) {
            out.flush()?;
            for (&at, block) in replay.blocks.iter().filter(|_| next.kind == Kind::Reset) {
                let actions = ["free_requested", "free_completed"];
                for action in &actions[usize::from(block.pending)..] {
                    entry(&mut out, action, next, at, block.size, Some(block))?;
                }
            }
            let before = replay.capacity;
            let Some((event, touched)) = replay.step() else {
                break;
            };
            let (at, size, old) = (event.offset, event.size, touched.as_ref());
            match event.kind {
                Kind::Alloc => {
                    if let Some(old) = old.filter(|block| block.pending) {
                        entry(&mut out, "free_completed", event, at, old.size, Some(old))?;
                    }
                    let block = replay.blocks.get(&at);
                    entry(&mut out, "alloc", event, at, size, block)?;
                }
                Kind::FreeRequested | Kind::Freed if old.is_some() => {
                    if event.kind == Kind::FreeRequested || old.is_some_and(|b| !b.pending) {
                        entry(&mut out, "free_requested", event, at, size, old)?;
                    }
                    if event.kind == Kind::Freed {
                        entry(&mut out, "free_completed", event, at, size, old)?;
                    }
                }
                Kind::Grow if event.capacity > before => {
                    let grown = event.capacity.saturating_sub(before);
                    entry(&mut out, "segment_map", event, before, grown, None)?;
                }
                Kind::Trim => {
                    let cut = before.saturating_sub(event.capacity);
                    entry(&mut out, "segment_unmap", event, event.capacity, cut, None)?;
                }
                Kind::Release => entry(&mut out, "segment_unmap", event, at, size, None)?,
                _ => {}
            }
        }
        out.raw(b"ee")?;
        self.p_segment(&mut out, &replay)?;
        out.raw(b"u.")?;
        out.finish()
    }

    /// `segments`: the span after the last event, its blocks and holes.
    fn p_segment(&self, out: &mut Out, replay: &Replay) -> io::Result<()> {
        let ledger = replay.ledger();
        let capacity = self
            .events
            .last()
            .map_or(self.span.0, |event| event.capacity);
        let active = ledger.payload + ledger.element_padding + ledger.rounding + ledger.red_zones;
        out.p(&P::Str("segments"))?;
        out.raw(b"](")?;
        out.raw(b"}(")?;
        let expandable: &[u8] = if self.frame.grows { b"\x88" } else { b"\x89" };
        for (key, value) in [
            ("device", P::Int(0)),
            ("address", P::Int(self.frame.base)),
            ("total_size", P::Int(capacity)),
            ("allocated_size", P::Int(active + ledger.pending)),
            ("active_size", P::Int(active)),
            (
                "requested_size",
                P::Int(ledger.payload + ledger.element_padding),
            ),
            ("stream", P::Int(0)),
            ("segment_type", P::Str("large")),
            ("frames", P::Frames(None)),
            ("segment_pool_id", P::Int(0)), // the tuple (0, 0) follows
            ("is_expandable", P::Int(0)),   // the bool follows
            ("blocks", P::Int(0)),          // the list follows
        ] {
            out.p(&P::Str(key))?;
            match key {
                "segment_pool_id" => out.raw(b"K\x00K\x00\x86")?,
                "is_expandable" => out.raw(expandable)?,
                "blocks" => out.raw(b"](")?,
                _ => out.p(&value)?,
            }
        }
        let mut end = 0;
        let holes = replay.blocks.iter().map(|(&at, block)| (at, Some(block)));
        for (at, block) in holes.chain([(capacity, None)]) {
            for (start, block) in [(end, None), (at, block)] {
                let size = block.map_or(at.saturating_sub(start), |block| block.size);
                if size == 0 {
                    continue;
                }
                let (requested, state) = match block {
                    Some(block) if block.pending => (size, "active_pending_free"),
                    Some(b) => (
                        b.elements * self.types[usize::from(b.ty)].1,
                        "active_allocated",
                    ),
                    None => (0, "inactive"),
                };
                out.dict(&[
                    ("address", P::Int(self.frame.base + start)),
                    ("size", P::Int(size)),
                    ("requested_size", P::Int(requested.min(size))),
                    ("state", P::Str(state)),
                    ("frames", P::Frames(block.map(|block| self.names(block)))),
                ])?;
                end = start + size;
            }
        }
        out.raw(b"eue")
    }

    /// Writes the history in the Chrome trace format (JSON) that Perfetto
    /// (`ui.perfetto.dev`) and `chrome://tracing` open: a counter track per
    /// ledger part (the `ledger` counter's arguments), and an async slice
    /// per array from its allocation until the arena takes it back.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.record_history(10)?;
    /// drop(arena.alloc::<u8>(10)?);
    /// let mut json = Vec::new();
    /// arena.history().unwrap().to_chrome_trace(&mut json)?;
    /// assert!(json.starts_with(br#"{"displayTimeUnit":"ns","traceEvents":["#));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// What `out` returns.
    pub fn to_chrome_trace(&self, out: &mut impl Write) -> io::Result<()> {
        let mut out = Out(Vec::with_capacity(1 << 16), out);
        out.raw(br#"{"displayTimeUnit":"ns","traceEvents":[{"name":"process_name","ph":"M","#)?;
        out.raw(br#""pid":1,"tid":0,"args":{"name":"gpu-aligned arena"}}"#)?;
        // The counter's argument names, each with what comes before it.
        let parts = Ledger::default().parts().map(|(name, _)| name).into_iter();
        let names: Vec<Vec<u8>> = (parts.chain(["largest free"]).enumerate())
            .map(|(i, name)| {
                std::format!("{}\"{name}\":", [",\"args\":{", ","][usize::from(i > 0)])
            })
            .map(String::into_bytes)
            .collect();
        let mut replay = Replay::new(self);
        let slice = |out: &mut Out, ph: &[u8], event: &Event, at, block: &Block| {
            let (ty, label) = self.names(block);
            let event_at = (block.since as usize)
                .checked_sub(1)
                .and_then(|i| self.events.get(i));
            let thread = event_at.map_or(0, |event| event.thread);
            out.raw(b",\n{\"cat\":\"array\",\"pid\":1,\"tid\":")?;
            out.num(u64::from(thread))?;
            out.raw(b",\"ph\":\"")?;
            out.raw(ph)?;
            out.raw(b"\",\"id\":")?;
            out.num(block.since)?;
            out.raw(b",\"ts\":")?;
            out.micros(event.time)?;
            out.raw(b",\"name\":\"")?;
            out.text(ty, false)?;
            out.raw(b"[")?;
            out.num(block.elements)?;
            out.raw(b"] ")?;
            out.text(label, false)?;
            out.raw(b"\",\"args\":{\"offset\":")?;
            out.num(at)?;
            out.raw(b",\"bytes\":")?;
            out.num(block.size)?;
            out.raw(b"}}")
        };
        while let Some(next) = self.events.get(replay.next) {
            out.flush()?;
            for (&at, block) in replay.blocks.iter().filter(|_| next.kind == Kind::Reset) {
                if !block.pending && block.since != 0 {
                    slice(&mut out, b"e", next, at, block)?;
                }
            }
            let Some((event, touched)) = replay.step() else {
                break;
            };
            let ended = touched.filter(|block| !block.pending && block.since != 0);
            if let (Kind::FreeRequested | Kind::Freed, Some(block)) = (event.kind, ended) {
                slice(&mut out, b"e", event, event.offset, &block)?;
            }
            if let (Kind::Alloc, Some(block)) = (event.kind, replay.blocks.get(&event.offset)) {
                slice(&mut out, b"b", event, event.offset, block)?;
            }
            out.raw(b",\n{\"name\":\"ledger\",\"ph\":\"C\",\"pid\":1,\"tid\":0,\"ts\":")?;
            out.micros(event.time)?;
            let ledger = replay.ledger();
            let largest = ("largest free", ledger.largest_free);
            for (prefix, (_, value)) in names
                .iter()
                .zip(ledger.parts().into_iter().chain([largest]))
            {
                out.raw(prefix)?;
                out.num(value)?;
            }
            out.raw(b"}}")?;
        }
        out.raw(b"\n]}\n")?;
        out.finish()
    }

    /// Writes one self-contained HTML page (inline SVG, no script, nothing
    /// fetched): the offset map at the peak (after the event when live and
    /// pending arrays held the most bytes; hover a block for its array), and
    /// the ledger over time with its parts at the peak.
    ///
    /// ```
    /// # let mut arena = gpu_aligned::arena::Arena::host(4096)?;
    /// arena.record_history(10)?;
    /// drop(arena.alloc::<u8>(10)?);
    /// let mut page = Vec::new();
    /// arena.history().unwrap().to_html(&mut page)?;
    /// assert!(String::from_utf8(page)?.contains("<svg"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// What `out` returns.
    pub fn to_html(&self, out: &mut impl Write) -> io::Result<()> {
        let ledger = self.ledger();
        let used =
            |l: &Ledger| l.payload + l.element_padding + l.rounding + l.red_zones + l.pending;
        let peak = (0..ledger.len()).max_by_key(|&i| used(&ledger[i]));
        let mut replay = Replay::new(self);
        for _ in 0..peak.map_or(0, |i| i + 1) {
            replay.step();
        }
        let at_peak = replay.ledger();
        let span = peak.map_or(self.span.0, |i| self.events[i].capacity).max(1);
        let mut out = Out(Vec::with_capacity(1 << 16), out);
        let mut page = String::new();
        let (rows, width, height) = (16u64, 1100u64, 300u64);
        let row = span.div_ceil(rows);
        page += "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Arena history</title>";
        page +=
            "<style>body{font:13px sans-serif;margin:16px}td,th{padding:1px 8px;text-align:right}";
        page += "svg{border:1px solid #ccc}</style></head><body>\n";
        page += &std::format!(
            "<h2>Arena history</h2><p>{} events ({} older lost); {} bytes reserved; peak after \
             event {}: {} bytes held by arrays, {span} spanned.</p><h3>Offset map at the peak</h3>\n\
             <svg width=\"{width}\" height=\"{}\">",
            self.events.len(),
            self.lost,
            self.frame.reserved,
            peak.unwrap_or(0),
            used(&at_peak),
            rows * 20,
        );
        out.raw(page.as_bytes())?;
        for (&at, block) in &replay.blocks {
            out.flush()?;
            let (ty, label) = self.names(block);
            let hue = (200 + u32::from(block.ty) * 67) % 360;
            let colour = std::format!("hsl({hue},55%,55%)");
            let elements = block.elements * self.types[usize::from(block.ty)].1;
            let full = at + elements.min(block.size);
            let parts = [(at, full, &colour[..]), (full, at + block.size, "#edc948")];
            for (mut from, end, fill) in parts {
                let fill = if block.pending { "#9c755f" } else { fill };
                while from < end {
                    let to = end.min((from / row + 1) * row);
                    let (x, w) = (from % row * width / row, ((to - from) * width / row).max(1));
                    let y = from / row * 20;
                    let rect =
                        std::format!("<rect x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"18\"");
                    out.raw(std::format!("{rect} fill=\"{fill}\"><title>").as_bytes())?;
                    out.text(&std::format!("{ty}[{}] {label}", block.elements), true)?;
                    out.raw(std::format!(": {} B at {at}</title></rect>", block.size).as_bytes())?;
                    from = to;
                }
            }
        }
        let mut page = std::format!(
            "</svg><p>A row is {row} bytes; a colour per element type; brown: pending; yellow: \
             rounding and red zones; white: free.</p><h3>Ledger over time</h3>\n\
             <svg width=\"{width}\" height=\"{height}\">"
        );
        // Stacked areas, a column per bucket of events: the bucket's event
        // with the most bytes in use, so no peak is lost.
        let columns = ledger.len().clamp(1, width as usize);
        let pick = |c: usize| {
            let bucket = c * ledger.len() / columns..((c + 1) * ledger.len() / columns).max(c + 1);
            ledger
                .get(bucket)
                .and_then(|bucket| bucket.iter().max_by_key(|l| used(l)))
        };
        let picks: Vec<Ledger> = (0..columns).filter_map(pick).copied().collect();
        let top = picks
            .iter()
            .map(|l| l.sum() - l.unmapped)
            .max()
            .unwrap_or(0)
            .max(1);
        let (x, y) = (
            |c: usize| c as u64 * width / picks.len().max(1) as u64,
            |bytes: u64| {
                height - (u128::from(bytes.min(top)) * u128::from(height) / u128::from(top)) as u64
            },
        );
        let mut below = std::vec![0u64; picks.len()];
        for (part, colour) in COLOURS.iter().enumerate().take(8) {
            page += &std::format!("<polygon fill=\"{colour}\" points=\"");
            for (c, l) in picks.iter().enumerate() {
                let upper = y(below[c] + l.parts()[part].1);
                page += &std::format!("{},{upper} {},{upper} ", x(c), x(c + 1));
            }
            for c in (0..picks.len()).rev() {
                page += &std::format!("{},{} {},{} ", x(c + 1), y(below[c]), x(c), y(below[c]));
                below[c] += picks[c].parts()[part].1;
            }
            page += "\"/>";
        }
        let at = peak.map_or(0, |i| x(i * picks.len() / ledger.len().max(1)) + 1);
        page +=
            &std::format!("<line x1=\"{at}\" x2=\"{at}\" y2=\"{height}\" stroke=\"red\" stroke-opacity=\".6\"/></svg>");
        page += &std::format!(
            "<p>Events left to right (red: the peak), up to {top} bytes. At the peak:</p><table>"
        );
        let largest = ("largest free", at_peak.largest_free);
        for (i, (name, value)) in at_peak.parts().into_iter().chain([largest]).enumerate() {
            let colour = COLOURS.get(i).unwrap_or(&"#fff");
            page += &std::format!("<tr><td style=\"background:{colour}\"></td><th>{name}</th>");
            page += &std::format!("<td>{value}</td></tr>");
        }
        page += "</table></body></html>\n";
        out.raw(page.as_bytes())?;
        out.finish()
    }
}

/// The parts' colours in the page, in [`Ledger::parts`]' order.
const COLOURS: [&str; 9] = [
    "#4e79a7", "#f28e2b", "#edc948", "#e15759", "#9c755f", "#b07aa1", "#d9ead3", "#bab0ac",
    "#eeeeee",
];
