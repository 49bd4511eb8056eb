"""Turns the CSV written by the `gpu` bench into the PNG in docs/RESULTS.md.

Usage: python3 plot_gpu.py gpu_bench.csv out.png   (needs matplotlib)

Left: in-place read-modify-write bandwidth as a share of the float4 copy
peak, by where each array starts. Middle: the float3 layouts, elements per
nanosecond. Right: time per alloc+free pair, log scale.
"""

import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main(src, dst):
    rows = list(csv.DictReader(open(src, newline="")))
    meta = {r["case"]: r for r in rows if r["section"] == "meta"}
    device = meta.get("device", {}).get("note", "GPU")
    date = meta.get("driver_api", {}).get("note", "")
    peak = next(float(r["value"]) for r in rows if r["section"] == "peak")

    fig, axes = plt.subplots(1, 3, figsize=(16, 5.2))

    rmw = [r for r in rows if r["section"] == "rmw"]
    names = [r["case"].replace("_", " ") for r in rmw]
    pct = [float(r["pct_of_copy_peak"]) for r in rmw]
    colors = [
        "#2b8a3e" if ("carved" in n or "separate" in n) else "#c92a2a" for n in names
    ]
    ax = axes[0]
    ax.barh(names, pct, color=colors)
    ax.axvline(100, color="gray", lw=0.8, ls="--")
    ax.set_xlabel(f"% of float4 copy peak ({peak:.0f} GB/s)")
    ax.set_title("In-place RMW, 1 GiB per array")
    ax.invert_yaxis()
    for y, v in enumerate(pct):
        ax.text(v + 1, y, f"{v:.1f}%", va="center", fontsize=8)
    ax.set_xlim(0, 120)

    f3 = [r for r in rows if r["section"] == "float3"]
    ax = axes[1]
    labels = [r["case"].replace("f3_", "").replace("_", " ") for r in f3]
    vals = [float(r["value"]) for r in f3]
    ax.barh(labels, vals, color=["#1971c2" if "read" in l else "#e8590c" for l in labels])
    ax.set_xlabel("G elements / s (higher is better)")
    ax.set_title("float3: padded / packed 12 B / implicit hole")
    ax.invert_yaxis()
    for y, v in enumerate(vals):
        ax.text(v + 2, y, f"{v:.0f}", va="center", fontsize=8)

    alloc = [r for r in rows if r["section"] == "alloc"]
    series = {}
    for r in alloc:
        kind, size = r["case"].rsplit("_", 1)
        series.setdefault(kind, []).append((int(size), float(r["value"])))
    ax = axes[2]
    for kind, pts in series.items():
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=kind)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("bytes per allocation")
    ax.set_ylabel("ns per alloc + free")
    ax.set_title("Allocation speed")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", lw=0.3)

    fig.suptitle(f"gpu-aligned on {device}, {date}")
    fig.tight_layout()
    fig.savefig(dst, dpi=110)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
