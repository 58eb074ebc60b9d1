"""Peer baselines through PyTorch for the tables of `lumbre bench`: the copy and cuBLAS.

Run in the same call as the `lumbre bench` it is compared with: `python3 benches/peers.py`.
Prints one table: the operation, its size, the median of 10 timed runs after 3 warm-ups
(CUDA events), and GB/s counting bytes read plus bytes written. What each row moves:

- copy (clone) u32, 2^28: reads n u32 and writes n u32 (8 B per element), the roofline;
- mv f32, one channel, n x k: reads the n x k f32 matrix (4 B per entry; the k-vector read and
  the n results written, about 1/k of that, are not counted);
- mm f32, 3 lightings, n x k x 3: reads the same matrix once for three right-hand sides (GB/s
  counts the matrix only);
- mv f32, RGB bytes, n x 3k: reads three n x k matrices' worth (12 B per entry of one), the
  bytes of the radiosity RGB solve.

Scan, compaction and radix sort are measured against CUB called directly
(`benches/peers/cub.cu`), not through PyTorch, whose calls do other work: `torch.cumsum` of
int32 accumulates and writes int64, `torch.sort` also returns int64 indices, and
`torch.masked_select` is not CUB's select.
"""

import torch


def median_ms(fn, warmup=3, repeats=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    times.sort()
    return times[len(times) // 2]


def row(name, size, ms, moved):
    print(f"| {name} | {size} | {ms:.4f} | {moved / ms / 1e6:.0f} |")


def main():
    dev = torch.device("cuda")
    print(f"device: {torch.cuda.get_device_name(0)}, torch {torch.__version__}")
    print("| operation | size | median ms | GB/s |")
    print("| --- | --- | --- | --- |")
    n = 1 << 28
    x = torch.randint(0, 1 << 30, (n,), dtype=torch.int32, device=dev)
    row("copy (clone) u32", "2^28", median_ms(lambda: x.clone()), 8 * n)
    del x
    # The radiosity solve B = E - Y (V^T E) per channel: an n x k product (cuBLAS gemv/gemm).
    for n_el, k_p in [(13824, 864), (55296, 3456), (221184, 864), (221184, 3456)]:
        y = torch.rand((n_el, k_p), dtype=torch.float32, device=dev)
        v = torch.rand((k_p,), dtype=torch.float32, device=dev)
        row("mv f32 (torch.mv), one channel", f"{n_el}x{k_p}", median_ms(lambda: torch.mv(y, v)), 4 * n_el * k_p)
        v3 = torch.rand((k_p, 3), dtype=torch.float32, device=dev)
        row("mm f32 (torch.mm), 3 lightings", f"{n_el}x{k_p}x3", median_ms(lambda: torch.mm(y, v3)), 4 * n_el * k_p)
        del y
        # The RGB solve reads three n x k matrices: the same bytes as one n x 3k gemv.
        y3 = torch.rand((n_el, 3 * k_p), dtype=torch.float32, device=dev)
        v = torch.rand((3 * k_p,), dtype=torch.float32, device=dev)
        row("mv f32 (torch.mv), RGB bytes", f"{n_el}x{3 * k_p}", median_ms(lambda: torch.mv(y3, v)), 12 * n_el * k_p)
        del y3


if __name__ == "__main__":
    main()
