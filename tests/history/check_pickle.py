"""Checks a PyTorch memory snapshot written by `History::to_pytorch_pickle`
with Python's own pickle and nothing else (no torch): the keys and types
that torch/cuda/_memory_viz.py reads (`segments`, each with `address`,
`total_size`, `stream`, `blocks` of `size`, `state`, `requested_size`,
`frames`; `device_traces`, lists of entries with `action`, `addr`, `size`,
`stream`, `frames`), the sums its `stats` command asserts (every segment's
blocks tile it), and that the trace is consistent: every alloc is freed at
most once, no block is freed that was not allocated (or there at the start).

Usage: python3 check_pickle.py SNAPSHOT.pickle
"""
import pickle
import sys

ACTIONS = {"alloc", "free_requested", "free_completed", "segment_map", "segment_unmap"}
STATES = {"active_allocated", "active_pending_free", "inactive"}


def check(snapshot):
    assert isinstance(snapshot, dict), type(snapshot)
    assert set(snapshot) >= {"segments", "device_traces"}, snapshot.keys()
    for seg in snapshot["segments"]:
        for key in ("address", "total_size", "stream", "allocated_size", "device"):
            assert isinstance(seg[key], int), (key, seg[key])
        assert isinstance(seg["segment_type"], str) and isinstance(seg["blocks"], list)
        at = seg["address"]
        for block in seg["blocks"]:
            assert block["state"] in STATES, block
            assert block["address"] == at, (block, at)
            assert 0 <= block["requested_size"] <= block["size"], block
            assert isinstance(block["frames"], list)
            for frame in block["frames"]:
                assert {"filename", "line", "name"} <= set(frame), frame
            at += block["size"]
        # What `_memory_viz.py stats` asserts.
        assert at == seg["address"] + seg["total_size"], (at, seg["total_size"])
    assert isinstance(snapshot["device_traces"], list)
    live = set()
    for trace in snapshot["device_traces"]:
        for entry in trace:
            assert entry["action"] in ACTIONS, entry
            for key in ("addr", "size", "stream", "time_us"):
                assert isinstance(entry[key], int), (key, entry)
            assert isinstance(entry["frames"], list)
            if entry["action"] == "alloc":
                assert entry["addr"] not in live, ("allocated twice", entry)
                live.add(entry["addr"])
            elif entry["action"] == "free_completed":
                live.discard(entry["addr"])
    traces = sum(len(t) for t in snapshot["device_traces"])
    print(f"ok: {len(snapshot['segments'])} segment(s), {traces} trace entries")


if __name__ == "__main__":
    with open(sys.argv[1], "rb") as f:
        check(pickle.load(f))
