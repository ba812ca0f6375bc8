#!/usr/bin/env python3
"""Benchmark: inspect_dataset on a large JSON Lines file and a large Parquet file vs a 2 MB one.

Target (issue 3): sampling cost does not grow with the file's size - a 2 GB file is
inspected in about the same wall time and peak memory as a 2 MB one. The files are
generated here, in a temporary folder deleted afterwards. Each measurement is the
whole script (`scripts/inspect_dataset.py --json`) in a fresh process: wall time and
that process's own peak RSS (os.wait4). Prints one JSON line with figures and ratios.

The Parquet files are written in 500-row row groups (a worst case: ~8,000 groups at
2 GB), so the footer, which Parquet readers must parse whole, is ~1,000x larger than
the small file's; that parse (~0.1 s at 2 GB) is the only cost that grows with size.

The reader comparison (issue 37, as the other reader benchmarks): inspect reads the first --sample rows and
no more, so its bare baseline is a `json.loads` loop over those same rows of the same (large) JSON Lines
file (`bare_loop.BARE_SUM` with a row limit). In-process: the reader (`vlab.inspect.readers.read_file`)
against the loop, medians of --runs interleaved (the reader's own work); as processes: the script against
`python -c` running the loop (its imports against none), with --baseline REF also the script of commit REF.

usage: bench_inspect_dataset.py [--size-mb 2048] [--small-mb 2] [--runs 3] [--dir DIR] [--formats jsonl,parquet]
                                [--baseline REF]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bare_loop import START_ENV, bare_command, bare_sum, baseline_scripts, compare

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "skills" / "verifiers-lab" / "scripts" / "inspect_dataset.py"
BLOCK_ROWS = 2000
# Ratios above this mean "cost grows with size": the target is about 1.
TARGET_RATIO = 1.5


def rows(seed: int, n: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b = rng.randint(100, 9999), rng.randint(2, 99)
        noise = rng.randbytes(rng.randint(100, 300)).hex()
        out.append(
            {
                "question": f"A crate holds {a} bolts; how many bolts are in {b} crates? {noise}",
                "answer": f"{a} * {b} = <<{a}*{b}={a * b}>>{a * b}\n#### {a * b}",
            }
        )
    return out


def write_jsonl(path: Path, size: int) -> None:
    """Whole rows up to ``size`` bytes: the file ends after its last full row (a cut one reads as a damaged file)."""
    blocks = ["".join(json.dumps(r) + "\n" for r in rows(seed, BLOCK_ROWS)).encode() for seed in range(4)]
    written = 0
    with path.open("wb") as f:
        i = 0
        while written < size:
            block = blocks[i % len(blocks)]
            if size - written < len(block):
                block = block[: block.rfind(b"\n", 0, size - written) + 1] or block[: block.index(b"\n") + 1]
            f.write(block)
            written += len(block)
            i += 1


def write_parquet(path: Path, size: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tables = [pa.Table.from_pylist(rows(seed, BLOCK_ROWS)) for seed in range(4)]
    # No compression, no dictionary: the file is as large as its data, like a real text dataset.
    with pq.ParquetWriter(path, tables[0].schema, compression="none", use_dictionary=False) as writer:
        i = 0
        while path.stat().st_size < size:
            writer.write_table(tables[i % len(tables)].slice((i // len(tables)) % 4 * 500, 500))
            i += 1


def measure(path: Path, runs: int, sample: int) -> dict:
    walls, rss = [], []
    for _ in range(runs):
        t = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, str(SCRIPT), str(path), "--json", "--sample", str(sample)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            cwd=ROOT,
            env=START_ENV,  # as the benchmark started (vlab, once imported here, exports a bytecode prefix)
        )
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        walls.append(time.perf_counter() - t)
        rss.append(usage.ru_maxrss / 1024)  # KiB -> MiB on Linux
        result = json.loads(out)
        if result["exit_code"] != 0 or result["data"]["source"]["rows_sampled"] != sample:
            raise SystemExit(f"inspect_dataset failed on {path}: {result['summary']}")
    return {
        "bytes": path.stat().st_size,
        "wall_s": round(statistics.median(walls), 3),
        "peak_rss_mb": round(statistics.median(rss), 1),
    }


def reader_comparison(path: Path, sample: int, runs: int, baseline: Path | None = None) -> dict:
    """inspect's reader and script against the bare json.loads loop over the rows they read, same run."""
    sys.path.insert(0, str(SCRIPT.parent))
    from vlab.inspect.readers import read_file

    reader_t, bare_t = [], []
    for _ in range(max(runs, 5)):  # milliseconds: a few more rounds, interleaved
        t = time.perf_counter()
        rows = len(read_file(path, sample).rows)
        reader_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        bare_rows, _ = bare_sum(path, "question", sample)
        bare_t.append(time.perf_counter() - t)
    if rows != bare_rows:
        raise SystemExit(f"the reader read {rows} rows, the loop {bare_rows}")

    def check(name: str, run: dict) -> None:
        result = json.loads(run["stdout"])
        if result["exit_code"] != 0 or result["data"]["source"]["rows_sampled"] != sample:
            raise SystemExit(f"{name}: inspect_dataset failed on {path}: {result['summary']}")

    def script(at: Path) -> list[str]:
        return [sys.executable, str(at), str(path), "--json", "--sample", str(sample)]

    sides = {"ours": script(SCRIPT), "bare": bare_command(path, "question", rows=sample)}
    if baseline is not None:
        sides["baseline"] = script(baseline)
    reader_s, bare_s = statistics.median(reader_t), statistics.median(bare_t)
    return {
        "rows": rows,
        "in_process": {
            "reader_ms": round(reader_s * 1000, 3),
            "bare_ms": round(bare_s * 1000, 3),
            "ratio_to_bare": round(reader_s / bare_s, 3),
        },
        "process": compare(sides, runs, cwd=ROOT, check=check),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=2048, help="size of the large files (default 2048)")
    ap.add_argument("--small-mb", type=float, default=2, help="size of the baseline files (default 2)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sample", type=int, default=300)
    ap.add_argument("--dir", help="where to write the files (default: a temporary folder, deleted afterwards)")
    ap.add_argument("--formats", default="jsonl,parquet", help="formats to measure (default jsonl,parquet)")
    ap.add_argument("--baseline", metavar="REF", help="also time the script of this commit (git archive)")
    args = ap.parse_args()
    formats = [f for f in ("jsonl", "parquet") if f in args.formats.split(",")]
    tmp = Path(args.dir or tempfile.mkdtemp(prefix="bench-inspect-"))
    tmp.mkdir(parents=True, exist_ok=True)
    out = {
        "bench": "inspect_dataset",
        "size_mb": args.size_mb,
        "small_mb": args.small_mb,
        "runs": args.runs,
        "sample": args.sample,
        "target_ratio": TARGET_RATIO,
    }
    try:
        baseline = None
        if args.baseline:
            (tmp / "baseline").mkdir(exist_ok=True)
            baseline = baseline_scripts(args.baseline, tmp / "baseline") / SCRIPT.name
            out["baseline"] = args.baseline
        for fmt, writer in (("jsonl", write_jsonl), ("parquet", write_parquet)):
            if fmt not in formats:
                continue
            small, large = tmp / f"small.{fmt}", tmp / f"large.{fmt}"
            t = time.perf_counter()
            writer(small, int(args.small_mb * 2**20))
            writer(large, int(args.size_mb * 2**20))
            gen = time.perf_counter() - t
            s, big = measure(small, args.runs, args.sample), measure(large, args.runs, args.sample)
            if fmt == "jsonl":
                out["reader"] = reader_comparison(large, args.sample, args.runs, baseline)
            large.unlink()
            out[fmt] = {
                "small": s,
                "large": big,
                "size_ratio": round(big["bytes"] / s["bytes"], 1),
                "wall_ratio": round(big["wall_s"] / s["wall_s"], 3),
                "rss_ratio": round(big["peak_rss_mb"] / s["peak_rss_mb"], 3),
                "generate_s": round(gen, 1),
            }
    finally:
        if not args.dir:
            shutil.rmtree(tmp, ignore_errors=True)
    out["ok"] = all(out[f]["wall_ratio"] <= TARGET_RATIO and out[f]["rss_ratio"] <= TARGET_RATIO for f in formats)
    print(json.dumps(out))
    return 0 if out["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
