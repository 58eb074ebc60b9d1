"""Embree beside our CPU ray tracer on the same rays and triangles: a peer of the incoherent rays.

    lumbre bench raytrace --tables incoherent --backend cpu --export-rays DIR ...
    python3 benches/peers/embree_rays.py DIR
    python3 benches/peers/embree_rays.py --selftest

Needs `pip install embreex` (Embree 4 with numpy). Reads the export folder that
`--export-rays` writes (`DIR/rays.json` names, per scene, the triangles, the primary and bounce
rays our CPU traced, its hit distances and its rays/s; every binary file is raw little-endian
f32), builds one Embree scene per scene (`rtcore_scene.EmbreeScene` with one
`mesh_construction.TriangleMesh`), traces the same rays by closest hit and prints one Markdown
table: scene, triangles, kind, rays, ours M rays/s (from the export), Embree M rays/s,
ours/Embree (above 1, ours is faster) and hit agreement.

What each side does, per ray: closest hit from t = 0 to infinity, the distance kept, no
shading. Ours: the CPU traversal of the export's structure (the BVH by default; rayon over the
rays, on every core), the median wall time of the export's passes; the structure is built
before the clock starts. Embree:
`rtcIntersect1` per ray (embreex's `run(..., query="DISTANCE")`, which releases the GIL
while it loops over its rays), the rays dealt in chunks to `--threads` Python threads, the
median wall time of `--runs` passes after `--warmup`; the BVH is built (committed) by a
one-ray trace before the clock starts. Build times are excluded on both sides.

Hit agreement: the fraction of rays where both miss, or both hit with distances within 1e-3
relative (of ours).
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

FORMAT = "lumbre incoherent rays 1"
INDEX = "rays.json"
KINDS = ("primary", "bounce")
# Rays per chunk handed to a thread: small enough to balance two cores, large enough that
# the Python call per chunk costs nothing beside the chunk's traversal.
CHUNK = 4096
# embreex's distance for a miss (its initial tfar).
EMBREEX_MISS = 1e37
RELATIVE = 1e-3


class InputError(Exception):
    """Bad input: the message names the file and the value."""


def cores():
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def read_f32(path, count, per, what):
    """`count` x `per` f32 from the raw little-endian file `path`, every value finite
    (`inf` allowed where `what` is a distance); an InputError names the file otherwise."""
    if not path.is_file():
        raise InputError(f"{path}: not found")
    size = path.stat().st_size
    if size != count * per * 4:
        raise InputError(f"{path}: {size} bytes; {count} {what} of {per} f32 need {count * per * 4}")
    values = np.fromfile(path, dtype="<f4").reshape(count, per) if count else np.zeros((0, per), "<f4")
    bad = np.isnan(values) if what == "distances" else ~np.isfinite(values)
    if bad.any():
        i = int(np.argwhere(bad)[0][0])
        raise InputError(f"{path}: {what[:-1]} {i}: {values[i].tolist()} is not finite")
    if what == "distances" and (values < 0).any():
        i = int(np.argwhere(values < 0)[0][0])
        raise InputError(f"{path}: distance {i}: {values[i][0]} is negative")
    return values.astype(np.float32)


def field(entry, key, where):
    """`entry[key]`, or an InputError naming `where` and the key."""
    if not isinstance(entry, dict) or key not in entry:
        raise InputError(f"{where}: no `{key}`")
    return entry[key]


def count_of(entry, key, where):
    """`entry[key]` as a count (an integer >= 0)."""
    v = field(entry, key, where)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise InputError(f"{where}: `{key}` {v!r} is not a count")
    return v


def file_in(folder, entry, key, where):
    """The file named by `entry[key]`, inside `folder` (a bare name, no folders)."""
    name = field(entry, key, where)
    if not isinstance(name, str) or not name or Path(name).name != name:
        raise InputError(f"{where}: `{key}` {name!r} is not a file name in the folder")
    return folder / name


def load(folder):
    """The export in `folder`: (index, [scene, ...]), each scene a dict with name,
    triangles (n x 3 x 3) and per kind rays (m x 6), our distances (m) and our rays/s."""
    folder = Path(folder)
    index_path = folder / INDEX
    if not index_path.is_file():
        raise InputError(f"{index_path}: not found (is {folder} a folder written by --export-rays?)")
    try:
        index = json.loads(index_path.read_text())
    except (ValueError, UnicodeDecodeError) as e:
        raise InputError(f"{index_path}: not JSON: {e}") from None
    fmt = field(index, "format", str(index_path))
    if fmt != FORMAT:
        raise InputError(f"{index_path}: format {fmt!r}; this script reads {FORMAT!r}")
    scenes = []
    for n, entry in enumerate(field(index, "scenes", str(index_path))):
        where = f"{index_path}: scene {n}"
        name = field(entry, "name", where)
        where = f"{index_path}: scene {name!r}"
        tris = count_of(entry, "triangles", where)
        triangles = read_f32(file_in(folder, entry, "triangles_file", where), tris, 9, "triangles")
        scene = {"name": name, "triangles": triangles.reshape(tris, 3, 3), "kinds": {}}
        for kind in KINDS:
            k = field(entry, kind, where)
            kwhere = f"{where} {kind}"
            rays = count_of(k, "rays", kwhere)
            rate = field(k, "rays_per_second", kwhere)
            if not isinstance(rate, (int, float)) or not rate > 0:
                raise InputError(f"{kwhere}: rays_per_second {rate!r} is not a positive number")
            scene["kinds"][kind] = {
                "rays": read_f32(file_in(folder, k, "rays_file", kwhere), rays, 6, "rays"),
                "t": read_f32(file_in(folder, k, "t_file", kwhere), rays, 1, "distances").reshape(rays),
                "rate": float(rate),
            }
        scenes.append(scene)
    return index, scenes


class Embree:
    """One Embree scene over `triangles` (n x 3 x 3 f32), traced by `threads` threads."""

    def __init__(self, triangles, threads, robust):
        from embreex import mesh_construction, rtcore_scene

        self.scene = rtcore_scene.EmbreeScene(robust=robust)
        self.empty = len(triangles) == 0
        if not self.empty:
            mesh_construction.TriangleMesh(self.scene, np.ascontiguousarray(triangles, dtype=np.float32))
        self.pool = ThreadPoolExecutor(max_workers=threads)
        # embreex commits (builds the BVH) on the first trace: do it here, untimed.
        start = time.perf_counter()
        self.distances(np.zeros((1, 3), np.float32), np.ones((1, 3), np.float32))
        self.build_seconds = time.perf_counter() - start

    def distances(self, origins, dirs):
        """Closest hit distance of every ray, `inf` for a miss."""
        if self.empty:
            return np.full(len(origins), np.inf, np.float32)
        t = self.scene.run(origins, dirs, query="DISTANCE")
        return np.where(t >= EMBREEX_MISS, np.float32(np.inf), t).astype(np.float32)

    def trace(self, origins, dirs):
        """`distances` over the thread pool, the rays in chunks of CHUNK."""
        starts = range(0, len(origins), CHUNK)
        parts = self.pool.map(lambda s: self.distances(origins[s : s + CHUNK], dirs[s : s + CHUNK]), starts)
        parts = list(parts)
        return np.concatenate(parts) if parts else np.zeros(0, np.float32)

    def close(self):
        self.pool.shutdown()


def timed(fn, warmup, runs):
    """The last result of fn() and the median wall seconds of `runs` calls after `warmup`."""
    for _ in range(warmup):
        fn()
    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return result, statistics.median(times)


def agreement(ours, theirs):
    """(fraction of rays where hit/miss agree and hits are within RELATIVE of ours, the
    number of rays one side hits and the other misses)."""
    if len(ours) == 0:
        return 1.0, 0
    hit_o, hit_t = np.isfinite(ours), np.isfinite(theirs)
    both = hit_o & hit_t
    close = np.zeros(len(ours), bool)
    close[both] = np.abs(theirs[both] - ours[both]) <= RELATIVE * np.abs(ours[both])
    agree = (~hit_o & ~hit_t) | close
    return float(agree.mean()), int((hit_o != hit_t).sum())


def compare(scenes, threads, warmup, runs, robust):
    """One row per scene and kind: (scene, triangles, kind, rays, ours M rays/s, Embree M rays/s,
    ours/Embree, agreement, hit/miss mismatches, Embree build seconds)."""
    rows = []
    for s in scenes:
        embree = Embree(s["triangles"], threads, robust)
        try:
            for kind in KINDS:
                k = s["kinds"][kind]
                origins = np.ascontiguousarray(k["rays"][:, :3])
                dirs = np.ascontiguousarray(k["rays"][:, 3:])
                t, seconds = timed(lambda: embree.trace(origins, dirs), warmup, runs)
                n = len(origins)
                theirs = n / seconds if seconds > 0 else float("inf")
                frac, mismatched = agreement(k["t"], t)
                rows.append(
                    (s["name"], len(s["triangles"]), kind, n, k["rate"] / 1e6, theirs / 1e6, k["rate"] / theirs,
                     frac, mismatched, embree.build_seconds)
                )
        finally:
            embree.close()
    return rows


def sig(x):
    """Four significant digits."""
    return f"{x:.4g}"


def table(rows):
    """The Markdown table of `compare`'s rows."""
    lines = [
        "| scene | triangles | kind | rays | ours M rays/s | Embree M rays/s | ours / Embree | hit agreement |",
        "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, tris, kind, n, ours, theirs, ratio, frac, mismatched, _ in rows:
        agree = f"{100 * frac:.3f}%" + (f" ({mismatched} hit/miss)" if mismatched else "")
        lines.append(f"| {name} | {tris} | {kind} | {n} | {sig(ours)} | {sig(theirs)} | {sig(ratio)} | {agree} |")
    return "\n".join(lines)


def describe(index, rows, threads, warmup, runs, robust):
    """The notes under the table: both sides' work, threads, versions, the machine."""
    from importlib.metadata import version

    from embreex import rtcore

    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    builds = ", ".join(f"{r[0]} {sig(r[9] * 1e3)} ms" for r in rows if r[2] == KINDS[0])
    return "\n".join(
        [
            "",
            f"Both sides: closest hit of each ray from t = 0 to infinity, the distance kept, no shading; "
            f"the acceleration structure's build excluded from both times. Machine: {cores()} cores "
            f"({model}).",
            f"Ours: the CPU traversal of the {index.get('structure', 'kd-tree')} ({index.get('triangle_test')} "
            f"triangle test), {index.get('cpu_threads')} rayon threads, the median "
            f"of {index.get('cpu_passes')} passes (from {INDEX}).",
            f"Embree: {rtcore.EmbreeDevice()!r} through embreex {version('embreex')}, rtcIntersect1 per ray, "
            f"scene flags {'ROBUST' if robust else 'NONE'}, {threads} threads (chunks of {CHUNK} rays), the "
            f"median of {runs} passes after {warmup}; BVH build (untimed): {builds}.",
            f"Hit agreement: rays where both miss or both hit within {RELATIVE:g} relative of our distance.",
        ]
    )


def selftest():
    """Two triangles (a unit square at z = 0) and a few rays, through Embree and through an
    export folder written here and read back."""
    square = np.array([[[0, 0, 0], [1, 0, 0], [1, 1, 0]], [[0, 0, 0], [1, 1, 0], [0, 1, 0]]], np.float32)
    rays = np.array(
        [
            [0.25, 0.75, 1, 0, 0, -1],  # down onto the second triangle: t = 1
            [0.75, 0.25, 2, 0, 0, -2],  # a direction of length 2: t = 1
            [0.5, 0.5, -3, 0, 0, 1],  # from below (the back face): t = 3
            [2, 2, 1, 0, 0, -1],  # beside the square: a miss
            [0.5, 0.5, 1, 0, 0, 1],  # away from it: a miss
        ],
        np.float32,
    )
    expected = np.array([1, 1, 3, np.inf, np.inf], np.float32)
    embree = Embree(square, 2, robust=True)
    got = embree.trace(np.ascontiguousarray(rays[:, :3]), np.ascontiguousarray(rays[:, 3:]))
    embree.close()
    assert np.allclose(got, expected, rtol=1e-6), got
    assert agreement(expected, got) == (1.0, 0)
    assert agreement(expected, np.array([1, 1.01, 3, 5, np.inf], np.float32)) == (0.6, 1)
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        square.tofile(d / "sq.triangles.f32")
        kinds = {}
        for kind in KINDS:
            rays.astype("<f4").tofile(d / f"sq.{kind}.rays.f32")
            expected.astype("<f4").tofile(d / f"sq.{kind}.t.f32")
            kinds[kind] = {"rays": 5, "rays_per_second": 1e6, "rays_file": f"sq.{kind}.rays.f32",
                           "t_file": f"sq.{kind}.t.f32"}
        scene = {"name": "square", "triangles": 2, "triangles_file": "sq.triangles.f32", **kinds}
        index = {"format": FORMAT, "cpu_threads": 2, "cpu_passes": 3, "scenes": [scene]}
        (d / INDEX).write_text(json.dumps(index))
        index, scenes = load(d)
        rows = compare(scenes, 2, 0, 1, robust=True)
        assert [(r[2], r[3], r[7]) for r in rows] == [("primary", 5, 1.0), ("bounce", 5, 1.0)], rows
        print(table(rows))
        # A short file is refused, naming it and its size.
        (d / "sq.bounce.t.f32").write_bytes(b"\0" * 8)
        try:
            load(d)
        except InputError as e:
            assert "sq.bounce.t.f32: 8 bytes" in str(e), e
        else:
            raise AssertionError("a short file was read")
    print("selftest: ok")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", nargs="?", help="a folder written by --export-rays")
    ap.add_argument("--threads", type=int, default=cores(), help="threads tracing (default: the cores)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed passes over each kind of ray")
    ap.add_argument("--runs", type=int, default=5, help="timed passes (the median is reported)")
    ap.add_argument(
        "--no-robust", action="store_true", help="Embree's default scene flags instead of RTC_SCENE_FLAG_ROBUST"
    )
    ap.add_argument("--selftest", action="store_true", help="check two triangles and a few rays, then exit")
    a = ap.parse_args()
    if a.selftest:
        selftest()
        return 0
    if a.folder is None:
        ap.error("give the folder written by --export-rays (or --selftest)")
    for flag, v, lo in (("--threads", a.threads, 1), ("--warmup", a.warmup, 0), ("--runs", a.runs, 1)):
        if v < lo:
            ap.error(f"{flag} {v}: must be at least {lo}")
    try:
        index, scenes = load(a.folder)
    except InputError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    robust = not a.no_robust
    rows = compare(scenes, a.threads, a.warmup, a.runs, robust)
    print(table(rows))
    print(describe(index, rows, a.threads, a.warmup, a.runs, robust))
    return 0


if __name__ == "__main__":
    sys.exit(main())
