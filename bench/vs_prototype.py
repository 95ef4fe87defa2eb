#!/usr/bin/env python3
"""vs_prototype.py — the training epoch of the PyTorch prototype and of bench_nn's kernel copies, in one
run, on one thread of this machine: issue 28's "epoch ≥ 50x the prototype on the same core".

The prototype's network is built here as its state-dict names say it is (the names our model files keep:
f.0/f.2, g.0/g.3, h.0/h.3, z.0/z.2): f = Linear(3,16) SELU Linear(16,8) SELU; g = Linear(40,8, no bias)
SELU AlphaDropout Linear(8,4, no bias) SELU; h = Linear(4,8, no bias) SELU AlphaDropout Linear(8,40, no
bias) Tanh; z = Linear(8 + 4·essential + 4, 8) SELU Linear(8,1) SELU. Loss: SmoothL1 on the runtime plus
the MSE of every property's reconstruction; Adam (lr 1e-3, weight decay 1e-4) after every batch. The data
are bench_nn's pagerank-like shape: 1410 rows, 4 essential properties and 1 optional one with 1, 3, 8, 20
and 47 distinct 40-vectors, batches of 64 (the last short), dropout 0.1, float32 as PyTorch defaults.

  bench/vs_prototype.py [--build DIR] [--rounds N] [--pairs P] [--copy COPY ...]

The prototype's own code is not at hand, so its epoch is timed two ways: g and h called once per property,
and once on every property's vectors stacked (fewer, larger calls: the cheaper of the two for PyTorch).
Prints both (best of N rounds of processor time), bench_nn's train/row epoch for each copy (the same
epoch: per-row masks, Adam after every batch), and the ratios to the faster PyTorch form. Exit 77 without
PyTorch.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROWS, BATCH, NVALS, N_ESS, VEC = 1410, 64, (1, 3, 8, 20, 47), 4, 40


def prototype_epoch_ms(rounds, stacked):
    import torch
    from torch import nn

    torch.set_num_threads(1)
    torch.manual_seed(1)
    g = torch.Generator().manual_seed(1)
    vecs = [torch.randint(0, 2, (n, VEC), generator=g).float() for n in NVALS]
    sx = torch.rand(6, 3, generator=g)
    rows_sx = torch.randint(0, 6, (ROWS,), generator=g)
    rows_val = [torch.randint(0, n, (ROWS,), generator=g) for n in NVALS]
    target = 1.0 + 3.0 * torch.rand(ROWS, 1, generator=g)
    batches = []
    for i0 in range(0, ROWS, BATCH):
        sl = slice(i0, min(i0 + BATCH, ROWS))
        batches.append((sx[rows_sx[sl]], [vecs[p][rows_val[p][sl]] for p in range(len(NVALS))], target[sl]))

    p = 0.1
    f = nn.Sequential(nn.Linear(3, 16), nn.SELU(), nn.Linear(16, 8), nn.SELU())
    enc = nn.Sequential(nn.Linear(VEC, 8, bias=False), nn.SELU(), nn.AlphaDropout(p), nn.Linear(8, 4, bias=False),
                        nn.SELU())
    dec = nn.Sequential(nn.Linear(4, 8, bias=False), nn.SELU(), nn.AlphaDropout(p), nn.Linear(8, VEC, bias=False),
                        nn.Tanh())
    z = nn.Sequential(nn.Linear(8 + 4 * N_ESS + 4, 8), nn.SELU(), nn.Linear(8, 1), nn.SELU())
    params = [q for m in (f, enc, dec, z) for q in m.parameters()]
    opt = torch.optim.Adam(params, lr=1e-3, weight_decay=1e-4)
    for m in (f, enc, dec, z):
        m.train()

    def epoch():
        for xs, vs, y in batches:
            opt.zero_grad()
            if stacked:  # every property's vectors through g and h in one call each
                b = xs.shape[0]
                v = torch.cat(vs, 0)
                c = enc(v)
                r = dec(c)
                codes = list(c.view(len(vs), b, 4))
                ne = N_ESS * b
                recon_loss = nn.functional.mse_loss(r[:ne], v[:ne]) + nn.functional.mse_loss(r[ne:], v[ne:])
            else:  # one call per property
                codes = [enc(v) for v in vs]
                recon = [dec(c) for c in codes]
                recon_loss = nn.functional.mse_loss(torch.cat(recon[:N_ESS], 1), torch.cat(vs[:N_ESS], 1))
                recon_loss = recon_loss + nn.functional.mse_loss(torch.cat(recon[N_ESS:], 1),
                                                                 torch.cat(vs[N_ESS:], 1))
            u = torch.cat([f(xs)] + codes[:N_ESS] + [torch.stack(codes[N_ESS:]).mean(0)], 1)
            loss = nn.functional.smooth_l1_loss(z(u), y) + recon_loss
            loss.backward()
            opt.step()

    epoch()  # warm-up: allocator, dispatch caches
    best = float("inf")
    for _ in range(rounds):
        t0 = time.thread_time()
        for _ in range(5):
            epoch()
        best = min(best, (time.thread_time() - t0) / 5 * 1e3)
    return best, torch.__version__


def bench_nn_train_ms(build, copy, rounds):
    out = subprocess.run([os.path.join(build, "bench", "bench_nn"), "--rounds", str(rounds), "--only", copy],
                         check=True, capture_output=True, text=True).stdout
    head, row = None, None
    for line in out.splitlines():
        if line.startswith("copy "):
            head = line.split()
        elif line.split() and line.split()[0] == copy:
            row = line.split()
    if not head or not row:
        sys.exit(f"vs_prototype: bench_nn printed no row for {copy}:\n{out}")
    # header words: copy, epoch/row, ms, epoch/value, ms, train/row, ms, ... -> figures in column order
    names = [w for w in head[1:] if w not in ("ms", "M/s", "ns/val", "ns/par")]
    vals = dict(zip(names, row[1:]))
    return float(vals["epoch/row"]), float(vals["train/row"]), out.splitlines()[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--copy", action="append")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--prototype-only", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    try:
        import torch  # noqa: F401
    except ImportError:
        print("vs_prototype: no PyTorch here (Debian: apt-get install python3-torch); skipped")
        return 77
    if a.prototype_only:
        for stacked in (0, 1):
            proto, version = prototype_epoch_ms(a.rounds, stacked)
            print(f"{proto} {version}")
        return 0
    copies = a.copy or ["avx512/f32", "avx2/f32"]
    # A B A B: each pair times the prototype, then every copy; the ratios are taken pair by pair (the box's
    # speed drifts) and their medians printed. Each side runs in a process of its own: PyTorch's thread
    # pools stay alive in the process that loaded it.
    per_prop, stacked, epoch, train, version, first = [], [], {c: [] for c in copies}, {c: [] for c in copies}, "", ""
    for _ in range(a.pairs):
        out = subprocess.run([sys.executable, __file__, "--prototype-only", "--rounds", str(a.rounds)], check=True,
                             capture_output=True, text=True).stdout.split()
        per_prop.append(float(out[0]))
        stacked.append(float(out[2]))
        version = out[1]
        for c in copies:
            try:
                e, t, first = bench_nn_train_ms(a.build, c, a.rounds)
            except subprocess.CalledProcessError as err:
                sys.exit(f"vs_prototype: bench_nn --only {c} failed ({err.returncode}): {err.stderr.strip()}")
            epoch[c].append(e)
            train[c].append(t)
    med = statistics.median
    proto = [min(x, y) for x, y in zip(per_prop, stacked)]
    print(first)
    print(f"PyTorch {version}, one thread, float32, {a.pairs} pairs of best-of-{a.rounds} rounds, medians: epoch "
          f"{med(per_prop):.2f} ms with g and h called per property, {med(stacked):.2f} ms with every property in "
          f"one call (the ratios use the faster of the two, pair by pair)")
    for c in copies:
        rt = [p / t for p, t in zip(proto, train[c])]
        re = [p / t for p, t in zip(proto, epoch[c])]
        print(f"{c}: train epoch {med(train[c]):.3f} ms, {med(rt):.1f}x the prototype (pairs {min(rt):.1f}-"
              f"{max(rt):.1f}x); pass only {med(epoch[c]):.3f} ms, {med(re):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
