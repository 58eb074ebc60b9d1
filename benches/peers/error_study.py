"""The path tracer's error at equal samples against Mitsuba 3's: variance or bias?

    cargo build --release -p lumbre
    pip install mitsuba
    python3 benches/peers/error_study.py [--scenes cornell,bunny-room] [--size 128] [--spp 64] \
        [--ref-spp 16384] [--backend cpu|gpu] [--out DIR]

For each scene of the set (written as OBJ + MTL by `lumbre scenes --write`), at N samples
per pixel:

- ours N against ours 16N: our image of samples [0, N) against the mean of samples
  [N, 17N), derived from a 17N render as (17 I_17N - I_N) / 16 (our samples are a fixed
  sequence, so a plain 16N render would share the first N);
- Mitsuba N against Mitsuba 16N (other seeds): the same for Mitsuba;
- ours N and Mitsuba N against an independent Mitsuba reference of --ref-spp samples;
- our reference (--ref-spp) against Mitsuba's.

Each with `lumbre compare`: RMSE over linear RGB and the mean relative error on luminance.
If our error against Mitsuba's reference exceeds our error against our own 16N by more
than the references' own noise explains, the difference is bias; if ours N against ours 16N
is already larger than Mitsuba's against Mitsuba's, it is variance (the sampling strategy).
"""

import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LUMBRE = os.path.join(ROOT, "target", "release", "lumbre")

def run(args):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)}:\n{r.stdout}{r.stderr}")
    return r.stdout + r.stderr


def compare(test, ref):
    out = run([LUMBRE, "compare", test, ref])
    rmse = float(re.search(r"RMSE, linear RGB\s+([0-9.e+-]+)", out).group(1))
    rel = float(re.search(r"relative error, mean\s+([0-9.]+)%", out).group(1))
    return rmse, rel


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default="cornell,bunny-room")
    ap.add_argument("--size", type=int, default=128)
    ap.add_argument("--spp", type=int, default=64)
    ap.add_argument("--ref-spp", type=int, default=16384)
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--out", default="error-study")
    a = ap.parse_args()
    import mitsuba as mi
    import numpy as np

    mi.set_variant("scalar_rgb")
    os.makedirs(a.out, exist_ok=True)
    run([LUMBRE, "scenes", "--write", a.out])
    cameras = {}
    for line in run([LUMBRE, "scenes"]).splitlines():
        m = re.search(r"^\s*([a-z0-9-]+)\s.*?(-?[0-9.]+(?:,\s*-?[0-9.]+){9})", line)
        if m:
            cameras[m.group(1)] = m.group(2).replace(" ", "")
    n, s = a.spp, a.size
    print(f"| scene | N | ours N vs ours 16N | Mitsuba N vs Mitsuba 16N | ours N vs Mitsuba ref | Mitsuba N vs Mitsuba ref | ours ref vs Mitsuba ref |")
    print("| --- | ---: | --- | --- | --- | --- | --- |")
    for name in a.scenes.split(","):
        obj = os.path.join(a.out, f"{name}.obj")
        if name not in cameras or not os.path.exists(obj):
            sys.exit(f"{name}: no camera in `lumbre scenes` or no {obj}")
        cam = cameras[name]
        p = lambda tag: os.path.join(a.out, f"{name}-{tag}.exr")
        mitsuba = os.path.join(HERE, "mitsuba_path.py")
        for tag, spp, seed in [("mi-n", n, 1), ("mi-16n", 16 * n, 2), ("mi-ref", a.ref_spp, 3)]:
            if not os.path.exists(p(tag)):
                run([sys.executable, mitsuba, obj, "--camera", cam, "--width", str(s), "--height", str(s),
                     "--spp", str(spp), "--seed", str(seed), "-o", p(tag)])
        for tag, spp in [("ours-n", n), ("ours-17n", 17 * n), ("ours-ref", a.ref_spp)]:
            if not os.path.exists(p(tag)):
                run([LUMBRE, "render", f"set:{name}", "--method", "path", "--width", str(s), "--height", str(s),
                     "--spp", str(spp), "--backend", a.backend, "-o", p(tag)])
        i_n = np.array(mi.Bitmap(p("ours-n")))[..., :3].astype(np.float64)
        i_17 = np.array(mi.Bitmap(p("ours-17n")))[..., :3].astype(np.float64)
        rest = ((17 * i_17 - i_n) / 16).astype(np.float32)
        mi.Bitmap(rest).write(p("ours-16n"))
        cells = [
            compare(p("ours-n"), p("ours-16n")),
            compare(p("mi-n"), p("mi-16n")),
            compare(p("ours-n"), p("mi-ref")),
            compare(p("mi-n"), p("mi-ref")),
            compare(p("ours-ref"), p("mi-ref")),
        ]
        row = " | ".join(f"{r:.5f} / {e:.2f}%" for r, e in cells)
        print(f"| {name} | {n} | {row} |")
    print("\ncells: RMSE over linear RGB / mean relative error on luminance (`lumbre compare`)")


if __name__ == "__main__":
    main()
