#!/usr/bin/env python3
"""test_pyreader.py — python/bellamy_model.py against libbellamy: the same predictions to 1e-9
relative, the same refusals, on models this test pre-trains with bellamy-train (every number
encoding, ensembles of odd and even size, every target scaling, cluster totals as totals and per
machine, essential-only schemas, fine-tuned models, two of them blending Ernest in through the
guard), in contexts that leave out properties the model fills (the stored schema's constants, the
one value every pre-training row had), on files rewritten into older format versions (without the
seen group) and without a header (refused unless allowed), and on damaged or foreign files; models of
precision f32 (float32 weights, computed in numpy float32) to TOL_F32 = 1e-4, and unknown precisions
refused by both. The
intervals (§P10) and the floor beyond the support (§P9) against bellamy-predict --json: a pre-trained
model with calibration, fine-tuned ones asked about their own context and others, scale-outs up to
100000, a file whose calibration was removed and files with damaged calibration or fit attributes.
The warnings about each request (§P11: kinds, properties, words) against bl_predict_warn's and
bellamy-predict --json's, the did-you-mean of a misspelt property or option, the reader's --json
against bellamy-predict's, and its one-line message when numpy, h5py or xxhash cannot be imported.
libbellamy's side is tests/pyreader_cref (bl_predict_warn through the public header) and bellamy-predict.
Run by tests/test_pyreader.sh, which picks the interpreter.

Environment: BELLAMY_SOURCE_ROOT, BELLAMY_BUILD_ROOT (set by meson test); BELLAMY_DATA or
../shared/datasets/c3o for one model on the real grep data when it is there; PYREADER_KEEP=DIR
writes the test's files into DIR (which must exist) and keeps them, to look at after a failure.
Not here: the C library's own checks (tests/test_*.c).
"""
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import xxhash

SRC = os.environ.get("BELLAMY_SOURCE_ROOT") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("BELLAMY_BUILD_ROOT") or os.path.join(SRC, "build")
sys.dont_write_bytecode = True      # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(SRC, "python"))
import bellamy_model as bm  # noqa: E402

TRAIN = os.path.join(BUILD, "bellamy-train")
PREDICT = os.path.join(BUILD, "bellamy-predict")
CREF = os.path.join(BUILD, "tests", "pyreader_cref")
READER = os.path.join(SRC, "python", "bellamy_model.py")
TOL = 1e-9
# A model of precision f32 (models/README.md §P5): the reader computes its networks in numpy float32,
# libbellamy in its float32 kernels (float64 ones before they exist), each rounding differently. float32's
# unit roundoff is 2^-24 = 6e-8; through the ~7 layers of one prediction (dot products of at most 40 terms,
# each relative error at most n·u times the terms' magnitude over the sum's) the bound
# 7 · 40 · 6e-8 = 1.7e-5 times a cancellation factor of a few gives 1e-4 relative, which this test holds
# them to; measured differences are about 2e-7.
TOL_F32 = 1e-4

failures = []
stats = {"f32_max_rel": 0.0, "compared": 0, "contexts": 0, "both_refused": 0, "max_rel": 0.0, "models": 0, "worst": "", "infinite": 0,
         "missing": 0, "intervals": 0, "unbounded": 0, "floored": 0, "standins": 0, "interval_max_rel": 0.0,
         "interval_worst": "", "warnings": 0, "warning_kinds": set(),
         "did_you_mean": 0}


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what)


def run(cmd, env=None, stdin=None):
    e = dict(os.environ)
    e.pop("BELLAMY_MODEL_IGNORE_CHECKSUM", None)
    e.pop("BELLAMY_MODEL_ALLOW_UNSTAMPED", None)
    e.update(env or {})
    return subprocess.run(cmd, input=stdin, capture_output=True, env=e)


def train(args):
    # float64 unless asked otherwise (the default on the CPU is float32): these comparisons hold to TOL = 1e-9;
    # check_precision_f32 trains float32 models and holds them to TOL_F32
    extra = ["--quiet"] + ([] if "--precision" in args else ["--precision", "f64"]) if args[0] == "pretrain" else []
    r = run([TRAIN] + args + extra)
    if r.returncode != 0:
        raise SystemExit("bellamy-train %s failed: %s" % (" ".join(args), r.stderr.decode()))


# ---- comparing with libbellamy ------------------------------------------------------------------

def c_predictions(path, name, cases, env=None, warnings=None):
    """bl_predict's answer per case (scale-outs, [(prop, value)]): ('ok', [runtimes]) or ('err', msg);
    warnings (a list, optional) receives bl_predict_warn's warnings per case, [(kind, property or None,
    message)] each ([] for a refusal)."""
    lines = []
    for xs, ctx in cases:
        f = [",".join(repr(float(x)) for x in xs).encode()]
        for k, v in ctx:
            vb = v.encode("utf-8", "surrogateescape")
            assert b"\t" not in vb and b"\n" not in vb
            f.append(k.encode() + b"=" + vb)
        lines.append(b"\t".join(f))
    r = run([CREF, path, name or "-"], env=env, stdin=b"\n".join(lines) + b"\n")
    out = r.stdout.decode("utf-8", "replace").splitlines()
    if out and out[0].startswith("loaderr\t"):
        return out[0][len("loaderr\t"):]
    res, warns = [], []
    for line in out:
        tag, _, rest = line.partition("\t")
        if tag == "warn" and warns:
            kind, prop, msg = rest.split("\t", 2)
            warns[-1].append((kind, prop or None, msg))
            continue
        res.append(("ok", [float(v) for v in rest.split(",")]) if tag == "ok" else ("err", rest))
        warns.append([])
    assert r.returncode == 0 and len(res) == len(cases), (r.returncode, r.stderr, out[:3])
    if warnings is not None:
        warnings[:] = warns
    return res


def py_warnings(fn, *args, **kw):
    """fn(*args, warnings=list, **kw) (Model.predict or predict_interval): (its result, the warnings as
    (kind, property, message) tuples); a reader without the warnings argument counts as a failure."""
    w = []
    try:
        res = fn(*args, warnings=w, **kw)
    except TypeError as e:
        check(False, "the Python reader gives no warnings (%s)" % e)
        return fn(*args, **kw), None
    return res, [(x.kind, x.property, x.message) for x in w]


def c_describe(path, name, env=None):
    """What libbellamy's predictor says of a model: (method, weight, why, [(property, essential,
    number, cluster total, filled value or None, 'schema'/'seen'/None)])."""
    r = run([CREF, path, name or "-", "--describe"], env=env)
    lines = r.stdout.decode("utf-8", "replace").splitlines()
    assert r.returncode == 0 and lines and lines[0].startswith("method\t"), (r.returncode, r.stderr, lines[:2])
    _, method, w, why = lines[0].split("\t", 3)
    props = []
    for line in lines[1:]:
        _, pn, ess, num, tot, frm, value = line.split("\t", 6)
        props.append((pn, ess == "1", num == "1", tot == "1", value if frm != "0" else None,
                      {"0": None, "1": "schema", "2": "seen", "3": "finetune"}[frm]))
    return method, float(w), why, props


def check_description(m, path, name, label, env=None):
    """The Python reader knows of a model what libbellamy's predictor knows: the properties, which are
    cluster totals, what it fills in and from where, and the guard's method and weight."""
    method, w, why, props = c_describe(path, name, env)
    mine = [(p.name, p.essential, p.number, p.cluster_total, p.default, p.default_from) for p in m.properties]
    check(mine == props, "%s: properties differ:\n  Python:     %s\n  libbellamy: %s" % (label, mine, props))
    check((m.method, m.ernest_weight) == (method, w) and m.method_why.encode().startswith(why.encode()),
          "%s: method differs: Python %s %r %r, libbellamy %s %r %r" % (label, m.method, m.ernest_weight, m.method_why,
                                                                       method, w, why))


def rel(a, b):
    return 0.0 if a == b else abs(a - b) / max(abs(b), 1e-300)


def compare(path, name, cases, label, ignore_checksum=None, env=None, allow_unstamped=None, tol=TOL):
    """Predicts every case with both readers and checks that they agree (to tol relative)."""
    cwarn = []
    c = c_predictions(path, name, cases, env, cwarn)
    check(not isinstance(c, str), "%s: libbellamy refused the model: %s" % (label, c))
    if isinstance(c, str):
        return
    m = bm.Model.load(path, name, ignore_checksum=ignore_checksum, allow_unstamped=allow_unstamped)
    check_description(m, path, name, label, env)
    stats["models"] += 1
    stats["contexts"] += len(cases)
    worst = 0.0
    for (xs, ctx), (tag, cv), cw in zip(cases, c, cwarn):
        try:
            (pv, pw), perr = py_warnings(m.predict, ctx, xs), None
        except bm.BellamyError as e:
            pv, pw, perr = None, None, str(e)
        if tag == "err":
            check(perr is not None, "%s: libbellamy refuses %s at %s (%s), Python predicts %s"
                  % (label, ctx, xs, cv, pv))
            stats["both_refused"] += perr is not None
            stats["infinite"] += perr is not None and "prediction is infinite" in cv
            stats["missing"] += perr is not None and "missing" in cv
            check(perr is None or perr == cv, "%s: refusals differ for %s:\n  Python:     %s\n  libbellamy: %s"
                  % (label, ctx, perr, cv))
            stats["did_you_mean"] += perr is not None and "did you mean" in cv
            continue
        check(perr is None, "%s: Python refuses %s (%s), libbellamy predicts %s" % (label, ctx, perr, cv))
        if perr is not None:
            continue
        # the warnings about the request (models/README.md §P11): the same kinds, properties and words
        check(pw is None or pw == cw, "%s: warnings differ for %s at %s:\n  Python:     %s\n  libbellamy: %s" % (
            label, ctx, xs, pw, cw))
        stats["warnings"] += len(cw)
        for kind, _, _ in cw:
            stats["warning_kinds"].add(kind)
        for x, p, q in zip(xs, pv, cv):
            d = rel(p, q)
            if d > stats["max_rel"] and tol == TOL:   # float32 models: their own statistic
                stats["worst"] = "%s at scale-out %g: %.17g against %.17g" % (label, x, p, q)
            worst = max(worst, d)
            if tol == TOL:
                stats["max_rel"] = max(stats["max_rel"], d)
            else:
                stats["f32_max_rel"] = max(stats["f32_max_rel"], d)
            stats["compared"] += 1
            check(d <= tol, "%s: scale-out %g, context %s: Python %.17g, libbellamy %.17g (relative %.3g)"
                  % (label, x, ctx, p, q, d))
    print("%-40s %3d contexts, max relative difference %.3g%s" % (
        label, len(cases), worst, "" if m.method == "network" else " (%s, Ernest's weight %.3g)" % (m.method, m.ernest_weight)))


XS = [1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 16, 24, 50, 100, 1000]


def variants(base, optional, model_props, extra):
    """Contexts around base: every optional property given, none, each one alone, plus extra."""
    out = [list(base) + [(k, v) for k, v in optional]]
    out.append(list(base))
    for kv in optional:
        out.append(list(base) + [kv])
    out.extend(extra)
    return [(XS, [(k, v) for k, v in ctx if k in model_props]) for ctx in out]


def model_props(path, name):
    return {p.name for p in bm.Model.load(path, name, allow_unstamped=True).properties}


def left_out(ctx, *names):
    return [kv for kv in ctx if kv[0] not in names]


# ---- data: the synthetic corpus and a user-shaped data set ----------------------------------------

def read_tsv(path, delim="\t"):
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split(delim) for line in f if line.strip()]
    return rows[0], [dict(zip(rows[0], r)) for r in rows[1:]]


USER_SCHEMA = """bellamy-schema 1
# a user's own job with other column names and every kind of source (tests/test_pyreader.py)
scale_out executors
runtime wall_ms ms
property machine_type         essential text   column flavor
property job_args             essential text   template "<query> scale <sf>"
property data_size_MB         essential number column input_mb
property data_characteristics essential text   join table_kind skew
property environment          essential text   const "Private Cluster \\"YARN\\""   # quoted, escaped
property x_partitions         essential number column partitions
property x_region             essential text   column region    # one value in every row: never filled
property memory               optional  number per_machine 32000
property slots                optional  number column cores
property x_tenant             optional  text   column tenant
property job_type             optional  text   column engine    # one value in every row: filled from seen
property x_disks              optional  number column disks     # one value per machine: filled from seen
cluster_totals cores disks
"""

USER_SCHEMA_ESSENTIAL = """scale_out executors
runtime wall_ms ms
property machine_type essential text   column flavor
property data_size_MB essential number column input_mb
property x_cores      essential number column cores
cluster_totals cores
"""

# long enough that a message quoting them is cut at 40 bytes, inside the 'ó' of the first
TABLE_KINDS = ["orc zlib bucketed by customers and regi\u00f3n", "parquet snappy partitioned by day and hour"]
REGION = "eu-west-1 dublin availability zone b"    # every row's: an essential property never filled
FLAVORS = ["r5.xlarge", "\u212aelvin-8x", "\u0130stanbul.big", "m5.2XLARGE", "caf\u00e9-node"]


def write_user_data(path, seed=7):
    rnd = random.Random(seed)
    cols = ["run", "flavor", "query", "sf", "input_mb", "table_kind", "skew", "partitions", "executors",
            "cores", "tenant", "region", "engine", "disks", "wall_ms"]
    lines = [",".join(cols)]
    contexts = []
    for c in range(9):
        contexts.append({"flavor": FLAVORS[c % len(FLAVORS)], "query": "tpcds-q%d" % (c % 4 + 1), "sf": str(10 * (c % 3 + 1)),
                         "input_mb": str(rnd.choice([800, 5000, 12000, 40000, 250000])), "table_kind": rnd.choice(TABLE_KINDS),
                         "skew": "%.2f" % rnd.random(), "partitions": str(rnd.choice([64, 200, 1000])),
                         "tenant": rnd.choice(["ads", "Billing-EU", "ml_team"])})
    run_id = 0
    for ctx in contexts:
        per_exec = rnd.choice([4, 8, 16])
        for x in (2, 3, 4, 6, 8, 12):
            run_id += 1
            t = (20 + float(ctx["input_mb"]) / 400.0 / x + 3 * math.log(x) + 0.5 * x) * (1 + 0.03 * rnd.gauss(0, 1))
            row = dict(ctx, run="r%d" % run_id, executors=str(x), cores=str(per_exec * x), region=REGION,
                       engine="Spark SQL 3.5", disks=str(2 * x), wall_ms="%.0f" % (t * 1000))
            lines.append(",".join(row[c] for c in cols))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return contexts


# ---- rewriting files as other writers would --------------------------------------------------------

def stamp(path):
    """Writes a valid header over the first 512 bytes, as models/README.md says to from Python."""
    with open(path, "rb") as f:
        data = f.read()
    h = xxhash.xxh64(data[512:]).hexdigest()
    head = ("BELLAMY-MODEL 1 size=%d xxh64=%s\n" % (len(data), h)).encode().ljust(512, b"\0")
    with open(path, "wb") as f:
        f.write(head + data[512:])


def copy_without_header(src, dst, edit=None):
    """The file's models copied into a new HDF5 file without a user block (as 0.4.0 and older wrote),
    then edit(h5 file) applied."""
    def tree(a, b):   # by hand: Debian's h5py 3.7 with HDF5 1.10 crashes in Group.copy on these files
        for k in a.attrs:
            b.attrs.create(k, a.attrs[k], dtype=a.attrs.get_id(k).dtype)
        for k, v in a.items():
            if isinstance(v, h5py.Group):
                tree(v, b.create_group(k, track_order=True))
            else:
                b.create_dataset(k, data=v[()], dtype=v.dtype)

    with h5py.File(src, "r") as a, h5py.File(dst, "w", track_order=True) as b:
        tree(a, b)
        if edit:
            edit(b)


def without_1_3(f):
    """Removes from every model what format 1.3 added (the groups seen and finetune, members/epochs)."""
    for g in f["models"].values():
        for grp in ("seen", "finetune"):
            if grp in g:
                del g[grp]
        if "members" in g and "epochs" in g["members"].attrs:
            del g["members"].attrs["epochs"]


def as_format_1(f, minor):
    """Turns a binary-encoded model file into format 1.<minor> (1.0: no attribute added after 1.0)."""
    f.attrs["format_version"] = "1.%d" % minor
    f.attrs["format_version_major"] = np.int64(1)
    f.attrs["format_version_minor"] = np.int64(minor)
    without_1_3(f)
    for g in f["models"].values():
        for grp, attr in (("encoder", "numbers"), ("encoder", "cluster_totals"), ("training", "val_rows")):
            if attr in g[grp].attrs:
                del g[grp].attrs[attr]


# ---- the parts of the specification that can be checked on their own -------------------------------

def check_constants():
    text = open(os.path.join(SRC, "src", "nn", "act.h"), encoding="utf-8").read()
    lam = float(re.search(r"#define BL_SELU_LAMBDA\s+([0-9.eE+-]+)", text).group(1))
    alpha = float(re.search(r"#define BL_SELU_ALPHA\s+([0-9.eE+-]+)", text).group(1))
    check(bm.SELU_LAMBDA == lam and bm.SELU_ALPHA == alpha, "SELU constants differ from src/nn/act.h")
    check([bytes(g) for g in bm.char_wb_ngrams(b"ab", 1, 3)] ==
          [b" ", b"a", b"b", b" ", b" a", b"ab", b"b ", b" ab", b"ab "], "char_wb n-grams of 'ab'")
    check([bytes(g) for g in bm.char_wb_ngrams(b"a", 1, 5)] ==
          [b" ", b"a", b" ", b" a", b"a ", b" a "], "char_wb n-grams of a short word")
    check(bm.hash_token("Public \u212aloud-\u0130X é".encode(), "abcdefghijklmnopqrstuvwxyz-") == b"publickloud-ix",
          "hash token lower-casing and filtering")
    check(list(bm.encode_binary(5, 6)) == [1, 0, 0, 1, 0, 1], "binarizer bits")
    # the examples of models/README.md §P4
    enc = {"vec_len": 40, "ngram_min": 1, "ngram_max": 3, "hash_seed": 0,
           "vocabulary": "abcdefghijklmnopqrstuvwxyz0123456789.:,;_-+#@"}
    want = np.zeros(40)
    want[[1, 27]], want[[6, 7, 26]] = -1 / math.sqrt(5), 1 / math.sqrt(5)
    check(np.allclose(bm.encode_text(b"Ab", enc), want, rtol=0, atol=1e-15), "the hasher's example 'Ab'")
    t = bm.encode_thermometer(5000, 40)
    check(list(t[:13]) == [1] * 13 and abs(t[13] - 0.288) < 1e-3 and not t[14:].any(), "the log example 5000")
    check(list(bm.encode_thermometer(2, 5)) == [1, 1, math.log2(3) - 1, 0, 0], "log thermometer")
    u = (math.log2(3) - 0.0) / (2.0 - 0.0) * 4      # 3.17: three ones, then the fraction
    check(list(bm.encode_thermometer(2, 5, (0.0, 2.0))) == [1, 1, 1, 1, u - 3], "range thermometer")
    # a stored schema may name any runtime unit libbellamy reads (datasets/README.md): s, ms, min, h
    for unit in ("s", "ms", "min", "h"):
        check(bm.stored_schema("scale_out x\nruntime t %s\nproperty machine_type essential text column m\n" % unit)
              == (set(), {}), "a stored schema with runtime unit %s" % unit)


def check_encoders_against_inspect(data, schema):
    """Every vector bellamy-train inspect prints for row 0 (6 significant digits) equals ours."""
    r = run([TRAIN, "inspect", "--data", data, "--schema", schema, "--row", "0"])
    check(r.returncode == 0, "bellamy-train inspect failed: %s" % r.stderr.decode())
    enc = {"vec_len": 40, "ngram_min": 1, "ngram_max": 3, "hash_seed": 0, "vocabulary":
           "abcdefghijklmnopqrstuvwxyz0123456789.:,;_-+#@"}
    kinds = dict(re.findall(r"^property (\S+): \S+ (number|text)", r.stdout.decode(), re.M))
    n = 0
    for name, value, nums in re.findall(r'^(\S+) = "(.*)": (.*)$', r.stdout.decode(), re.M):
        want = np.array([float(v) for v in nums.split()])
        if kinds[name] == "text":
            got = bm.encode_text(value.encode(), enc)
        else:
            got = bm.encode_binary(bm.parse_natural(value, 40), 40)
        check(np.allclose(got, want, rtol=1e-5, atol=1e-6), "encoding of %s = %r differs from inspect" % (name, value))
        n += 1
    check(n >= 5, "inspect printed %d vectors" % n)


# ---- the command line ------------------------------------------------------------------------------

def cli(args, env=None):
    r = run([sys.executable, READER] + args, env=env)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def check_cli(path, name, ctx):
    sets = []
    for k, v in ctx:
        sets += ["--set", "%s=%s" % (k, v)]
    rc, out, err = cli(["--model", path, "--name", name] + sets + ["--scale-out", "2..6"])
    check(rc == 0, "CLI failed: %s" % err)
    c = c_predictions(path, name, [([2, 3, 4, 5, 6], ctx)])[0]
    got = [line.split("\t") for line in out.splitlines()]
    check([g[0] for g in got] == ["2", "3", "4", "5", "6"], "CLI scale-out column: %s" % out)
    check(c[0] == "ok" and all(rel(float(g[1]), q) <= TOL for g, q in zip(got, c[1])), "CLI runtimes differ: %s" % out)
    rc, out, _ = cli(["--model", path, "--list"])
    check(rc == 0 and name in out.split(), "--list")
    for bad in (["--scale-out", "2..6"], ["--model", path, "--name", name, "--scale-out", "0"],
                ["--model", path, "--name", name, "--scale-out", "2.5"],
                ["--model", path, "--name", name, "--scale-out", "6..2"],
                ["--model", path, "--name", name, "--set", "novalue", "--scale-out", "2"],
                ["--model", path, "--bogus"]):
        rc, _, err = cli(bad)
        check(rc == 2 and err.count("\n") == 1, "usage error %s: exit %d, %r" % (bad, rc, err))
    rc, _, err = cli(["--model", path, "--scale-out", "2"])
    check(rc == 1 and "several models" in err and "--name" in err and err.count("\n") == 1,
          "several models without --name: %d %r" % (rc, err))
    rc, _, err = cli(["--model", path, "--name", "nope", "--scale-out", "2"])
    check(rc == 1 and "no model 'nope'" in err, "missing model: %r" % err)
    rc, _, err = cli(["--model", path, "--name", name, "--set", "bogus=1", "--scale-out", "2"])
    check(rc == 1 and path in err and "unknown property 'bogus'" in err, "unknown property: %r" % err)
    rc, _, err = cli(["--model", os.path.join(os.path.dirname(path), "absent.h5"), "--scale-out", "2"])
    check(rc == 1 and "cannot open" in err, "absent file: %r" % err)
    # a misspelt property: libbellamy's did-you-mean, in bellamy-predict's words
    bad = [("machine_tpye" if k == "machine_type" else k, v) for k, v in ctx]
    rc, _, err = cli(["--model", path, "--name", name, "--scale-out", "2"] + sets_of(bad))
    r = run([PREDICT, "--model", path, "--name", name, "--scale-out", "2"] + sets_of(bad))
    cerr = r.stderr.decode("utf-8", "replace")
    check(rc == 1 and err.count("\n") == 1 and "unknown property 'machine_tpye'; did you mean 'machine_type'? (model" in err
          and r.returncode == 1 and cerr.startswith("bellamy-predict: unknown property") and
          err.endswith(cerr.split(": ", 1)[1]), "did you mean, for a property: %r (bellamy-predict: %r)" % (err, cerr))
    # a misspelt option: the same rule
    for args, want in ((["--modle", path], "unknown option '--modle'; did you mean '--model'?"),
                       (["--model", path, "--scale_out", "2"], "unknown option '--scale_out'; did you mean '--scale-out'?"),
                       (["--model", path, "--jsn"], "unknown option '--jsn'; did you mean '--json'?")):
        rc, _, err = cli(args)
        check(rc == 2 and want in err and err.count("\n") == 1, "did you mean, for %s: %d %r" % (want[16:26], rc, err))


def check_refusals(tmp, good, name, ctx):
    """Damaged, foreign and newer files: both readers refuse, the Python one in one line naming the fix."""
    data = open(good, "rb").read()

    def variant(fname, blob):
        p = os.path.join(tmp, fname)
        with open(p, "wb") as f:
            f.write(blob)
        return p

    # one byte of a weight changed (HDF5's own metadata left alone: HDF5 1.10 may crash on that)
    with h5py.File(good, "r") as f:
        at = f["models"][name]["weights"]["z.0.bias"].id.get_offset()
    flipped = bytearray(data)
    flipped[at + 5] ^= 0x10
    p = variant("flipped.h5", bytes(flipped))
    check(isinstance(c_predictions(p, name, [([2], ctx)]), str), "libbellamy read a file with a bad checksum")
    rc, _, err = cli(["--model", p, "--name", name, "--scale-out", "2"])
    check(rc == 1 and "checksum does not match" in err and "--ignore-checksum" in err and err.count("\n") == 1,
          "bad checksum: %d %r" % (rc, err))
    c = c_predictions(p, name, [([2], ctx)], env={"BELLAMY_MODEL_IGNORE_CHECKSUM": "1"})
    check(c[0][0] == "ok" and c[0][1] != c_predictions(good, name, [([2], ctx)])[0][1],
          "libbellamy with the override: %s" % (c,))
    for label, args, env in (("--ignore-checksum", ["--ignore-checksum"], None),
                             ("BELLAMY_MODEL_IGNORE_CHECKSUM=1", [], {"BELLAMY_MODEL_IGNORE_CHECKSUM": "1"})):
        rc, out, err = cli(["--model", p, "--name", name, "--scale-out", "2"] + args +
                           sum((["--set", "%s=%s" % kv] for kv in ctx), []), env=env)
        check(rc == 0 and "note:" in err and "checksum does not match" in err and
              rel(float(out.split("\t")[1]), c[0][1][0]) <= TOL, "%s: %d %r %r" % (label, rc, out, err))
    # the header's size disagrees: refused, and read under the override (an edit on purpose changes the
    # length as often as the bytes), which makes it a header overridden, not a file without one
    p = variant("longer.h5", data + b"\0")
    try:
        bm.Model.load(p, name)
        check(False, "a file longer than its header says was read")
    except bm.BellamyError as e:
        check("its header says" in str(e) and "--ignore-checksum" in str(e), str(e))
    check(isinstance(c_predictions(p, name, [([2], ctx)]), str), "libbellamy read a file longer than its header")
    m = bm.Model.load(p, name, ignore_checksum=True)
    check(m.note and "its header says" in m.note and not m.unstamped, "longer.h5 under the override: %r" % m.note)
    compare(p, name, [([2, 3], ctx)], "longer than its header, override", ignore_checksum=True,
            env={"BELLAMY_MODEL_IGNORE_CHECKSUM": "1"})
    rc, out, err = cli(["--model", p, "--name", name, "--scale-out", "2", "--ignore-checksum"] +
                       sum((["--set", "%s=%s" % kv] for kv in ctx), []))
    check(rc == 0 and "note:" in err and "its header says" in err, "longer.h5, --ignore-checksum: %d %r" % (rc, err))
    # cut short: refused as truncated, the fix another copy (as libbellamy says), not the override
    p = variant("shorter.h5", data[:len(data) - 100])
    try:
        bm.Model.load(p, name)
        check(False, "a file shorter than its header says was read")
    except bm.BellamyError as e:
        check("truncated file" in str(e) and "copy it again" in str(e) and "ignore-checksum" not in str(e), str(e))
    c = c_predictions(p, name, [([2], ctx)])
    check(isinstance(c, str) and "copy it again" in c, "libbellamy on a cut file: %r" % (c,))
    # a header of a newer version, a zeroed header, a garbled header line
    for fname, head, want, kind in (
            ("v2header.h5", data[:512].replace(b"BELLAMY-MODEL 1 ", b"BELLAMY-MODEL 2 ", 1), "header version 2", "version"),
            ("zeroed.h5", b"\0" * 512, "not a Bellamy model header", "format"),
            ("garbled.h5", data[:512].replace(b"xxh64=", b"xxh64:", 1), "header line is unreadable", "format")):
        p = variant(fname, head + data[512:])
        try:
            bm.Model.load(p, name)
            check(False, "%s was read" % fname)
        except bm.BellamyError as e:
            check(want in str(e) and e.kind == kind, "%s: %s (%s)" % (fname, e, e.kind))
        check(isinstance(c_predictions(p, name, [([2], ctx)]), str), "libbellamy read %s" % fname)
    # a newer major version and a foreign format, stamped so that only the version speaks
    for fname, attrs, want in (("v4.h5", {"format_version": "4.0", "format_version_major": np.int64(4)}, "newer"),
                               ("foreign.h5", {"format": "other-model"}, "not a Bellamy model file")):
        p = os.path.join(tmp, fname)
        shutil.copy(good, p)
        with h5py.File(p, "r+") as f:
            for k, v in attrs.items():
                f.attrs[k] = v
        stamp(p)
        rc, _, err = cli(["--model", p, "--name", name, "--scale-out", "2"])
        check(rc == 1 and want in err and err.count("\n") == 1, "%s: %d %r" % (fname, rc, err))
        check(isinstance(c_predictions(p, name, [([2], ctx)]), str), "libbellamy read %s" % fname)
    # a non-finite weight, and a block of the wrong shape
    def nan_bias(w):
        w["z.0.bias"][0] = np.nan

    def short_bias(w):
        del w["f.2.bias"]
        w.create_dataset("f.2.bias", data=np.zeros(7))

    for fname, edit, want in (("nan.h5", nan_bias, "finite numbers expected"), ("shape.h5", short_bias, "has shape")):
        p = os.path.join(tmp, fname)
        shutil.copy(good, p)
        with h5py.File(p, "r+") as f:
            edit(f["models"][name]["weights"])
        stamp(p)
        rc, _, err = cli(["--model", p, "--name", name, "--scale-out", "2"])
        check(rc == 1 and want in err, "%s: %d %r" % (fname, rc, err))
        check(isinstance(c_predictions(p, name, [([2], ctx)]), str), "libbellamy read %s" % fname)
    # four scale-out features with a first layer to match: refused by the reader (§P2: f_in = 3)
    p = os.path.join(tmp, "f_in.h5")
    shutil.copy(good, p)
    with h5py.File(p, "r+") as f:
        g = f["models"][name]
        g["network"].attrs["f_in"] = np.int64(4)
        w = np.concatenate([g["weights"]["f.0.weight"][()], np.ones((g["weights"]["f.0.weight"].shape[0], 1))], axis=1)
        del g["weights"]["f.0.weight"]
        g["weights"].create_dataset("f.0.weight", data=w)
    stamp(p)
    rc, _, err = cli(["--model", p, "--name", name, "--scale-out", "2"])
    check(rc == 1 and "network/f_in = 4" in err, "f_in.h5: %d %r" % (rc, err))


def check_unstamped(path, ctx):
    """A file without a checksum header: refused by both readers, naming both remedies, unless
    BELLAMY_MODEL_ALLOW_UNSTAMPED=1 (or --allow-unstamped) says to read it; the override for damaged
    checksums is no such permission."""
    remedies = ("no checksum header", "bellamy-train check --model FILE --stamp", "BELLAMY_MODEL_ALLOW_UNSTAMPED=1")
    c = c_predictions(path, None, [([2], ctx)])
    check(isinstance(c, str) and all(r in c for r in remedies), "libbellamy on a file without a header: %s" % (c,))
    try:
        bm.Model.load(path)
        check(False, "the Python reader read a file without a header")
    except bm.BellamyError as e:
        check(isinstance(c, str) and str(e).startswith(c) and "--allow-unstamped" in str(e) and e.kind == "format",
              "refusals of a file without a header differ:\n  Python:     %s\n  libbellamy: %s" % (e, c))
    ign = {"BELLAMY_MODEL_IGNORE_CHECKSUM": "1"}
    check(isinstance(c_predictions(path, None, [([2], ctx)], env=ign), str),
          "libbellamy read a file without a header under BELLAMY_MODEL_IGNORE_CHECKSUM=1")
    try:
        bm.Model.load(path, ignore_checksum=True)
        check(False, "the Python reader read a file without a header with ignore_checksum")
    except bm.BellamyError as e:
        check("no checksum header" in str(e), str(e))
    m = bm.Model.load(path, allow_unstamped=True)
    check(m.unstamped and m.note is None, "allowed: read unverified, noted (%r, %r)" % (m.unstamped, m.note))
    sets = sum((["--set", "%s=%s" % kv] for kv in ctx), [])
    rc, _, err = cli(["--model", path, "--scale-out", "2"] + sets)
    check(rc == 1 and err.count("\n") == 1 and all(r in err for r in remedies) and "--allow-unstamped" in err,
          "CLI on a file without a header: %d %r" % (rc, err))
    for args, env in ((["--allow-unstamped"], None), ([], {"BELLAMY_MODEL_ALLOW_UNSTAMPED": "1"})):
        rc, out, err = cli(["--model", path, "--scale-out", "2"] + sets + args, env=env)
        check(rc == 0 and "note:" in err and "has no checksum header" in err and out.startswith("2\t"),
              "CLI with %s: %d %r %r" % (args or env, rc, out, err))
        rc, out, _ = cli(["--model", path, "--list"] + args, env=env)
        check(rc == 0 and len(out.split()) == 1, "--list with %s: %d %r" % (args or env, rc, out))


def check_guard(path, rows, must_blend):
    """A model fine-tuned where the guard blends Ernest in: format 3.1, format_major_required = 3,
    0 < w (< 1 with must_blend), the reader's method and weight those of the file, and the blend
    changes the runtimes (so that agreeing with libbellamy means following it)."""
    with h5py.File(path, "r") as f:
        version = f.attrs["format_version"]
        g = next(iter(f["models"].values()))
        major = g.attrs.get("format_major_required")
        w = float(g["guard"].attrs["ernest_weight"]) if "guard" in g else 0.0
    check(version == "3.1" and major == 3, "a blending model's file: format %s, format_major_required %s" % (version, major))
    check(0 < w and (w < 1 or not must_blend), "the guard's weight of Ernest is %g, %s expected" % (
        w, "0 < w < 1" if must_blend else "w > 0"))
    m = bm.Model.load(path)
    check(m.ernest_weight == w and m.method == ("blend" if w < 1 else "ernest") and m.method_why,
          "the reader's method: %s, %g, %r" % (m.method, m.ernest_weight, m.method_why))
    ctx = synth_cases(path, None, rows)[0][1]
    with_guard = m.predict(ctx, XS)
    m.ernest_weight = 0.0
    network = m.predict(ctx, XS)
    m.ernest_weight = w
    check(max(rel(a, b) for a, b in zip(with_guard, network)) > 1e-3, "the blend leaves the runtimes as they are")
    rc, _, err = cli(["--model", path, "--scale-out", "2..6"] + sum((["--set", "%s=%s" % kv] for kv in ctx), []))
    said = "note: runtimes are a blend of the network and Ernest" if w < 1 else "note: runtimes are Ernest's fit"
    check(rc == 0 and said in err, "CLI on a blending model: %d %r" % (rc, err))
    sets = sum((["--set", "%s=%s" % kv] for kv in ctx), [])
    # a blending model that lost guard/ernest_weight is damaged for both readers (not the network alone)
    lost = path + ".lost.h5"
    shutil.copy(path, lost)
    with h5py.File(lost, "r+") as f:
        del next(iter(f["models"].values()))["guard"].attrs["ernest_weight"]
    stamp(lost)
    rc, _, err = cli(["--model", lost, "--scale-out", "4"] + sets)
    check(rc != 0 and "damaged: it blends Ernest" in err and err.count("\n") == 1, "Python, guard lost: %d %r" % (rc, err))
    r = run([PREDICT, "--model", lost, "--scale-out", "4"] + sets)
    check(r.returncode != 0 and b"damaged: it blends Ernest" in r.stderr, "libbellamy, guard lost: %r" % r.stderr)
    os.unlink(lost)
    # a soft link where the guard group should be: both readers ignore it (the file is then damaged,
    # as the weight is gone), and format_major_required of another type is refused by both
    for edit, label in (("soft", "guard as a soft link"), ("string", "format_major_required as text")):
        bad = path + ".%s.h5" % edit
        shutil.copy(path, bad)
        with h5py.File(bad, "r+") as f:
            g = next(iter(f["models"].values()))
            if edit == "soft":
                g.move("guard", "guard_real")
                g["guard"] = h5py.SoftLink(g.name + "/guard_real")
            else:   # and the weight gone, so that the readers must read it
                g.attrs["format_major_required"] = "3"
                del g["guard"].attrs["ernest_weight"]
        stamp(bad)
        rc, _, err = cli(["--model", bad, "--scale-out", "4"] + sets)
        r = run([PREDICT, "--model", bad, "--scale-out", "4"] + sets)
        check(rc != 0 and r.returncode != 0, "%s: Python %d %r, libbellamy %d %r" % (
            label, rc, err, r.returncode, r.stderr.decode()[-300:]))
        os.unlink(bad)
    # flipped bytes read with the checksum ignored: one line of error or a prediction, never a traceback
    data = open(path, "rb").read()
    bad = path + ".flip.h5"
    for k in range(512, len(data), max(1, (len(data) - 512) // 40)):
        with open(bad, "wb") as f:
            f.write(data[:k] + bytes([data[k] ^ 0x10]) + data[k + 1:])
        rc, _, err = cli(["--model", bad, "--scale-out", "4"] + sets, env={"BELLAMY_MODEL_IGNORE_CHECKSUM": "1"})
        if rc < 0:
            continue  # a signal inside libhdf5 itself (h5py parses in-process; models/README says so)
        check(rc in (0, 1) and "Traceback" not in err and (rc == 0 or err.strip().count("\n") <= 1),
              "Python reader on a byte flipped at %d: %d %r" % (k, rc, err[-300:]))
    os.unlink(bad)


def check_defaults(path, name, want):
    """The properties a model fills: {name: (value, 'schema' or 'seen') or None}."""
    got = {p.name: (p.default, p.default_from) if p.default is not None else None
           for p in bm.Model.load(path, name).properties}
    for k, v in want.items():
        check(got.get(k) == v, "%s: property %s fills %r, expected %r" % (name, k, got.get(k), v))


# ---- intervals and the floor (§P9, §P10) against bellamy-predict --json ----------------------------

def sets_of(ctx):
    return sum((["--set", "%s=%s" % kv] for kv in ctx), [])


def c_json(path, name, ctx, xs, coverage=None, env=None):
    """bellamy-predict --json on one context: (exit status, the parsed object or None, stderr)."""
    args = [PREDICT, "--model", path] + (["--name", name] if name else []) + sets_of(ctx)
    args += ["--scale-out", ",".join("%.0f" % x for x in xs), "--json"]
    if coverage is not None:
        args += ["--coverage", repr(coverage)]
    r = run(args, env=env)
    out = r.stdout.decode("utf-8", "replace")
    return r.returncode, (json.loads(out) if r.returncode == 0 and out.strip() else None), r.stderr.decode("utf-8", "replace")


def row_context(row):
    """A synthetic run's context as a user gives it (cluster totals per machine)."""
    x = float(row["instance_count"])
    return [("machine_type", row["machine_type"]), ("job_args", row["iterations"]), ("data_size_MB", row["data_size_MB"]),
            ("memory", "%.0f" % (float(row["memory"]) / x)), ("slots", "%.0f" % (float(row["slots"]) / x))]


def close(a, b):
    return rel(a, b) <= TOL


def compare_intervals(path, name, ctx, xs, coverage, label, mismatch=None, runs=None):
    """Python's predict_interval against bellamy-predict --json: the floored runtimes and both ends of
    every interval to 1e-9 relative, unbounded at the same scale-outs (C: lo and hi null with its
    unbounded_why, Python: lo 0, hi math.inf). mismatch (None: not checked): whether the request is
    of another context than the fine-tuned one; runs: the k the model's own context gets. Returns
    (lo, runtimes, hi)."""
    rc, js, err = c_json(path, name, ctx, xs, coverage)
    check(rc == 0 and js is not None, "%s: bellamy-predict failed: %d %s" % (label, rc, err[-400:]))
    if js is None:
        return None
    m = bm.Model.load(path, name)
    try:
        (lo, t, hi), pw = py_warnings(m.predict_interval, ctx, xs, coverage)
    except bm.BellamyError as e:
        check(False, "%s: Python refuses: %s" % (label, e))
        return None
    cw = [(w["kind"], w["property"], w["message"]) for w in js["warnings"]]
    check(pw is None or pw == cw, "%s: warnings differ:\n  Python:     %s\n  libbellamy: %s" % (label, pw, cw))
    stats["warnings"] += len(cw)
    stats["warning_kinds"].update(k for k, _, _ in cw)
    check(js["interval"] is not None and js["interval"]["coverage"] == coverage,
          "%s: bellamy-predict printed no %g interval: %s" % (label, coverage, js["interval"]))
    k_own = m.interval_basis(False)[0]
    vals = m._resolve(ctx)[0]
    differs = bool(m.context_differs(vals))
    k_used = m.interval_basis(differs)[0]      # another context: sized as for an unseen one (k = 0)
    check(js["interval"] is None or js["interval"]["runs"] == k_used,
          "%s: runs the interval is sized for: Python %d, libbellamy %s" % (label, k_used, js["interval"]))
    check(runs is None or k_own == runs, "%s: k = %d, %s expected" % (label, k_own, runs))
    check(mismatch is None or differs == mismatch, "%s: mismatch %s, %s expected" % (label, differs, mismatch))
    warned = any(w["kind"] == "context" for w in js.get("warnings", []))
    check(warned == differs, "%s: libbellamy %s a context mismatch, Python %s one" % (
        label, "warns of" if warned else "sees no", "sees" if differs else "sees no"))
    preds = js["predictions"]
    check(len(preds) == len(xs), "%s: %d predictions for %d scale-outs" % (label, len(preds), len(xs)))
    L, H = m.support()
    F = m.runtime_floor()
    worst = 0.0
    for i, (x, c) in enumerate(zip(xs, preds)):
        where = "%s: scale-out %g (coverage %g)" % (label, x, coverage)
        check(c["scale_out"] == x, where + ": bellamy-predict's scale-outs are out of order")
        ct, clo, chi = c["predicted_runtime_s"], c["lo_runtime_s"], c["hi_runtime_s"]
        check(t[i] > 0 and ct > 0, "%s: runtimes %r (Python), %r (libbellamy): not > 0" % (where, t[i], ct))
        check(close(t[i], ct), "%s: runtime Python %.17g, libbellamy %.17g" % (where, t[i], ct))
        worst = max(worst, rel(t[i], ct))
        if x > CALIB_SUPPORT * H or x < L / CALIB_SUPPORT:
            check(hi[i] == math.inf and chi is None, "%s: beyond 4 × the support [%g, %g] the interval must be "
                  "unbounded: Python %r, libbellamy %r" % (where, L, H, hi[i], chi))
        if t[i] < F:                          # a stand-in: positive, below F, its runtime unknown
            check(hi[i] == math.inf and chi is None, "%s: the stand-in %r (below %g) has the interval [%r, %r] "
                  "(Python), %r (libbellamy)" % (where, t[i], F, lo[i], hi[i], chi))
            stats["standins"] += 1
        if chi is None or hi[i] == math.inf:
            check(chi is None and hi[i] == math.inf and lo[i] == 0 and clo is None and "unbounded_why" in c,
                  "%s: unbounded in one reader only: Python [%r, %r], libbellamy [%r, %r]" % (where, lo[i], hi[i], clo, chi))
            stats["unbounded"] += 1
            continue
        check(close(lo[i], clo) and close(hi[i], chi), "%s: interval Python [%.17g, %.17g], libbellamy [%.17g, %.17g]"
              % (where, lo[i], hi[i], clo, chi))
        check(lo[i] < t[i] < hi[i] or (lo[i] == t[i] == hi[i]), "%s: [%r, %r] does not hold %r" % (where, lo[i], hi[i], t[i]))
        d = max(rel(lo[i], clo), rel(hi[i], chi))
        worst = max(worst, d)
        if d > stats["interval_max_rel"]:
            stats["interval_max_rel"], stats["interval_worst"] = d, where
        stats["intervals"] += 1
    print("%-40s %3d scale-outs at %g: %d bounded, max relative difference %.3g%s" % (
        label, len(xs), coverage, sum(1 for h in hi if h < math.inf), worst, " (another context)" if differs else ""))
    return lo, t, hi


CALIB_SUPPORT = 4.0
XS_I = [1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 16, 24, 30, 47, 48, 49, 50, 100, 1000]


def check_floor(path, name, ctx, label):
    """Scale-outs from 1 to 100000: every runtime > 0 in both readers, each at least the linear-scaling
    bound from the nearer end of the support (per-machine totals × that end; an end below F gives none),
    the intervals unbounded beyond 4 × the support and at stand-ins (runtimes below F), and the floor
    doing something (some runtime is the bound itself)."""
    rnd = random.Random(11)
    m = bm.Model.load(path, name)
    L, H = m.support()
    xs = sorted(set([1, 2, int(H), int(H) + 1, int(4 * H), int(4 * H) + 1, 100000] +
                    [int(10 ** rnd.uniform(0, 5)) for _ in range(40)]))
    res = compare_intervals(path, name, ctx, xs, 0.5, label + ", 1..100000")
    if res is None:
        return
    _, t, _ = res
    r_lo, r_hi = m.predict(ctx, [L, H])
    F = m.runtime_floor()
    for x, v in zip(xs, t):
        bound = r_hi * H / x if x > H and r_hi >= F else r_lo * x / L if x < L and r_lo >= F else None
        check(bound is None or v >= bound, "%s: scale-out %g: %r below the floor %r" % (label, x, v, bound))
        stats["floored"] += bound is not None and v == bound
    # the command lines agree too (bellamy-predict's runtimes in the same call are floored the same way)
    c = c_predictions(path, name, [(xs, ctx)])
    check(c[0][0] == "ok" and all(close(a, b) for a, b in zip(t, c[0][1])), "%s: bl_predict differs" % label)


def check_calibration_cli(path, name, ctx):
    """The reader's command line: four columns at --coverage (default 0.9), hi 'inf' when unbounded,
    the same numbers as bellamy-predict --json; a coverage outside (0, 1) a usage error."""
    xs = [1, 2, 6, 12, 49, 1000]
    for cov in (None, 0.8):
        rc, out, err = cli(["--model", path, "--name", name, "--scale-out", ",".join(map(str, xs))] + sets_of(ctx) +
                           (["--coverage", repr(cov)] if cov else []))
        check(rc == 0, "CLI with intervals failed: %s" % err)
        rows = [line.split("\t") for line in out.splitlines()]
        check(all(len(r) == 4 for r in rows) and len(rows) == len(xs), "CLI with intervals: %r" % out)
        _, js, _ = c_json(path, name, ctx, xs, cov)
        for r, c in zip(rows, js["predictions"] if js else []):
            ok = float(r[0]) == c["scale_out"] and close(float(r[1]), c["predicted_runtime_s"])
            ok = ok and (r[3] == "inf" and r[2] == "0" and c["hi_runtime_s"] is None or
                         c["hi_runtime_s"] is not None and close(float(r[2]), c["lo_runtime_s"]) and
                         close(float(r[3]), c["hi_runtime_s"]))
            check(ok, "CLI at coverage %s: %r against %r" % (cov, r, c))
        check(any(r[3] == "inf" for r in rows) and "unbounded" in err, "CLI: no unbounded interval noted: %r %r" % (out, err))
    for bad in ("1", "0", "1.5", "-0.5", "nan", "x"):
        rc, _, err = cli(["--model", path, "--name", name, "--scale-out", "2", "--coverage", bad] + sets_of(ctx))
        check(rc == 2 and "--coverage" in err and err.count("\n") == 1, "--coverage %s: %d %r" % (bad, rc, err))
    m = bm.Model.load(path, name)
    for bad in (0, 1, 1.5, -0.1, math.nan):
        try:
            m.predict_interval(ctx, [2], bad)
            check(False, "coverage %r was accepted" % bad)
        except bm.BellamyError as e:
            check(e.kind == "invalid" and "strictly between 0 and 1" in str(e), "coverage %r: %s" % (bad, e))


def edited(src, dst, edit):
    """A copy of src with edit(model group) applied, stamped so that only the edit speaks."""
    shutil.copy(src, dst)
    with h5py.File(dst, "r+") as f:
        edit(next(iter(f["models"].values())))
    stamp(dst)
    return dst


def check_no_calibration(path, name, ctx, tmp):
    """A model file whose calibration was removed predicts as before and has no intervals: bellamy-predict
    prints none (and refuses --coverage), Python refuses predict_interval naming the fix, and its
    command line prints two columns and a note, or with --coverage exits 1."""
    p = edited(path, os.path.join(tmp, "nocal.h5"), lambda g: g.__delitem__("calibration"))
    m = bm.Model.load(p)
    check(m.calibration is None, "calibration removed, still read")
    xs = [2, 6, 13, 100]
    rc, js, err = c_json(p, None, ctx, xs)
    check(rc == 0 and js and js["interval"] is None and all("lo_runtime_s" not in c for c in js["predictions"]),
          "bellamy-predict without calibration: %d %s" % (rc, err[-300:]))
    check("carries no calibration" in err, "bellamy-predict without calibration: no note: %r" % err)
    t = m.predict(ctx, xs)
    check(js is not None and all(close(a, c["predicted_runtime_s"]) for a, c in zip(t, js["predictions"])),
          "without calibration: runtimes differ")
    try:
        m.predict_interval(ctx, xs, 0.9)
        check(False, "predict_interval without calibration")
    except bm.BellamyError as e:
        check(e.kind == "unsupported" and "carries no calibration" in str(e) and "pre-train it again" in str(e),
              "predict_interval without calibration: %s (%s)" % (e, e.kind))
    rc, _, cerr = c_json(p, None, ctx, xs, 0.9)
    check(rc == 1 and "carries no calibration" in cerr, "bellamy-predict --coverage without calibration: %d %r" % (rc, cerr))
    rc, out, err = cli(["--model", p, "--scale-out", "2,6"] + sets_of(ctx))
    check(rc == 0 and all(len(r.split("\t")) == 2 for r in out.splitlines()) and "carries no calibration" in err,
          "CLI without calibration: %d %r %r" % (rc, out, err))
    compare_json(p, ctx, xs, "--json without calibration")
    rc, out, err = cli(["--model", p, "--scale-out", "2,6", "--coverage", "0.9"] + sets_of(ctx))
    check(rc == 1 and not out and "carries no calibration" in err and "pre-train it again" in err and
          err.count("\n") == 1, "CLI --coverage without calibration: %d %r %r" % (rc, out, err))
    os.unlink(p)


def check_damaged_calibration(tmp, path, name, ctx):
    """Calibration and fine-tuning fit attributes a save cannot produce: refused by libbellamy
    (bellamy-predict exit 1, bl_predictor_load) and by Python, with the same message (the version with
    the same meaning), naming the file, the model and the attribute."""
    def setattr_(grp, attr, fn):
        def edit(g):
            a = g[grp].attrs
            v = a[attr]
            a[attr] = fn(v.copy() if hasattr(v, "copy") else v)
        return edit

    def put(v, i, x):
        v[i] = x
        return v

    def delattr_(grp, attr):
        return lambda g: g[grp].attrs.__delitem__(attr)

    cases = [
        ("cell 13", setattr_("calibration", "cell", lambda v: put(v, 0, 13)), "calibration entry 0 (cell 13", "format"),
        ("negative score", setattr_("calibration", "score", lambda v: put(v, 1, -0.5)), "score -0.5) out of range", "format"),
        ("NaN score", setattr_("calibration", "score", lambda v: put(v, 1, np.nan)), "calibration entry 1", "format"),
        ("group past contexts", setattr_("calibration", "group", lambda v: put(v, 2, 10 ** 6)), "group 1000000", "format"),
        ("d_ref of 5", setattr_("calibration", "d_ref", lambda v: v[:5]), "d_ref (6 values)", "format"),
        ("d_ref 0", setattr_("calibration", "d_ref", lambda v: put(v, 2, 0.0)), "calibration/d_ref[2] is 0", "format"),
        ("score shorter", setattr_("calibration", "score", lambda v: v[:-1]), "(one length) out of range", "format"),
        ("negative contexts", setattr_("calibration", "contexts", lambda v: np.int64(-1)), "out of range", "format"),
        ("version 2", setattr_("calibration", "version", lambda v: np.int64(2)), "calibration version 2 is not the one this", "version"),
        ("version as a double", setattr_("calibration", "version", lambda v: 1.0),
         "attribute 'calibration/version' is a double, expected a int64", "format"),
        ("score lost", delattr_("calibration", "score"), "required attribute 'calibration/score' is missing", "notfound"),
        ("fit length", setattr_("finetune", "fit_prior_s", lambda v: v[:-1]), "must hold one value per run", "format"),
        ("negative disagreement", setattr_("finetune", "disagreement", lambda v: -1.0), "a number >= 0", "format"),
        ("fit runtime 0", setattr_("finetune", "fit_runtime_s", lambda v: put(v, 0, 0.0)),
         "fit_runtime_s must be positive numbers", "format"),
        ("fit prediction inf", setattr_("finetune", "fit_predicted_s", lambda v: put(v, 0, np.inf)),
         "finite or NaN", "format"),
        ("disagreement lost", delattr_("finetune", "disagreement"),
         "required attribute 'finetune/disagreement' is missing", "notfound"),
    ]
    for label, edit, want, kind in cases:
        p = edited(path, os.path.join(tmp, "badcal.h5"), edit)
        r = run([PREDICT, "--model", p, "--scale-out", "2"] + sets_of(ctx))
        cerr = r.stderr.decode("utf-8", "replace")
        check(r.returncode == 1 and want in cerr, "%s: bellamy-predict %d %r" % (label, r.returncode, cerr[-300:]))
        c = c_predictions(p, None, [([2], ctx)])
        try:
            bm.Model.load(p)
            check(False, "%s: the Python reader read it" % label)
        except bm.BellamyError as e:
            msg = str(e)
            check(want in msg and msg.startswith("%s: model '%s': " % (p, name)) and e.kind == kind and "\n" not in msg,
                  "%s: Python: %s (%s)" % (label, msg, e.kind))
            # the same words as libbellamy's, but for the version, where "this reader" and the fix differ
            check(isinstance(c, str) and (msg == c or (kind == "version" and msg.startswith(c.replace("library", "reader")))),
                  "%s: messages differ:\n  Python:     %s\n  libbellamy: %s" % (label, msg, c))
        os.unlink(p)


def strict_json(text, label):
    """text parsed as JSON, NaN and infinities refused (JSON has neither); None (a failure) when it is not JSON."""
    def bad(c):
        raise ValueError("%s is no JSON number" % c)
    try:
        return json.loads(text, parse_constant=bad)
    except ValueError as e:
        check(False, "%s: not JSON: %s: %r" % (label, e, text[:300]))
        return None


def number_tokens(text, key):
    """The text of every JSON number (or null) that follows "key": in text, as written."""
    return re.findall(r'"%s":(-?[0-9][0-9.eE+-]*|null)' % re.escape(key), text)


def compare_json(path, ctx, xs, label, coverage=None, lines=False, name=None):
    """The reader's --json against bellamy-predict --json for one request: the same fields but the
    choice (the reader chooses none), the same context, sources, method, interval basis, warnings and
    unbounded intervals, the runtimes to 1e-9, numbers written alike; and its stderr's warning lines
    bellamy-predict's, with the reader's name (lines: in the lines mode too). Returns the kinds of
    bellamy-predict's warnings."""
    cov = (["--coverage", repr(coverage)] if coverage is not None else []) + (["--name", name] if name else [])
    r = run([PREDICT, "--model", path, "--scale-out", ",".join("%.0f" % x for x in xs), "--json"] + sets_of(ctx) + cov)
    cout, cerr = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    js = json.loads(cout) if r.returncode == 0 else None
    check(js is not None, "%s: bellamy-predict failed: %d %s" % (label, r.returncode, cerr[-300:]))
    cout = re.sub(r',"choice":\{[^{}]*\}', "", cout)      # the reader chooses no scale-out
    r = run([sys.executable, READER, "--model", path, "--scale-out", ",".join("%.0f" % x for x in xs), "--json"] +
            sets_of(ctx) + cov)
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    check(r.returncode == 0 and out.endswith("}\n") and out.count("\n") == 1,
          "%s: the reader's --json: %d %r %r" % (label, r.returncode, out[:200], err[-300:]))
    pj = strict_json(out, label + ", the reader's --json") if r.returncode == 0 else None
    if js is None or pj is None:
        return [w["kind"] for w in js["warnings"]] if js else []
    check(list(pj) == [k for k in js if k != "choice"], "%s: --json fields %s, bellamy-predict's %s" % (
        label, list(pj), list(js)))
    for key in ("model", "context", "context_from", "fine_tuned_on_runs", "fine_tuned_now", "method",
                "fine_tuned_context", "interval", "warnings"):
        check(pj.get(key) == js.get(key), "%s: --json %s differs:\n  Python:     %s\n  libbellamy: %s" % (
            label, key, pj.get(key), js.get(key)))
    for key in ("scale_out", "coverage", "data_size_MB", "memory", "slots", "ernest_weight", "runs"):
        check(number_tokens(out, key) == number_tokens(cout, key), "%s: %s written as %s, bellamy-predict %s" % (
            label, key, number_tokens(out, key), number_tokens(cout, key)))
    pp, cp = pj.get("predictions", []), js["predictions"]
    check(len(pp) == len(cp) and all(list(a) == list(b) for a, b in zip(pp, cp)),
          "%s: --json predictions' fields differ: %s against %s" % (label, pp[:1], cp[:1]))
    for a, b in zip(pp, cp):
        for k in ("predicted_runtime_s", "lo_runtime_s", "hi_runtime_s"):
            if k in b:
                check((a[k] is None) == (b[k] is None) and (b[k] is None or close(a[k], b[k])),
                      "%s: --json %s at %s: %r against %r" % (label, k, b["scale_out"], a[k], b[k]))
    mine = [line.split(": warning: ", 1)[1] for line in err.splitlines() if line.startswith("bellamy_model.py: warning: ")]
    theirs = [line.split(": warning: ", 1)[1] for line in cerr.splitlines() if line.startswith("bellamy-predict: warning: ")]
    check(mine == theirs and len(mine) == len(js["warnings"]), "%s: warnings on stderr differ:\n  Python:     %s\n  "
          "libbellamy: %s" % (label, mine, theirs))
    if not lines:
        return [w["kind"] for w in js["warnings"]]
    # the lines mode warns the same on stderr
    rc, _, err2 = cli(["--model", path, "--scale-out", ",".join("%.0f" % x for x in xs)] + sets_of(ctx) + cov)
    check(rc == 0 and [line for line in err2.splitlines() if ": warning: " in line] ==
          [line for line in err.splitlines() if ": warning: " in line], "%s: the lines mode warns otherwise: %r" % (label, err2))
    return [w["kind"] for w in js["warnings"]]


def check_request_warnings(cal, tuned, guard_off, own, other):
    """§P11 end to end: requests that draw each kind of warning — a machine type no pre-training row had,
    a number far outside the range seen, an optional property left out, scale-outs outside the ranges,
    a fine-tuned model asked about another context or fine-tuned otherwise than its calibration — told
    alike by bellamy-predict and the reader's command line (--json and stderr)."""
    cases = [("unseen machine type", cal, [(k, "z9.metal" if k == "machine_type" else v) for k, v in own], [2, 4],
              "unseen_value"),
             ("a number far outside", cal, [(k, "777777" if k == "data_size_MB" else v) for k, v in own], [2, 4],
              "number_range"),
             ("an optional property left out", cal, left_out(own, "memory"), [2, 4], "left_out"),
             ("scale-outs outside", cal, own, [1, 2, 200], "scale_out"),
             ("fine-tuned, another context", tuned, other, [2, 4], "context"),
             ("fine-tuned, outside its runs", tuned, own, [3, 12], "scale_out"),
             ("fine-tuned otherwise than calibrated", guard_off, own, [3], "protocol"),
             ("everything at once", tuned, [(k, "z9.metal" if k == "machine_type" else "999999" if k == "data_size_MB"
                                             else v) for k, v in own if k != "slots"], [1, 2, 5, 60, 1000], "context")]
    for label, path, ctx, xs, kind in cases:
        kinds = compare_json(path, ctx, xs, "warnings, " + label, lines=kind in ("context", "protocol"))
        check(kind in kinds, "warnings, %s: bellamy-predict warns %s, no %s: the case no longer draws it" % (
            label, kinds, kind))
    compare_json(cal, own, [2, 6, 12], "warnings, none", coverage=0.8)
    rc, _, err = cli(["--model", cal, "--list", "--json"])
    check(rc == 2 and err.count("\n") == 1, "--list --json: %d %r" % (rc, err))


def check_missing_modules(tmp):
    """Without numpy, h5py or xxhash the reader says in one line which interpreter (its path and version)
    could not import which module, whether /usr/bin/python3 imports them (asked in a subprocess, any
    failure of that guarded), and what to run or install: apt-get only where it fits."""
    exe, ver = sys.executable, "%d.%d.%d" % sys.version_info[:3]
    head = "%s (Python %s) cannot import " % (exe, ver)
    # the command line, with xxhash hidden (None in sys.modules fails its import)
    code = ("import runpy, sys; sys.modules['xxhash'] = None; sys.argv = [%r, '--help']; "
            "runpy.run_path(%r, run_name='__main__')" % (READER, READER))
    r = run([exe, "-c", code])
    err = r.stderr.decode("utf-8", "replace")
    check(r.returncode == 1 and err.count("\n") == 1 and "Traceback" not in err and (head + "xxhash;") in err,
          "xxhash hidden: %d %r" % (r.returncode, err))
    # every site-packages folder hidden (-S) and PYTHONPATH ignored (-I): whatever that hides is named
    hidden = [mod for mod in ("numpy", "h5py", "xxhash") if run([exe, "-I", "-S", "-c", "import " + mod]).returncode]
    if hidden:
        r = run([exe, "-I", "-S", READER, "--help"])
        err = r.stderr.decode("utf-8", "replace")
        check(r.returncode == 1 and err.count("\n") == 1 and "Traceback" not in err and head in err and
              all(mod in err for mod in hidden), "python -I -S: %d %r" % (r.returncode, err))
    # an importer gets an ImportError in the same words
    r = run([exe, "-c", "import sys; sys.modules['h5py'] = None; sys.path.insert(0, %r); import bellamy_model" %
             os.path.dirname(READER)])
    err = r.stderr.decode("utf-8", "replace")
    check(r.returncode == 1 and ("ImportError: bellamy_model.py: " + head + "h5py;") in err, "import: %r" % err[-400:])
    if not hasattr(bm, "missing_modules_message"):
        check(False, "the reader has no missing_modules_message")
        return
    # each answer, with stand-ins for the other interpreter: this one (which has them), a script that
    # answers as a Python without h5py and xxhash, one that fails, and none at all
    lacks, fails = os.path.join(tmp, "lacks-python"), os.path.join(tmp, "fails-python")
    for path, body in ((lacks, "echo 3.9.1\necho h5py xxhash\n"), (fails, "echo oops\nexit 3\n")):
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, 0o755)
    other = "/opt/other/bin/python3"
    pip = "%s -m pip install numpy h5py" % other

    def msg(**kw):
        args = dict(executable=other, version="3.12.1", venv=False, apt=True, script="r.py")
        args.update(kw)
        return bm.missing_modules_message([("numpy", None), ("h5py", None)], **args)

    m = msg(system_python=exe)
    check(m.startswith("bellamy_model.py: %s (Python 3.12.1) cannot import numpy, h5py;" % other) and
          "%s (Python %s) imports them all: run the reader with it (%s r.py ...)" % (exe, ver, exe) in m and pip in m and
          "apt-get" not in m and "\n" not in m, "another interpreter has them: %r" % m)
    m = msg(system_python=lacks)
    check("%s (Python 3.9.1) cannot import h5py, xxhash either" % lacks in m and pip in m and
          "apt-get install python3-h5py python3-xxhash" in m, "another interpreter lacks them: %r" % m)
    check("apt-get" not in msg(system_python=lacks, apt=False), "apt-get suggested where there is none")
    for path in (fails, os.path.join(tmp, "absent-python")):
        m = msg(system_python=path)
        check(m.endswith("; install them for this interpreter: " + pip) and path not in m,
              "no other interpreter to ask (%s): %r" % (path, m))
    m = bm.missing_modules_message([("numpy", None)], executable=exe, version=ver, system_python=exe, venv=False)
    check("started as usual imports them all, so this run hides them" in m, "this interpreter, started otherwise: %r" % m)
    m = bm.missing_modules_message([("numpy", None)], executable=lacks, version="3.9.1", system_python=lacks,
                                   venv=False, apt=True)
    check(m.endswith("; install them: apt-get install python3-numpy"), "Debian's own interpreter lacks them: %r" % m)
    m = bm.missing_modules_message([("numpy", None)], executable=exe, version=ver, system_python=exe, venv=True)
    check("imports them all: run the reader with it" in m and "-m pip install numpy" in m, "a virtual environment: %r" % m)
    m = bm.missing_modules_message([("h5py", "ImportError: libhdf5_serial.so.103: cannot open shared object file")],
                                   executable=other, version="3.12.1", system_python=fails, venv=False)
    check("cannot import h5py (ImportError: libhdf5_serial.so.103: cannot open shared object file);" in m,
          "a module that fails to import says why: %r" % m)


def check_intervals(tmp, synth, synth_names, synth_rows):
    """§P9 and §P10 on a model pre-trained with calibration (30 contexts, 4 members: 11 held-out contexts,
    enough for bounded 0.9 intervals in most cells), fine-tuned ones asked about their own context and
    others, scale-outs far outside (also on run_all's synthetic models, whose runtimes fall there: the
    floor), a file without calibration and damaged ones."""
    j = os.path.join
    quick = ["--trials", "2", "--epochs", "12", "--grace", "6", "--threads", "1"]
    r = run([TRAIN, "synth", "--out-dir", tmp, "--stem", "cal", "--contexts", "30", "--reps", "1", "--seed", "2"])
    check(r.returncode == 0, "bellamy-train synth (calibration): %s" % r.stderr.decode())
    data, schema, cal = j(tmp, "cal.tsv"), j(tmp, "cal.schema"), j(tmp, "cal.h5")
    train(["pretrain", "--data", data, "--schema", schema, "--out", cal, "--name", "cal", "--seed", "3", "--members", "4"] + quick)
    header, rows = read_tsv(data)
    lines = open(data, encoding="utf-8").readlines()
    m = bm.Model.load(cal)
    check(m.calibration is not None and m.calibration["contexts"] >= 9, "pre-training calibrated on %s contexts" % (
        m.calibration and m.calibration["contexts"]))
    with h5py.File(cal, "r") as f:
        version = f.attrs["format_version"]
    check(version in ("1.4", "2.2", "3.1"), "a calibrated model's file is format %s" % version)

    # (a) the pre-trained model: k = 0, one cell, every coverage; totals given and left out
    own = row_context(rows[0])
    for cov in (0.5, 0.8, 0.9, 0.95):
        compare_intervals(cal, "cal", own, XS_I, cov, "pre-trained", mismatch=False, runs=0)
    compare_intervals(cal, "cal", own[:3], XS_I, 0.9, "pre-trained, totals left out", mismatch=False, runs=0)
    check_floor(cal, "cal", own, "pre-trained")
    check_calibration_cli(cal, "cal", own)

    # (b) fine-tuned on 3 runs of context 0 (scale-outs 2, 4, 6), on 6 (k capped at 5), on 4 runs of 3
    # scale-outs (one repeated: k counts distinct ones) and on 1; asked about their own context
    def finetune(name, picks):
        held, out = j(tmp, "cal_" + name + ".tsv"), j(tmp, "cal_" + name + ".h5")
        with open(held, "w", encoding="utf-8") as f:
            f.write(lines[0] + "".join(lines[1 + i] for i in picks))
        train(["finetune", "--model", cal, "--data", held, "--out", out, "--max-epochs", "30"])
        return out
    tuned3 = finetune("tuned3", [0, 1, 2])
    tuned6 = finetune("tuned6", [0, 1, 2, 3, 4, 5])
    tuned_rep = finetune("tuned_rep", [0, 1, 1, 2])
    tuned1 = finetune("tuned1", [2])
    for path, k, label in ((tuned3, 3, "fine-tuned on 3 runs"), (tuned6, 5, "fine-tuned on 6 runs"),
                           (tuned_rep, 3, "fine-tuned on 4 runs, 3 scale-outs"), (tuned1, 1, "fine-tuned on 1 run")):
        tm = bm.Model.load(path)
        check(tm.tuned and tm.tuned["fit_scale_out"] and tm.calibration is not None,
              "%s: no fit or calibration recorded" % label)
        for cov in (0.5, 0.9):
            compare_intervals(path, None, own, XS_I, cov, label, mismatch=False, runs=k)
        # a value the runs share, given in another spelling that reads as the same number: no mismatch
        same = [(kk, " " + v if kk == "memory" else v) for kk, v in own]
        compare_intervals(path, None, same, XS_I, 0.9, label + ", ' memory'", mismatch=False, runs=k)
    # (c) the same models asked about other contexts: a mismatch (k = 0, the factor doubled)
    other = row_context(rows[6 * 5])
    check(other[:3] != own[:3], "the other context is the same one")
    guard_off = j(tmp, "cal_guard_off.h5")           # fine-tuned otherwise than the calibration assumed
    train(["finetune", "--model", cal, "--data", j(tmp, "cal_tuned3.tsv"), "--out", guard_off, "--max-epochs", "30",
           "--guard", "off"])
    check_request_warnings(cal, tuned3, guard_off, own, other)
    for path, label in ((tuned3, "fine-tuned on 3 runs"), (tuned1, "fine-tuned on 1 run")):
        compare_intervals(path, None, other, XS_I, 0.9, label + ", another context", mismatch=True)
        compare_intervals(path, None, [(k, v.upper() if k == "machine_type" else v) for k, v in own], XS_I, 0.9,
                          label + ", machine type in capitals", mismatch=True)
        compare_intervals(path, None, [(k, "1" if k == "slots" else v) for k, v in own], XS_I, 0.9,
                          label + ", slots per machine differ", mismatch=True)
        compare_intervals(path, None, own[:3], XS_I, 0.9, label + ", totals left out", mismatch=False)
    # (d) far outside: from 1 to 100000 machines
    check_floor(tuned3, None, own, "fine-tuned on 3 runs")
    check_floor(tuned3, None, other, "fine-tuned on 3 runs, another context")
    for name in synth_names:
        check_floor(synth, name, [kv for kv in row_context(synth_rows[0]) if kv[0] in model_props(synth, name)],
                    "synth/" + name)
    # an older fine-tuned file: no fit arrays, so k = finetune/runs (4 here, against 3 distinct) and D = 0
    nofit = edited(tuned_rep, j(tmp, "nofit.h5"), lambda g: [g["finetune"].attrs.__delitem__(a) for a in (
        "fit_scale_out", "fit_runtime_s", "fit_predicted_s", "fit_prior_s", "disagreement")])
    compare_intervals(nofit, None, own, XS_I, 0.9, "fine-tuned, without fit arrays", mismatch=False, runs=4)
    # a cell without scores falls back to fewer runs, on the same side (here: k = 3 inside, cell 6)
    def drop_cell(cell):
        def edit(g):
            a = g["calibration"].attrs
            keep = np.asarray(a["cell"]) != cell
            for name in ("cell", "group", "score"):
                a[name] = np.asarray(a[name])[keep]
        return edit
    nocell = edited(tuned3, j(tmp, "nocell.h5"), drop_cell(6))
    compare_intervals(nocell, None, own, XS_I, 0.9, "fine-tuned, cell 6 emptied", mismatch=False, runs=3)
    # ... which changes the intervals inside the runs' range (2..6) and nothing outside it
    _, _, hi_full = bm.Model.load(tuned3).predict_interval(own, XS_I, 0.9)
    _, _, hi_cut = bm.Model.load(nocell).predict_interval(own, XS_I, 0.9)
    check(all((a != b) == (2 < x < 6) for x, a, b in zip(XS_I, hi_full, hi_cut) if a < math.inf),
          "emptying cell 6 changed the intervals %s (only those inside 2..6 should change)" % [
              x for x, a, b in zip(XS_I, hi_full, hi_cut) if a != b])
    _, _, hi_fit = bm.Model.load(tuned_rep).predict_interval(own, XS_I, 0.9)
    _, _, hi_nofit = bm.Model.load(nofit).predict_interval(own, XS_I, 0.9)
    check(any(a != b for a, b in zip(hi_fit, hi_nofit)), "without the fit arrays the intervals stay the same")
    # the guard's models of run_all are calibrated too (few held-out contexts: coverage 0.5)
    for path in sorted(p for p in os.listdir(tmp) if p.startswith("guard_") and p.endswith(".h5")):
        gm = bm.Model.load(j(tmp, path))
        if gm.calibration is None:
            check(False, "%s: no calibration" % path)
            continue
        vals = [(p.name, gm.tuned["context"][i]) for i, p in enumerate(gm.properties) if gm.tuned["context"][i]]
        compare_intervals(j(tmp, path), None, vals, XS_I, 0.5, "%s (Ernest's weight %.3g)" % (path, gm.ernest_weight),
                          mismatch=False)
    # (e) a file whose calibration was removed; (f) damaged ones
    check_no_calibration(tuned3, None, own, tmp)
    check_damaged_calibration(tmp, tuned3, "cal", own)
    print("intervals: %d bounded ones compared (max relative difference %.3g, %s), %d unbounded in both; "
          "%d runtimes floored, %d stand-ins" % (stats["intervals"], stats["interval_max_rel"], stats["interval_worst"],
                                                 stats["unbounded"], stats["floored"], stats["standins"]))
    check(stats["intervals"] > 100 and stats["unbounded"] > 20 and stats["floored"] > 0 and stats["standins"] > 0,
          "the interval cases no longer exercise bounded and unbounded intervals, the floor and stand-ins")


# ---- the cases ---------------------------------------------------------------------------------------

def check_precision_f32(tmp, sdata, sschema, rows, quick):
    """Models of precision f32 (float32 weight datasets, attribute precision "f32"): the reader computes them
    in float32 and agrees with libbellamy to TOL_F32; fine-tuning keeps the precision; a file without the
    attribute is f64; an unknown value or type is refused by both, naming the file, model and attribute."""
    j = os.path.join
    f32 = j(tmp, "f32.h5")
    models = {"f32_both4_log": ["--members", "4", "--numbers", "both", "--target-scale", "log"],
              "f32_bin1_seconds": ["--members", "1", "--numbers", "binary"]}
    for name, opts in models.items():
        train(["pretrain", "--data", sdata, "--schema", sschema, "--out", f32, "--name", name, "--seed", "3",
               "--precision", "f32"] + quick + opts)
    with h5py.File(f32, "r") as f:
        g = f["models"]["f32_both4_log"]
        check(g.attrs.get("precision") in ("f32", b"f32"), "an f32 model's file lacks precision = f32")
        check(all(g["weights"][b].dtype == np.float32 for b in g["weights"]), "an f32 model's weights are not float32")
    for name in models:
        m = bm.Model.load(f32, name)
        check(m.precision == "f32" and m.members[0]["z.0.weight"].dtype == np.float32, "%s: not read as f32" % name)
        # the scale-outs a float32 network holds (1e308 overflows float32 where float64 does not)
        cases = [(xs, ctx) for xs, ctx in synth_cases(f32, name, rows) if max(xs) <= 1000 and min(xs) >= 0.5]
        compare(f32, name, cases, "f32/" + name, tol=TOL_F32)
    held = j(tmp, "held_f32.tsv")
    lines = open(sdata, encoding="utf-8").readlines()
    with open(held, "w", encoding="utf-8") as f:
        f.write("".join(lines[:4]))
    tuned = j(tmp, "tuned_f32.h5")
    train(["finetune", "--model", f32, "--name", "f32_both4_log", "--data", held, "--out", tuned, "--max-epochs", "30"])
    check(bm.Model.load(tuned).precision == "f32", "fine-tuning an f32 model lost its precision")
    cases = [(xs, ctx) for xs, ctx in synth_cases(tuned, None, rows) if max(xs) <= 1000 and min(xs) >= 0.5]
    compare(tuned, None, cases, "f32/fine-tuned both4_log", tol=TOL_F32)
    # unknown values: refused by both readers, naming the file, the model and the attribute
    for value in ("f16", "", np.int64(32)):
        bad = j(tmp, "bad_precision.h5")
        shutil.copy(f32, bad)
        with h5py.File(bad, "r+") as f:
            f["models"]["f32_bin1_seconds"].attrs["precision"] = value
        stamp(bad)
        try:
            bm.Model.load(bad, "f32_bin1_seconds")
            check(False, "precision %r: the reader loads the model" % (value,))
        except bm.BellamyError as e:
            msg = str(e)
            check(bad in msg and "f32_bin1_seconds" in msg and "attribute precision" in msg and '"f64"' in msg,
                  "precision %r: the reader's message: %s" % (value, msg))
        c = c_predictions(bad, "f32_bin1_seconds", [([2], [])])
        check(isinstance(c, str) and "attribute precision" in c and bad in c,
              "precision %r: libbellamy's answer: %s" % (value, c))
    # a float64 file with "f64" written out reads as one without the attribute
    synth1 = j(tmp, "f64_explicit.h5")
    train(["pretrain", "--data", sdata, "--schema", sschema, "--out", synth1, "--name", "m", "--seed", "3"] + quick +
          ["--members", "1", "--numbers", "binary"])
    check(bm.Model.load(synth1).precision == "f64", "a file without the attribute is not f64")
    with h5py.File(synth1, "r+") as f:
        f["models"]["m"].attrs["precision"] = "f64"
    stamp(synth1)
    compare(synth1, None, synth_cases(synth1, None, rows)[:3], "precision f64 written out")
    print("f32 models: max relative difference %.3g (tolerance %g)" % (stats["f32_max_rel"], TOL_F32))


def synth_cases(path, name, rows):
    props = model_props(path, name)
    seen = []
    for r in rows:
        key = (r["machine_type"], r["iterations"], r["data_size_MB"])
        if key not in seen:
            seen.append(key)
    cases = []
    for i, (mt, it, size) in enumerate(seen[:4]):
        row = next(r for r in rows if (r["machine_type"], r["iterations"], r["data_size_MB"]) == (mt, it, size))
        x = float(row["instance_count"])
        base = [("machine_type", mt), ("job_args", it), ("data_size_MB", size), ("data_characteristics", ""),
                ("environment", "synthetic corpus")]
        optional = [("job_type", "synth-spark"), ("memory", "%.0f" % (float(row["memory"]) / x)),
                    ("slots", "%.0f" % (float(row["slots"]) / x))]
        extra = []
        if i == 0:
            extra = [base[:2] + [("data_size_MB", "777777")] + base[3:] + optional,          # unseen size
                     [("machine_type", "z9.metal")] + base[1:] + optional[:1],              # unseen type
                     base + [("memory", "0x3E80"), ("slots", " 4")],                        # strtod forms
                     base + [("memory", "1000000000")],                                     # total too large
                     base + [("memory", "16000.5")],                                        # not natural
                     base + [("slots", "-4")],
                     base[:2] + [("data_size_MB", "2e3")] + base[3:],                       # exponent form
                     base[:2] + [("data_size_MB", "12.5")] + base[3:],                      # refused
                     base[:2] + [("data_size_MB", "0x10")] + base[3:],                      # refused
                     base[1:],                                                              # essential missing
                     base + [("bogus", "1")],
                     base + [("job_args", "10")],                                           # given twice
                     base[:1] + [("job_args", "b\udcff")] + base[2:],                      # invalid UTF-8
                     # left out, filled from the stored schema's constants (essential ones too)
                     left_out(base, "data_characteristics", "environment") + optional[1:],
                     left_out(base, "environment") + [("memory", "3")],
                     base[3:],                                                              # 3 essential missing
                     left_out(base, "job_args", "environment")]
        cases += variants(base, optional, props, extra)
        if i == 0:   # scale-outs the C API takes: halves (totals round half to even), tiny and huge
            cases += [([0.5, 1.5, 2.5, 3.5, 1e-3], [kv for kv in base + [("memory", "3"), ("slots", "1")] if kv[0] in props]),
                      ([1e-310], base), ([1e12], base),
                      ([1e-50], base), ([1e308], base)]   # log-runtime beyond exp's range; Ernest's θ3·x overflows
            # misspelt names: refused with libbellamy's did-you-mean (one, two, none close)
            cases += [([2], [("machine_tpye", mt)] + base[1:]), ([2], base + [("Memory", "3")]),
                      ([2], base + [("slot", "1")]), ([2], base + [("job", "x")]), ([2], base + [("bogus", "1")]),
                      ([2], base + [("data_size", "1")]), ([2], base + [("x" * 300, "1")])]
    return cases


def user_cases(path, name, contexts, essential_only=False):
    props = model_props(path, name)
    cases = []
    for i, c in enumerate(contexts[:4]):
        if essential_only:
            base = [("machine_type", c["flavor"]), ("data_size_MB", c["input_mb"]), ("x_cores", "8")]
            optional = []
        else:
            base = [("machine_type", c["flavor"]), ("job_args", "%s scale %s" % (c["query"], c["sf"])),
                    ("data_size_MB", c["input_mb"]), ("data_characteristics", "%s %s" % (c["table_kind"], c["skew"])),
                    ("environment", 'Private Cluster "YARN"'), ("x_partitions", c["partitions"]),
                    ("x_region", REGION)]
            optional = [("memory", "32000"), ("slots", "8"), ("x_tenant", c["tenant"]), ("job_type", "Spark SQL 3.5"),
                        ("x_disks", "2")]
        extra = []
        if i == 0:
            extra = [[(k, v.upper() if k == "machine_type" else v) for k, v in base + optional],
                     [(k, "\u212a" + v if k == "machine_type" else v) for k, v in base],
                     [(k, "999999" if k == "data_size_MB" else v) for k, v in base],
                     [(k, "%s" % (2 ** 39) if k == "data_size_MB" else v) for k, v in base]]   # too large
        if i == 0 and essential_only:                                # two of three essential ones missing
            extra += [[("machine_type", c["flavor"])], [("data_size_MB", c["input_mb"])]]
        elif i == 0:
            extra += [left_out(base, "environment"),                      # a const of the schema: filled
                      left_out(base, "environment") + [("memory", "16000"), ("x_disks", "3"), ("job_type", "Flink")],
                      left_out(base, "x_region"),                         # essential: never filled from seen
                      left_out(base, "x_region", "machine_type", "x_partitions") + optional,
                      []]                                                 # every one missing: one long message
        cases += variants(base, optional, props, extra)
    return cases


def main():
    for exe in (TRAIN, CREF):
        if not os.access(exe, os.X_OK):
            raise SystemExit("%s is missing: build first (meson compile -C %s)" % (exe, BUILD))
    check_constants()
    tmp = os.environ.get("PYREADER_KEEP") or tempfile.mkdtemp(prefix="bellamy-pyreader-")
    try:
        check_missing_modules(tmp)
        run_all(tmp)
    finally:
        if not os.environ.get("PYREADER_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
    print("compared %d predictions of %d models in %d contexts: max relative difference %.3g (tolerance %g; %s); "
          "%d contexts refused by both (%d for missing properties, %d for an infinite runtime)" % (
              stats["compared"], stats["models"], stats["contexts"], stats["max_rel"], TOL, stats["worst"],
              stats["both_refused"], stats["missing"], stats["infinite"]))
    check(stats["missing"] > 0 and stats["infinite"] > 0, "no context was refused for missing properties or for "
          "an infinite runtime: the cases no longer check them")
    print("%d warnings compared, of the kinds %s" % (stats["warnings"], ", ".join(sorted(stats["warning_kinds"]))))
    check(stats["warning_kinds"] >= {"left_out", "unseen_value", "number_range", "scale_out", "context"},
          "the cases no longer exercise every kind of warning: %s" % sorted(stats["warning_kinds"]))
    check(stats["did_you_mean"] > 0, "no refusal suggested a property name")
    if failures:
        print("%d failures" % len(failures))
        return 1
    return 0


def run_all(tmp):
    j = os.path.join
    quick = ["--trials", "2", "--epochs", "12", "--grace", "6", "--threads", "1"]

    # the synthetic corpus: every encoding, ensemble sizes 1–4, every target scaling, totals both ways
    r = run([TRAIN, "synth", "--out-dir", tmp, "--contexts", "8", "--reps", "1"])
    check(r.returncode == 0, "bellamy-train synth: %s" % r.stderr.decode())
    _, rows = read_tsv(j(tmp, "synth.tsv"))
    sdata, sschema, synth = j(tmp, "synth.tsv"), j(tmp, "synth.schema"), j(tmp, "synth.h5")
    synth_models = {
        "bin1_seconds": ["--members", "1", "--numbers", "binary", "--target-scale", "seconds"],
        "bin3_mean": ["--members", "3", "--numbers", "binary", "--target-scale", "mean"],
        "log3_mean": ["--members", "3", "--numbers", "log", "--target-scale", "mean"],
        "range2_log": ["--members", "2", "--numbers", "range", "--target-scale", "log"],
        "both4_log": ["--members", "4", "--numbers", "both", "--target-scale", "log"],
        "both2_seconds_pm": ["--members", "2", "--numbers", "both", "--totals", "per-machine"],
        "range1_pm_log": ["--members", "1", "--numbers", "range", "--totals", "per-machine", "--target-scale", "log"],
    }
    for name, opts in synth_models.items():
        train(["pretrain", "--data", sdata, "--schema", sschema, "--out", synth, "--name", name, "--seed", "3"] + quick + opts)
    for name in synth_models:
        compare(synth, name, synth_cases(synth, name, rows), "synth/" + name)

    # fine-tuned models: 3 runs of one context (the guard takes Ernest's fit to them), and 1 run (one
    # scale-out: the network alone); copies of the ensemble in other files
    held = j(tmp, "held.tsv")
    header = open(sdata, encoding="utf-8").readline()
    with open(held, "w", encoding="utf-8") as f:
        f.write(header)
        for line in open(sdata, encoding="utf-8").readlines()[1:4]:
            f.write(line)
    tuned = j(tmp, "tuned.h5")
    train(["finetune", "--model", synth, "--name", "both4_log", "--data", held, "--out", tuned, "--max-epochs", "30"])
    compare(tuned, None, synth_cases(tuned, None, rows), "fine-tuned both4_log")
    with open(held, "w", encoding="utf-8") as f:
        f.write(header + open(sdata, encoding="utf-8").readlines()[1])
    tuned1 = j(tmp, "tuned1.h5")
    train(["finetune", "--model", synth, "--name", "both4_log", "--data", held, "--out", tuned1, "--max-epochs", "30"])
    check(bm.Model.load(tuned1).method == "network", "fine-tuned on one run: the network alone")
    compare(tuned1, None, synth_cases(tuned1, None, rows), "fine-tuned both4_log on one run")
    check_defaults(synth, "bin1_seconds", {"data_characteristics": ("", "schema"), "job_type": ("synth-spark", "schema"),
                                           "environment": ("synthetic corpus", "schema"), "memory": None})

    # the guard: fine-tuned on runs of another curve shape (a plateau), the model blends Ernest fitted
    # to them into its runtimes (two scale-outs: always a blend; more: the runs' leave-one-out decides)
    for label, base_name, scale_outs, reps, must_blend in (("two scale-outs", "range2_log", "4,16", "2", True),
                                                           ("leave-one-out", "bin3_mean", "3..30:3", "1", False)):
        stem = "plateau_" + base_name
        r = run([TRAIN, "synth", "--out-dir", tmp, "--stem", stem, "--shape", "plateau", "--contexts", "1",
                 "--reps", reps, "--seed", "4", "--scale-outs", scale_outs, "--environment", "lab " + base_name])
        check(r.returncode == 0, "bellamy-train synth --shape plateau: %s" % r.stderr.decode())
        guarded = j(tmp, "guard_%s.h5" % base_name)
        train(["finetune", "--model", synth, "--name", base_name, "--data", j(tmp, stem + ".tsv"), "--schema",
               j(tmp, stem + ".schema"), "--out", guarded, "--max-epochs", "30"])
        check_guard(guarded, rows, must_blend)
        # fine-tuned on runs of one context in another environment: left out, environment is theirs
        check_defaults(guarded, None, {"environment": ("lab " + base_name, "finetune"),
                                       "job_type": ("synth-spark", "schema")})
        compare(guarded, None, synth_cases(guarded, None, rows), "guard, %s: %s" % (label, base_name))

    # the user-shaped data set: other columns, every source kind, non-ASCII text, no optional property
    udata, uschema, uess, user = j(tmp, "user.csv"), j(tmp, "user.schema"), j(tmp, "user_ess.schema"), j(tmp, "user.h5")
    contexts = write_user_data(udata)
    with open(uschema, "w", encoding="utf-8") as f:
        f.write(USER_SCHEMA)
    with open(uess, "w", encoding="utf-8") as f:
        f.write(USER_SCHEMA_ESSENTIAL)
    check_encoders_against_inspect(udata, uschema)
    user_models = {
        "both6": (uschema, ["--members", "6"]),
        "range3_mean": (uschema, ["--members", "3", "--numbers", "range", "--target-scale", "mean"]),
        "log2_pm_log": (uschema, ["--members", "2", "--numbers", "log", "--totals", "per-machine", "--target-scale", "log"]),
        "ess_bin1": (uess, ["--members", "1", "--numbers", "binary"]),
        "ess_both5_mean": (uess, ["--members", "5", "--target-scale", "mean"]),
    }
    for name, (schema, opts) in user_models.items():
        train(["pretrain", "--data", udata, "--schema", schema, "--out", user, "--name", name, "--seed", "5"] + quick + opts)
    for name, (schema, _) in user_models.items():
        compare(user, name, user_cases(user, name, contexts, schema == uess), "user/" + name)
    # --json with text to escape: quotes (a value the schema fills), non-ASCII seen and unseen
    uctx = [(k, FLAVORS[1] if k == "machine_type" else "Billing-E\u00dc" if k == "x_tenant" else v)
            for k, v in user_cases(user, "log2_pm_log", contexts)[0][1] if k != "environment"]
    compare_json(user, uctx, [2, 5, 40], "--json, user/log2_pm_log, text to escape", name="log2_pm_log", lines=True)
    check_defaults(user, "both6", {"environment": ('Private Cluster "YARN"', "schema"), "memory": ("32000", "schema"),
                                   "job_type": ("Spark SQL 3.5", "seen"), "x_disks": ("2", "seen"), "x_region": None,
                                   "slots": None, "x_tenant": None})
    # the same models before format 1.3 (no seen group: only the stored schema fills properties)
    v20 = j(tmp, "v2_0.h5")
    shutil.copy(user, v20)
    with h5py.File(v20, "r+") as f:
        f.attrs["format_version"] = "2.0"
        f.attrs["format_version_minor"] = np.int64(0)
        without_1_3(f)
    stamp(v20)
    check_defaults(v20, "both6", {"memory": ("32000", "schema"), "job_type": None, "x_disks": None})
    for name in ("both6", "log2_pm_log"):
        compare(v20, name, user_cases(v20, name, contexts), "format 2.0 (no seen group): user/" + name)

    # the real C3O grep data, when it is there
    data_dir = os.environ.get("BELLAMY_DATA") or os.path.join(SRC, "..", "shared", "datasets")
    grep = j(data_dir, "c3o", "grep.tsv") if os.path.isdir(j(data_dir, "c3o")) else j(data_dir, "grep.tsv")
    if os.path.isfile(grep):
        g = j(tmp, "grep.h5")
        train(["pretrain", "--data", grep, "--schema", j(SRC, "datasets", "c3o", "grep.schema"), "--out", g,
               "--name", "grep", "--members", "2", "--trials", "1", "--epochs", "8", "--grace", "8", "--threads", "1"])
        _, grows = read_tsv(grep)
        base = [("machine_type", grows[0]["machine_type"]), ("job_args", "computer"),
                ("data_size_MB", grows[0]["data_size_MB"]),
                ("data_characteristics", "%s %s %s" % (grows[0]["line_length"], grows[0]["lines"], grows[0]["p_occurrence"])),
                ("environment", "public cloud aws emr")]
        n = float(grows[0]["instance_count"]) if "instance_count" in grows[0] else 1.0
        optional = [("job_type", "grep-spark"), ("memory", "%.0f" % (float(grows[0]["memory"]) / n)),
                    ("slots", "%.0f" % (float(grows[0]["slots"]) / n))]
        compare(g, "grep", variants(base, optional, model_props(g, "grep"), []), "c3o/grep")
    else:
        print("no C3O data at %s: the grep model is left out" % data_dir)

    # older writers: format 1.0 without a header, 1.1 with a header stamped from Python, no schema text
    v10, v11, noschema = j(tmp, "v1_0.h5"), j(tmp, "v1_1.h5"), j(tmp, "noschema.h5")
    single = j(tmp, "single.h5")
    train(["pretrain", "--data", sdata, "--schema", sschema, "--out", single, "--name", "old"] + quick +
          ["--members", "1", "--numbers", "binary"])
    copy_without_header(single, v10, lambda f: as_format_1(f, 0))
    check(open(v10, "rb").read(8) == bm.HDF5_SIGNATURE, "the 1.0 copy has no user block")
    check(bm.check_header(open(v10, "rb").read(), v10) == (False, None), "a file without a header has no header")
    check_unstamped(v10, synth_cases(single, "old", rows)[0][1])
    compare(v10, None, synth_cases(v10, None, rows), "format 1.0, no header (allowed)", allow_unstamped=True,
            env={"BELLAMY_MODEL_ALLOW_UNSTAMPED": "1"})
    shutil.copy(synth, v11)
    with h5py.File(v11, "r+") as f:
        for name in [n for n in f["models"] if not n.startswith("bin")]:
            del f["models"][name]
        as_format_1(f, 1)
    stamp(v11)
    check(bm.check_header(open(v11, "rb").read(), v11) == (True, None), "the stamped 1.1 file verifies")
    compare(v11, "bin3_mean", synth_cases(v11, "bin3_mean", rows), "format 1.1 ensemble, stamped")
    shutil.copy(synth, noschema)
    with h5py.File(noschema, "r+") as f:
        f["models"]["both4_log"]["schema"].attrs["text"] = ""
    stamp(noschema)
    m = bm.Model.load(noschema, "both4_log")
    check(not any(p.cluster_total for p in m.properties), "no schema text: no cluster totals")
    check_defaults(noschema, "both4_log", {"job_type": ("synth-spark", "seen"), "environment": None,
                                           "data_characteristics": None})
    compare(noschema, "both4_log", synth_cases(noschema, "both4_log", rows), "no stored schema")

    check_precision_f32(tmp, sdata, sschema, rows, quick)

    base = synth_cases(synth, "bin1_seconds", rows)[0][1]
    check_cli(synth, "bin1_seconds", base)
    check_refusals(tmp, synth, "bin1_seconds", base)
    check_intervals(tmp, synth, list(synth_models), rows)


if __name__ == "__main__":
    sys.exit(main())
