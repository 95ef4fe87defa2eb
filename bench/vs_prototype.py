#!/usr/bin/env python3
"""vs_prototype.py — the training epoch of the PyTorch prototype and of bench_nn's kernel copies, in one
run, on one thread of this machine: issue 28's "epoch ≥ 50x the prototype on the same core".

The prototype (dos-group/bellamy-runtime-prediction, src/model.py) is rebuilt here from its structure, not
its code: f = Linear(3,16) SELU Linear(16,8) SELU; g = Linear(40,8, no bias) SELU AlphaDropout Linear(8,4,
no bias) SELU; h = Linear(4,8, no bias) SELU AlphaDropout Linear(8,40, no bias) Tanh; z = Linear(8 +
4·essential + 4, 8) SELU Linear(8,1) SELU; per batch one g and h call on all essential vectors and one on
all optional ones (the codes laid out per row, the optional ones averaged); loss SmoothL1 plus the two
reconstructions' MSE; Adam (lr 1e-3, weight decay 1e-4) after every batch; float64, as the prototype
trains (`.double()`), and float32 for reference. Its PyTorch Geometric batching, ignite engine and
per-epoch validation are left out, so the prototype's real epoch costs more than this one. The data are
bench_nn's pagerank-like shape: 1410 rows, 4 essential properties and 1 optional one with 1, 3, 8, 20 and
47 distinct 40-vectors, batches of 64 (the last short), dropout 0.1.

  bench/vs_prototype.py [--build DIR] [--rounds N] [--pairs P] [--copy COPY ...]

A B A B over P pairs: each pair times the PyTorch epoch (best of N rounds of processor time, 5 epochs a
round) and then bench_nn's train/row epoch for each copy (the same epoch: per-row masks, Adam after every
batch); prints the medians and the ratios to the float64 prototype, pair by pair. Exit 77 without PyTorch.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

ROWS, BATCH, NVALS, N_ESS, VEC = 1410, 64, (1, 3, 8, 20, 47), 4, 40


def prototype_epoch_ms(rounds, dtype_name):
    import torch
    from torch import nn

    dtype = getattr(torch, dtype_name)
    torch.set_num_threads(1)
    torch.manual_seed(1)
    g = torch.Generator().manual_seed(1)
    vecs = [torch.randint(0, 2, (n, VEC), generator=g).to(dtype) for n in NVALS]
    sx = torch.rand(6, 3, generator=g).to(dtype)
    rows_sx = torch.randint(0, 6, (ROWS,), generator=g)
    rows_val = [torch.randint(0, n, (ROWS,), generator=g) for n in NVALS]
    target = (1.0 + 3.0 * torch.rand(ROWS, 1, generator=g)).to(dtype)
    batches = []  # per batch: features, essential vectors row by row [B·ess, 40], optional ones, targets
    for i0 in range(0, ROWS, BATCH):
        sl = slice(i0, min(i0 + BATCH, ROWS))
        v = torch.stack([vecs[p][rows_val[p][sl]] for p in range(len(NVALS))], 1)  # [B, properties, 40]
        batches.append((sx[rows_sx[sl]], v[:, :N_ESS].reshape(-1, VEC), v[:, N_ESS:].reshape(-1, VEC), target[sl]))

    p = 0.1
    f = nn.Sequential(nn.Linear(3, 16), nn.SELU(), nn.Linear(16, 8), nn.SELU())
    enc = nn.Sequential(nn.Linear(VEC, 8, bias=False), nn.SELU(), nn.AlphaDropout(p), nn.Linear(8, 4, bias=False),
                        nn.SELU())
    dec = nn.Sequential(nn.Linear(4, 8, bias=False), nn.SELU(), nn.AlphaDropout(p), nn.Linear(8, VEC, bias=False),
                        nn.Tanh())
    z = nn.Sequential(nn.Linear(8 + 4 * N_ESS + 4, 8), nn.SELU(), nn.Linear(8, 1), nn.SELU())
    mods = [m.to(dtype) for m in (f, enc, dec, z)]
    opt = torch.optim.Adam([q for m in mods for q in m.parameters()], lr=1e-3, weight_decay=1e-4)
    for m in mods:
        m.train()

    def epoch():
        # the prototype's forward: the essential vectors of the batch through g and h in one call, the
        # optional ones in another; codes laid out per row, the optional ones averaged per row
        for xs, ve, vo, y in batches:
            opt.zero_grad()
            b = xs.shape[0]
            ce, co = enc(ve), enc(vo)
            u = torch.cat([f(xs), ce.reshape(b, -1), co.reshape(b, -1, 4).mean(1)], 1)
            loss = nn.functional.smooth_l1_loss(z(u), y)
            loss = loss + nn.functional.mse_loss(dec(ce), ve) + nn.functional.mse_loss(dec(co), vo)
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
    """bench_nn's epoch/row and train/row figures for one copy; None where bench_nn has no such copy here."""
    out = subprocess.run([os.path.join(build, "bench", "bench_nn"), "--rounds", str(rounds), "--only", copy],
                         check=True, capture_output=True, text=True).stdout
    lines = out.splitlines()
    head = next((ln.split() for ln in lines if ln.startswith("copy ")), None)
    # the first columns, in bench_nn's order: copy, epoch/row ms, epoch/value ms, train/row ms, ...
    if not head or head[1:7] != ["epoch/row", "ms", "epoch/value", "ms", "train/row", "ms"]:
        sys.exit(f"vs_prototype: bench_nn's columns are not the ones this script reads:\n{out}")
    row = next((ln.split() for ln in lines if ln.split()[:1] == [copy]), None)
    if not row:
        return None
    return float(row[1]), float(row[3]), lines[0]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--copy", action="append")
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--prototype-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--self-check", action="store_true", help="read one bench_nn row (generic copy) and stop")
    a = ap.parse_args()
    if a.self_check:  # the test suite's check that this script still reads bench_nn's columns
        got = bench_nn_train_ms(a.build, "generic", 1)
        print(f"vs_prototype: bench_nn generic: epoch/row {got[0]} ms, train/row {got[1]} ms" if got else
              "vs_prototype: bench_nn printed no generic row")
        return 0 if got and got[0] > 0 and got[1] > 0 else 1
    try:
        import torch  # noqa: F401
    except ImportError:
        print("vs_prototype: no PyTorch here (Debian: apt-get install python3-torch); skipped")
        return 77
    if a.prototype_only:
        for dtype in ("float64", "float32"):
            proto, version = prototype_epoch_ms(a.rounds, dtype)
            print(f"{proto} {version}")
        return 0
    copies = a.copy or ["avx512/f32", "avx2/f32"]
    # A B A B: each pair times the prototype, then every copy; the ratios are taken pair by pair (the box's
    # speed drifts) and their medians printed. Each side runs in a process of its own: PyTorch's thread
    # pools stay alive in the process that loaded it.
    one_thread = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    p64, p32, epoch, train, version, first = [], [], {c: [] for c in copies}, {c: [] for c in copies}, "", ""
    for _ in range(a.pairs):
        out = subprocess.run([sys.executable, __file__, "--prototype-only", "--rounds", str(a.rounds)], check=True,
                             capture_output=True, text=True, env=one_thread).stdout.split()
        p64.append(float(out[0]))
        p32.append(float(out[2]))
        version = out[1]
        for c in copies:
            try:
                got = bench_nn_train_ms(a.build, c, a.rounds)
            except subprocess.CalledProcessError as err:
                sys.exit(f"vs_prototype: bench_nn --only {c} failed ({err.returncode}): {err.stderr.strip()}")
            if got is None:
                continue  # not a copy this processor (or BELLAMY_CPU) runs
            epoch[c].append(got[0])
            train[c].append(got[1])
            first = got[2]
    med = statistics.median
    proto = p64
    print(first)
    print(f"PyTorch {version}, one thread, {a.pairs} pairs of best-of-{a.rounds} rounds, medians: the prototype's "
          f"epoch {med(p64):.2f} ms in float64 (as it trains), {med(p32):.2f} ms in float32; ratios to float64")
    for c in copies:
        if not train[c]:
            print(f"{c}: not run here (this processor or BELLAMY_CPU has no such copy)")
            continue
        rt = [p / t for p, t in zip(proto, train[c])]
        re = [p / t for p, t in zip(proto, epoch[c])]
        print(f"{c}: train epoch {med(train[c]):.3f} ms, {med(rt):.1f}x the prototype (the median of the pairs' "
              f"ratios; pairs {min(rt):.1f}-{max(rt):.1f}x); pass only {med(epoch[c]):.3f} ms, {med(re):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
