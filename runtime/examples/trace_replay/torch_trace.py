#!/usr/bin/env python3
"""Allocation traces of PyTorch programs, in the text format `trace_replay` reads.

Two uses:

    python3 torch_trace.py convert SNAPSHOT.pickle OUT.trace
        converts a memory snapshot a user recorded from their own program
        (torch.cuda.memory._record_memory_history(), run the program, then
        torch.cuda.memory._dump_snapshot("SNAPSHOT.pickle")).

    python3 torch_trace.py record OUT_DIR
        builds two programs (random weights and data, nothing downloaded),
        records their allocations and writes OUT_DIR/train.trace and
        OUT_DIR/infer.trace: three training steps of a small transformer
        (AdamW), and an inference loop over 64 batches of varying sizes.

The trace format, one operation per line, in program order:

    # comment lines: what was recorded, PyTorch's own peaks
    a <id> <bytes> <align> <stream>    allocate <bytes> at a multiple of <align>
    f <id>                             free allocation <id>

Ids are small integers, each used by one allocation; streams are numbered
0, 1, ... in the order they first appear. Sizes are what PyTorch's caching
allocator recorded for each tensor's block (the request rounded up to 512
bytes), and every block it hands out starts on 512 bytes, so <align> is 512.
A free is the program's `free_requested` (the caching allocator may reuse
the block only once the stream's work has passed); frees of blocks allocated
before recording started are left out. Two header lines carry PyTorch's own
figures for the program when the recorder knows them:

    # pytorch_max_reserved <bytes>
    # pytorch_max_allocated <bytes>
"""

import pickle
import sys

ALIGN = 512


def convert_entries(entries, out, header):
    """Writes `entries` (one device's trace from a snapshot) to `out`."""
    ids, streams = {}, {}
    next_id = 0
    ops = 0
    for line in header:
        out.write(f"# {line}\n")
    for entry in entries:
        action = entry["action"]
        if action == "alloc":
            stream = streams.setdefault(entry.get("stream", 0), len(streams))
            ids[entry["addr"]] = next_id
            out.write(f"a {next_id} {entry['size']} {ALIGN} {stream}\n")
            next_id += 1
            ops += 1
        elif action == "free_requested":
            known = ids.pop(entry["addr"], None)
            if known is not None:
                out.write(f"f {known}\n")
                ops += 1
        elif action == "oom":
            out.write(f"# pytorch out of memory at {entry.get('size', '?')} bytes\n")
    return ops, len(streams)


def convert(snapshot_path, out_path, header=()):
    with open(snapshot_path, "rb") as f:
        snapshot = pickle.load(f)
    traces = [t for t in snapshot["device_traces"] if t]
    if not traces:
        sys.exit("the snapshot holds no allocation trace: record with _record_memory_history() first")
    with open(out_path, "w") as out:
        ops, streams = convert_entries(traces[0], out, header)
    print(f"{out_path}: {ops} operations on {streams} stream(s)")


def record(name, program, out_dir, describe):
    """Runs `program` with PyTorch's allocation history on and writes the
    trace of everything it allocated, with PyTorch's own peaks."""
    import torch

    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=10_000_000, context=None, stacks="python")
    program()
    torch.cuda.synchronize()
    snapshot = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    reserved = torch.cuda.max_memory_reserved()
    allocated = torch.cuda.max_memory_allocated()
    header = [
        f"gpu-aligned allocation trace 1: {name}",
        describe,
        f"recorded with PyTorch {torch.__version__} on {torch.cuda.get_device_name()}",
        f"pytorch_max_reserved {reserved}",
        f"pytorch_max_allocated {allocated}",
    ]
    path = f"{out_dir}/{name}.trace"
    traces = [t for t in snapshot["device_traces"] if t]
    with open(path, "w") as out:
        ops, streams = convert_entries(traces[0], out, header)
    print(f"{path}: {ops} operations on {streams} stream(s); "
          f"PyTorch peak reserved {reserved} B, peak allocated {allocated} B")


def model(torch, vocab, width, layers):
    import torch.nn as nn

    class Lm(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, width)
            layer = nn.TransformerEncoderLayer(width, nhead=8, dim_feedforward=4 * width,
                                               batch_first=True, norm_first=True)
            self.body = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(width, vocab)

        def forward(self, tokens):
            return self.head(self.body(self.embed(tokens)))

    return Lm().cuda()


def record_all(out_dir):
    import torch

    torch.manual_seed(0)
    vocab, width, layers = 8192, 512, 6
    train_batch, train_len, steps = 16, 256, 3

    def train():
        lm = model(torch, vocab, width, layers)
        optimizer = torch.optim.AdamW(lm.parameters(), lr=1e-4)
        for _ in range(steps):
            tokens = torch.randint(vocab, (train_batch, train_len + 1), device="cuda")
            logits = lm(tokens[:, :-1])
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab),
                                                     tokens[:, 1:].reshape(-1))
            loss.backward()
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        del lm, optimizer

    record("train", train, out_dir,
           f"{steps} training steps (AdamW) of a {layers}-layer transformer, width {width}, "
           f"vocabulary {vocab}, batch {train_batch} x {train_len} tokens, fp32")

    generator = torch.Generator().manual_seed(1)
    batches = [(int(torch.randint(1, 65, (1,), generator=generator)),
                int(torch.randint(16, 513, (1,), generator=generator))) for _ in range(64)]

    def infer():
        lm = model(torch, vocab, width, layers).eval()
        with torch.no_grad():
            for batch, length in batches:
                tokens = torch.randint(vocab, (batch, length), device="cuda")
                logits = lm(tokens)
                logits.argmax(-1).cpu()
        del lm

    record("infer", infer, out_dir,
           f"inference (no_grad) of the same model over {len(batches)} batches of 1-64 sequences "
           f"of 16-512 tokens")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "convert":
        convert(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "record":
        record_all(sys.argv[2])
    else:
        sys.exit(__doc__)
