"""Ours beside CUB: `lumbre bench primitives` and `benches/peers/cub.cu`, one Markdown table.

    lumbre bench primitives > ours.txt      (text, `--json`, or a Markdown copy of its table)
    ./cub > cub.md
    python3 benches/peers/side_by_side.py ours.txt cub.md
    python3 benches/peers/side_by_side.py --selftest

Each row of ours' GPU table that has a CUB peer is printed with the CUB row of the same size:
ours ms (its "GPU ms"), CUB ms, and ours/CUB speed (CUB ms / ours ms: above 1, ours is faster).
The copy row sets ours' copy kernel (the scan row's "copy ms": n u32 read and written) beside
cudaMemcpyAsync. Under the table: what each side reads and writes.
"""

import argparse
import json
import re
import sys

# CUB's rows, by the start of their operation cell.
CUB_ROWS = {
    "copy": "memcpy u32",
    "scan": "DeviceScan::ExclusiveSum u32",
    "select": "DeviceSelect::Flagged",
    "sort u32": "DeviceRadixSort::SortKeys u32",
    "sort 30 bit": "DeviceRadixSort::SortKeys u32, end_bit=30",
    "sort pairs": "DeviceRadixSort::SortPairs u32 + u32",
    "sort u64": "DeviceRadixSort::SortKeys u64",
}

# What each side reads and writes, per peer.
MOVES = {
    "copy": "copy: both read n u32 and write n u32 (8 B per element); ours is its copy kernel, CUB's "
    "side cudaMemcpyAsync.",
    "scan": "scan: both read n u32 and write their exclusive sums as n u32 (8 B per element).",
    "select": "compaction: ours reads u32 values and u32 flags (8 B per element), CUB u32 values and u8 "
    "flags (5 B); both write the kept values (4 B each, half kept: 2 B per element) and the count.",
    "sort u32": "sort u32 keys: n u32 keys, all 32 bits; ours sorts in place and its time includes copying "
    "the unsorted keys into the work buffer (its own copy ms), CUB's DoubleBuffer sort leaves them in "
    "either buffer and its input is restored untimed.",
    "sort 30 bit": "sort 30-bit keys: u32 keys below 2^30, bits [0, 30) (CUB: end_bit=30).",
    "sort pairs": "sort u32 keys + u32 values: as the keys, with one u32 value per key moved alongside; "
    "ours' time includes copying the unsorted keys and values into the work buffers.",
    "sort u64": "sort u64 keys: n u64 keys, all 64 bits; ours' time includes copying the unsorted keys.",
}


class InputError(Exception):
    """Bad input: the message names the file, the line and the value."""


def peer_of(op):
    """The CUB peer (a key of CUB_ROWS) of one of ours' operations, or None."""
    o = op.lower()
    if o.startswith("scan u32 exclusive") or o.startswith("exclusive scan u32"):
        return "scan"
    if o.startswith("compact by flag") or o.startswith("compaction"):
        return "select"
    if not o.startswith("sort"):
        return None  # Morton encoding (30 bit keys, but no sort), predicates, the pyramid: no peer here
    if re.search(r"\b30[- ]bits?\b", o):
        return None if "value" in o else "sort 30 bit"
    if "u64" in o:
        return "sort u64"
    if "value" in o:
        return "sort pairs"
    if "u32" in o:
        return "sort u32"
    return None


def cub_key(op):
    """The key of CUB_ROWS naming a CUB operation cell (the longest matching start), or None."""
    best = None
    for key, start in CUB_ROWS.items():
        if op.startswith(start) and (best is None or len(start) > len(CUB_ROWS[best])):
            best = key
    return best


def number(cell, where):
    """A cell's milliseconds: a float, None for "-", or an error naming where it was."""
    if cell.strip() == "-":
        return None
    try:
        return float(cell)
    except ValueError:
        raise InputError(f"{where}: expected milliseconds or '-', found {cell!r}") from None


def size_of(cell, where):
    m = re.fullmatch(r"2\^(\d+)", cell.strip())
    if not m:
        raise InputError(f"{where}: expected a size like 2^28, found {cell!r}")
    return int(m.group(1))


def markdown_cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def ours_rows(text, name):
    """Ours' GPU table as {operation: (log2 size, GPU ms, copy ms, own copy ms)}, from its text,
    JSON or Markdown output."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            tables = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise InputError(f"{name}:{e.lineno}: not JSON: {e.msg}") from None
        for t in tables:
            rows = t.get("rows", []) if isinstance(t, dict) else []
            if rows and "operation" in rows[0] and "GPU ms" in rows[0]:
                out = {}
                for i, r in enumerate(rows):
                    where = f"{name}: row {i} ({r.get('operation')!r})"
                    out[r["operation"]] = (
                        size_of(str(r["n"]), where),
                        number(str(r["GPU ms"]), where),
                        number(str(r.get("copy ms", "-")), where),
                        number(str(r.get("own copy ms", "-")), where),
                    )
                return out
        raise InputError(f"{name}: no table with 'operation' and 'GPU ms' columns in the JSON")
    lines = text.splitlines()
    for at, line in enumerate(lines):
        md = line.lstrip().startswith("|")
        cols = markdown_cells(line) if md else re.split(r"\s{2,}", line.strip())
        if not (cols and cols[0] == "operation" and "GPU ms" in cols):
            continue
        ix = {c: i for i, c in enumerate(cols)}
        out = {}
        for k in range(at + 1, len(lines)):
            row = lines[k]
            if md:
                if not row.lstrip().startswith("|"):
                    break
                cells = markdown_cells(row)
                if all(set(c) <= set("-: ") for c in cells):
                    continue  # the separator line
            else:
                if not row.strip() or row.startswith(" "):
                    break  # the notes, indented, or the end of the table
                cells = re.split(r"\s{2,}", row.strip())
            where = f"{name}:{k + 1}"
            if len(cells) != len(cols):
                raise InputError(f"{where}: {len(cells)} cells where the header has {len(cols)}: {row.strip()!r}")
            out[cells[0]] = (
                size_of(cells[ix["n"]], where),
                number(cells[ix["GPU ms"]], where),
                number(cells[ix["copy ms"]], where) if "copy ms" in ix else None,
                number(cells[ix["own copy ms"]], where) if "own copy ms" in ix else None,
            )
        return out
    raise InputError(f"{name}: no table with 'operation' and 'GPU ms' columns (the output of lumbre bench primitives?)")


def cub_rows(text, name):
    """CUB's table as {(peer key, log2 size): (ms or None, problem or None)}, and its header lines."""
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if markdown_cells(line)[:3] != ["operation", "size", "median ms"] or not line.lstrip().startswith("|"):
            continue
        out = {}
        for k in range(at + 1, len(lines)):
            row = lines[k]
            if not row.lstrip().startswith("|"):
                break
            cells = markdown_cells(row)
            if all(set(c) <= set("-: ") for c in cells):
                continue
            where = f"{name}:{k + 1}"
            if len(cells) != 5:
                raise InputError(f"{where}: {len(cells)} cells where the header has 5: {row.strip()!r}")
            key = cub_key(cells[0])
            if key is None:
                continue
            rate = cells[3]
            problem = rate if rate.startswith(("FAIL", "skipped")) else None
            out[(key, size_of(cells[1], where))] = (number(cells[2], where), problem)
        header = [l for l in lines[:at] if l.strip()]
        return out, header
    raise InputError(f"{name}: no table with 'operation | size | median ms' columns (the output of cub?)")


def ours_adapter(text):
    m = re.search(r"adapter: ([^;\"\n]+)", text)
    return m.group(1).strip() if m else "?"


def fmt(ms):
    return "-" if ms is None else f"{ms:.4f}"


def side_by_side(ours_text, ours_name, cub_text, cub_name):
    """The Markdown table and notes, as a string."""
    ours = ours_rows(ours_text, ours_name)
    cub, cub_header = cub_rows(cub_text, cub_name)
    pairs = []  # (operation, log2, ours ms, peer key)
    own_copies = []  # notes: the copy inside ours' timed sorts
    for op, (log2, gpu_ms, copy_ms, own_ms) in ours.items():
        key = peer_of(op)
        if key:
            pairs.append((op, log2, gpu_ms, key))
        if key and key.startswith("sort") and own_ms is not None and (key, log2) in cub:
            what = "keys and values, the keys' copy" if key == "sort pairs" else "keys"
            own_copies.append(f"- {op} (2^{log2}): ours' time includes copying the unsorted {what} {fmt(own_ms)} ms")
        if key == "scan" and op.lower() in ("scan u32 exclusive", "exclusive scan u32"):
            pairs.insert(0, ("copy u32 (ours: copy kernel, the scan row's copy ms)", log2, copy_ms, "copy"))
    out = [f"ours: {ours_adapter(ours_text)}; CUB: " + "; ".join(cub_header), ""]
    out += ["| operation | size | ours ms | CUB ms | ours/CUB speed |", "| --- | --- | --- | --- | --- |"]
    used = []
    for op, log2, ours_ms, key in pairs:
        if (key, log2) not in cub:
            continue
        cub_ms, problem = cub[(key, log2)]
        if problem:
            speed = "CUB " + problem
        elif ours_ms is None or cub_ms is None or ours_ms <= 0:
            speed = "-"
        else:
            speed = f"{cub_ms / ours_ms:.2f}"
        out.append(f"| {op} | 2^{log2} | {fmt(ours_ms)} | {fmt(cub_ms)} | {speed} |")
        if key not in used:
            used.append(key)
    out.append("")
    out.append("ours/CUB speed: CUB ms / ours ms (above 1: ours is faster). What each side reads and writes:")
    out += [f"- {MOVES[k]}" for k in used]
    if own_copies:
        out += ["", "The copy inside ours' timed sorts (its own copy ms; CUB's restore is untimed):"] + own_copies
    return "\n".join(out) + "\n"


OURS_SAMPLE = """\
Primitives: GPU time vs the copy kernel moving the same bytes, and the CPU path
operation                                     n        GPU ms  copy ms  GPU/copy  own copy ms  GPU/own copy  GPU rate     CPU ms  CPU rate  rate unit
scan u32 exclusive                            2^28     0.8040   0.5028      1.60       0.5100          1.58     333.9    90.1234     2.979  G elem/s
scan u32 exclusive, single pass               2^28     0.9000   0.5028      1.79       0.5100          1.76     298.3    90.1234     2.979  G elem/s
scan f32 inclusive                            2^28     0.8500   0.5028      1.69       0.5100          1.67     315.8    95.0000     2.826  G elem/s
compact by flag, half kept                    2^28     1.0404   0.6400      1.63       0.5200          2.00     258.0   120.0000     2.237  G elem/s
compact by predicate, half kept               2^28     0.9000   0.4000      2.25       0.5200          1.73     298.3   110.0000     2.440  G elem/s
sort u32 keys                                 2^26     5.4944   0.1300     42.26       0.1400         39.25     12.21   900.0000   0.07457  G keys/s
sort u32 keys + u32 values                    2^26     7.0000   0.2600     26.92       0.1400         50.00     9.587  1200.0000   0.05592  G keys/s
sort u64 keys                                 2^26    11.0000   0.2600     42.31       0.2700         40.74     6.101  1500.0000   0.04474  G keys/s
Morton encode, 30 bit keys                    2^26     0.2000   0.1900      1.05            -             -     335.5    30.0000     2.237  G keys/s
  adapter: NVIDIA H200; GPU times from timestamp queries; median of 10 runs after 3 warm-up (CPU: median of up to 5); CPU: 16 rayon threads
  copy ms: the copy kernel reading and writing (bytes read + bytes written) / 2 each way

Histogram pyramid vs compaction in one pass and in two (flags, half kept, values out)
n     pyramid ms  one pass ms  two passes ms  pyramid/faster  default
2^16      0.0500       0.0200         0.0300            2.50  one pass
  adapter: NVIDIA H200
"""

CUB_SAMPLE = """\
device: NVIDIA H200 (sm_90, 132 SMs, 150.0 GB)
CUB 3.0.1 (CUB_VERSION 300001), CUDA runtime 13.0, driver 13.0

| operation | size | median ms | rate | bytes moved |
| --- | --- | --- | --- | --- |
| memcpy u32 (cudaMemcpyAsync) | 2^24 | 0.0400 | 3355.4 GB/s | 0.134 GB |
| memcpy u32 (cudaMemcpyAsync) | 2^28 | 0.5000 | 4295.0 GB/s | 2.147 GB |
| DeviceScan::ExclusiveSum u32 | 2^28 | 0.8675 | 2475.5 GB/s | 2.147 GB |
| DeviceSelect::Flagged u32, u8 flags, half kept | 2^28 | 0.8000 | 2516.6 GB/s | 1.879 GB |
| DeviceRadixSort::SortKeys u32 | 2^26 | 2.9957 | 22.40 G keys/s | 0.537 GB |
| DeviceRadixSort::SortKeys u32, end_bit=30 | 2^26 | 2.5000 | 26.84 G keys/s | 0.537 GB |
| DeviceRadixSort::SortPairs u32 + u32 | 2^26 | 3.5000 | FAIL: not sorted at 12 | 1.074 GB |
| DeviceRadixSort::SortKeys u64 | 2^26 | - | skipped: needs 9.00 GB, 7.00 GB free | 1.074 GB |

median of 20 runs after 3 warm-ups, CUDA events
"""


def selftest():
    """Checks the parsing and the joining on the embedded samples; exits 1 on a failure."""
    failures = []

    def expect(what, got, want):
        if got != want:
            failures.append(f"{what}: got {got!r}, want {want!r}")

    ours = ours_rows(OURS_SAMPLE, "ours")
    expect("ours rows", len(ours), 9)
    expect("ours scan", ours["scan u32 exclusive"], (28, 0.8040, 0.5028, 0.5100))
    expect("ours Morton", ours["Morton encode, 30 bit keys"], (26, 0.2000, 0.1900, None))
    expect("peer of Morton", peer_of("Morton encode, 30 bit keys"), None)
    expect("peer of 30 bit sort", peer_of("sort u32 keys, 30 bit Morton"), "sort 30 bit")
    expect("peer of predicate", peer_of("compact by predicate, half kept"), None)
    expect("peer of pairs", peer_of("sort u32 keys + u32 values"), "sort pairs")
    expect("peer of the brief's scan name", peer_of("exclusive scan u32"), "scan")
    expect("cub key of 30 bits", cub_key("DeviceRadixSort::SortKeys u32, end_bit=30"), "sort 30 bit")
    expect("cub key of u32", cub_key("DeviceRadixSort::SortKeys u32"), "sort u32")

    cub, header = cub_rows(CUB_SAMPLE, "cub")
    expect("cub rows", len(cub), 8)
    expect("cub header", header[0], "device: NVIDIA H200 (sm_90, 132 SMs, 150.0 GB)")
    expect("cub sort", cub[("sort u32", 26)], (2.9957, None))
    expect("cub skipped", cub[("sort u64", 26)], (None, "skipped: needs 9.00 GB, 7.00 GB free"))

    table = side_by_side(OURS_SAMPLE, "ours", CUB_SAMPLE, "cub")
    lines = [l for l in table.splitlines() if l.startswith("| ") and not l.startswith(("| operation", "| ---"))]
    expect(
        "joined rows",
        [l.split(" | ")[0][2:] for l in lines],
        [
            "copy u32 (ours: copy kernel, the scan row's copy ms)",
            "scan u32 exclusive",
            "scan u32 exclusive, single pass",
            "compact by flag, half kept",
            "sort u32 keys",
            "sort u32 keys + u32 values",
            "sort u64 keys",
        ],
    )
    expect("copy row", lines[0], "| copy u32 (ours: copy kernel, the scan row's copy ms) | 2^28 | 0.5028 | 0.5000 | 0.99 |")
    expect("scan row", lines[1], "| scan u32 exclusive | 2^28 | 0.8040 | 0.8675 | 1.08 |")
    expect("sort row", lines[4], "| sort u32 keys | 2^26 | 5.4944 | 2.9957 | 0.55 |")
    expect("FAIL row", lines[5].endswith("| CUB FAIL: not sorted at 12 |"), True)
    expect("skipped row", lines[6], "| sort u64 keys | 2^26 | 11.0000 | - | CUB skipped: needs 9.00 GB, 7.00 GB free |")
    expect("adapter line", table.splitlines()[0].startswith("ours: NVIDIA H200; CUB: device: NVIDIA H200"), True)
    expect("moves of compaction", any("u8 flags (5 B)" in l for l in table.splitlines()), True)
    expect("own copy note", "- sort u32 keys (2^26): ours' time includes copying the unsorted keys 0.1400 ms" in table, True)

    # The same table as JSON and as Markdown.
    as_json = json.dumps(
        [
            {
                "title": "Primitives",
                "rows": [
                    {"operation": "scan u32 exclusive", "n": "2^28", "GPU ms": 0.804, "copy ms": 0.5028},
                    {"operation": "sort u32 keys", "n": "2^26", "GPU ms": "-", "copy ms": "-"},
                ],
                "notes": ["adapter: NVIDIA H200; GPU times from timestamp queries"],
            }
        ]
    )
    expect("json rows", ours_rows(as_json, "ours.json"), {"scan u32 exclusive": (28, 0.804, 0.5028, None), "sort u32 keys": (26, None, None, None)})
    as_md = "### Primitives\n\n| operation | n | GPU ms | copy ms |\n| --- | --- | --- | --- |\n| sort u64 keys | 2^26 | 11.0 | 0.26 |\n"
    expect("markdown rows", ours_rows(as_md, "ours.md"), {"sort u64 keys": (26, 11.0, 0.26, None)})

    # Bad input: an error naming the file, the line and the value.
    bad = OURS_SAMPLE.replace("5.4944", "5.49x4")
    try:
        ours_rows(bad, "ours.txt")
        failures.append("bad GPU ms: no error")
    except InputError as e:
        expect("bad GPU ms", str(e), "ours.txt:8: expected milliseconds or '-', found '5.49x4'")
    try:
        cub_rows("no table here\n", "cub.md")
        failures.append("no CUB table: no error")
    except InputError as e:
        expect("no CUB table names the file", str(e).startswith("cub.md: no table"), True)

    for f in failures:
        print(f"FAIL {f}", file=sys.stderr)
    print(f"selftest: {'FAILED' if failures else 'ok'} ({len(failures)} failures)")
    return 1 if failures else 0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("ours", nargs="?", help="the output of `lumbre bench primitives`")
    p.add_argument("cub", nargs="?", help="the output of the cub program")
    p.add_argument("--selftest", action="store_true", help="check the parsing on embedded samples")
    a = p.parse_args()
    if a.selftest:
        return selftest()
    if not (a.ours and a.cub):
        p.error("give the two files, ours then CUB's (or --selftest)")
    try:
        texts = []
        for path in (a.ours, a.cub):
            try:
                with open(path, encoding="utf-8") as f:
                    texts.append(f.read())
            except OSError as e:
                raise InputError(f"{path}: cannot read: {e.strerror}") from None
        sys.stdout.write(side_by_side(texts[0], a.ours, texts[1], a.cub))
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
