"""Mitsuba 3's path tracer on one of our OBJ + MTL scenes: the independent reference of the
path tracer's error study (benches/RESULTS.md, "Error at equal samples").

    pip install mitsuba
    python3 benches/peers/mitsuba_path.py SCENE.obj --camera 0,1,3.9,0,1,0,0,1,0,40 \
        --width 64 --height 64 --spp 1024 -o mitsuba.exr [--variant scalar_rgb] [--seed 0]

What it renders, as `lumbre render --method path` does: every `usemtl` group of the OBJ becomes
a mesh (the OBJ's vertex normals as shading normals, else flat) with a diffuse BSDF of the
material's `Kd` and, where `Ke` is not zero, a one-sided
area emitter of radiance `Ke`; a perspective camera from our camera string (eye, target, up,
vertical field of view in degrees); a box pixel filter (`--filter gaussian` for Mitsuba's
default, which spreads each sample over neighbouring pixels: less noise a pixel, a blurred
image); the `path` integrator with `max_depth` 65 (our 64
bounces plus the camera ray) and Russian roulette from depth 3 (`rr_depth`; Mitsuba's own
rule for the survival probability, not ours); next-event estimation and MIS as Mitsuba does
them. Written as a linear RGB EXR that `lumbre compare` reads.
"""

import argparse
import os
import struct
import sys
import tempfile


def parse_mtl(path):
    mats, name = {}, None
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "newmtl":
                name = w[1]
                mats[name] = {"Kd": (0.0, 0.0, 0.0), "Ke": (0.0, 0.0, 0.0)}
            elif name and w[0] in ("Kd", "Ke"):
                mats[name][w[0]] = tuple(float(x) for x in w[1:4])
    return mats


def parse_obj(path):
    """Vertices, normals and, per material, the triangles as (vertex, normal) index triples
    (normal -1: none; polygons fanned), as in our loader."""
    verts, normals, groups, mats, current = [], [], {}, {}, None
    base = os.path.dirname(path)
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "v":
                verts.append(tuple(float(x) for x in w[1:4]))
            elif w[0] == "vn":
                normals.append(tuple(float(x) for x in w[1:4]))
            elif w[0] == "mtllib":
                mats.update(parse_mtl(os.path.join(base, " ".join(w[1:]))))
            elif w[0] == "usemtl":
                current = w[1]
            elif w[0] == "f":
                idx = []
                for c in w[1:]:
                    parts = c.split("/")
                    i = int(parts[0])
                    n = int(parts[2]) if len(parts) > 2 and parts[2] else 0
                    idx.append((i - 1 if i > 0 else len(verts) + i, n - 1 if n > 0 else (len(normals) + n if n < 0 else -1)))
                for k in range(1, len(idx) - 1):
                    groups.setdefault(current, []).append((idx[0], idx[k], idx[k + 1]))
    return verts, normals, groups, mats


def write_ply(path, verts, normals, tris):
    """A binary PLY of the triangles' own vertices with a normal each: the OBJ's where a face
    has them at every corner (interpolated, as our shading normals), else the face's."""
    with open(path, "wb") as f:
        f.write(
            (
                "ply\nformat binary_little_endian 1.0\n"
                f"element vertex {3 * len(tris)}\nproperty float x\nproperty float y\nproperty float z\n"
                "property float nx\nproperty float ny\nproperty float nz\n"
                f"element face {len(tris)}\nproperty list uchar int vertex_indices\nend_header\n"
            ).encode()
        )
        for t in tris:
            p = [verts[v] for v, _ in t]
            if all(n >= 0 for _, n in t):
                ns = [normals[n] for _, n in t]
            else:
                e1 = [p[1][k] - p[0][k] for k in range(3)]
                e2 = [p[2][k] - p[0][k] for k in range(3)]
                g = (e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0])
                ns = [g] * 3
            for q, n in zip(p, ns):
                f.write(struct.pack("<6f", *q, *n))
        for k in range(len(tris)):
            f.write(struct.pack("<B3i", 3, 3 * k, 3 * k + 1, 3 * k + 2))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scene")
    ap.add_argument("--camera", required=True, help="ex,ey,ez,tx,ty,tz,ux,uy,uz,fov (vertical, degrees)")
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--height", type=int, default=64)
    ap.add_argument("--spp", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", default="scalar_rgb")
    ap.add_argument("--filter", default="box", help="box (as ours) or gaussian (Mitsuba's default)")
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()

    import mitsuba as mi

    mi.set_variant(a.variant)
    c = [float(x) for x in a.camera.split(",")]
    if len(c) != 10:
        sys.exit(f"--camera {a.camera}: expected 10 numbers")
    verts, normals, groups, mats = parse_obj(a.scene)
    tmp = tempfile.mkdtemp(prefix="mitsuba-")
    scene = {
        "type": "scene",
        "integrator": {"type": "path", "max_depth": 65, "rr_depth": 3},
        "sensor": {
            "type": "perspective",
            "fov": c[9],
            "fov_axis": "y",
            "to_world": mi.ScalarTransform4f().look_at(origin=c[0:3], target=c[3:6], up=c[6:9]),
            "sampler": {"type": "independent", "sample_count": a.spp, "seed": a.seed},
            "film": {
                "type": "hdrfilm",
                "width": a.width,
                "height": a.height,
                "rfilter": {"type": a.filter},
                "pixel_format": "rgb",
            },
        },
    }
    for k, (name, tris) in enumerate(groups.items()):
        m = mats.get(name, {"Kd": (0.8, 0.8, 0.8), "Ke": (0.0, 0.0, 0.0)})
        ply = os.path.join(tmp, f"{k}.ply")
        write_ply(ply, verts, normals, tris)
        shape = {
            "type": "ply",
            "filename": ply,
            "bsdf": {"type": "diffuse", "reflectance": {"type": "rgb", "value": list(m["Kd"])}},
        }
        if max(m["Ke"]) > 0:
            shape["emitter"] = {"type": "area", "radiance": {"type": "rgb", "value": list(m["Ke"])}}
        scene[f"shape{k}"] = shape
    image = mi.render(mi.load_dict(scene), spp=a.spp, seed=a.seed)
    mi.Bitmap(image).write(a.out)
    print(f"{a.scene}: {sum(len(t) for t in groups.values())} triangles, {a.width}x{a.height}, {a.spp} spp -> {a.out}")


if __name__ == "__main__":
    main()
