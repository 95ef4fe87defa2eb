#!/usr/bin/env python3
"""bellamy_model.py — the reference reader of Bellamy model files.

Loads any model file libbellamy writes (formats 1.x, 2.x and 3.x; 1.4, 2.2 and 3.1 the newest) and
predicts the runtime of a job for a context, every encoder included, properties the model fills, the
guard's blend with Ernest, the floor beyond the scale-outs the model knows and the intervals calibrated
at pre-training too, following models/README.md ("Predicting from a model file") step by step; the
section numbers in the comments (§P1 …) are that specification's. It warns of what libbellamy warns
of (§P11: values no pre-training row had, numbers outside the range seen, optional properties left out,
scale-outs outside the ranges the model knows, another context than the fine-tuned one), in its words.
Needs numpy, h5py and xxhash (Debian: python3-numpy python3-h5py python3-xxhash); without them it says
which interpreter lacked which, and whether /usr/bin/python3 has them.

    python3 python/bellamy_model.py --model F [--name N] --set PROP=VALUE ... --scale-out A..B [--json]

prints one "scale_out<TAB>runtime_s<TAB>lo_runtime_s<TAB>hi_runtime_s" line per scale-out (the 0.9
interval, or --coverage C's; "scale_out<TAB>runtime_s" for a model without calibration), or with --json
one object with bellamy-predict --json's fields (but its choice); warnings on stderr. Exit 0 ok, 1
failure, 2 usage error. From Python: Model.load(path, name).predict({"machine_type": "m4.xlarge", ...},
[2, 4, 8], warnings=w), or .predict_interval(context, [2, 4, 8], coverage=0.9) for (lo, runtimes, hi);
w (a list) receives RequestWarning(kind, property, message) tuples; .review(context, [2, 4, 8]) gives
them without predicting.
Not here: training, fine-tuning, writing files, choosing a scale-out.
"""
import collections
import io
import math
import os
import re
import subprocess
import sys

PROG = "bellamy_model.py"
NEEDED = ("numpy", "h5py", "xxhash")     # the modules this reader needs beyond the standard library
SYSTEM_PYTHON = "/usr/bin/python3"       # Debian's interpreter, which python3-numpy & co. install for


def _import_failures(names=NEEDED):
    """[(module, None: not installed, or why its import failed)] of the modules in names that do not import."""
    out = []
    for mod in names:
        try:
            __import__(mod)
        except ImportError as e:
            missing = isinstance(e, ModuleNotFoundError) and e.name == mod
            out.append((mod, None if missing else (str(e) or type(e).__name__).split("\n")[0]))
        except Exception as e:  # a broken install may raise anything while importing
            out.append((mod, "%s: %s" % (type(e).__name__, str(e).split("\n")[0])))
    return out


def _probe_python(python, timeout=20):
    """(version, [modules of NEEDED it cannot import]) of another interpreter, or None when it cannot be
    run or answers oddly (a missing file, not a Python, a hang): the missing-module message asks it."""
    code = ("import sys\nbad = []\nfor m in %r:\n    try:\n        __import__(m)\n    except Exception:\n"
            "        bad.append(m)\nprint('%%d.%%d.%%d' %% sys.version_info[:3])\nprint(' '.join(bad))" % (NEEDED,))
    try:
        r = subprocess.run([python, "-c", code], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=timeout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    lines = r.stdout.decode("ascii", "replace").split("\n")
    if r.returncode != 0 or len(lines) < 2 or not re.fullmatch(r"[0-9]+\.[0-9]+\.[0-9]+", lines[0]):
        return None
    bad = lines[1].split()
    return (lines[0], bad) if all(b in NEEDED for b in bad) else None


def missing_modules_message(failures, executable=None, version=None, system_python=SYSTEM_PYTHON, venv=None,
                            apt=None, script=None):
    """One line saying which interpreter (executable, version: this one's by default) could not import which
    of the modules (failures as _import_failures gives them), whether system_python imports them all (asked
    in a subprocess), and what to do: run with that one, install for this one with pip, or (apt: Debian's
    apt-get is there) install Debian's packages. venv: this interpreter is a virtual environment's."""
    executable = executable if executable is not None else (sys.executable or "python3")
    version = version if version is not None else "%d.%d.%d" % sys.version_info[:3]
    venv = venv if venv is not None else sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    apt = apt if apt is not None else os.path.exists("/usr/bin/apt-get")
    script = script or (sys.argv[0] if __name__ == "__main__" and sys.argv and sys.argv[0] else __file__)
    names = [m for m, _ in failures]
    what = ", ".join(m if why is None else "%s (%s)" % (m, why) for m, why in failures)
    msg = "%s: %s (Python %s) cannot import %s; this reader needs %s" % (
        PROG, executable, version, what, ", ".join(NEEDED))
    pip = "%s -m pip install %s" % (executable, " ".join(names))
    debs = "apt-get install %s" % " ".join("python3-" + m for m in names)
    try:
        same = not venv and os.path.samefile(executable, system_python)
    except (OSError, ValueError, TypeError):
        same = False
    other = _probe_python(system_python) if os.path.exists(system_python) else None
    if same and other is not None and not other[1]:     # Debian's own, started in a way that hides them
        return msg + ("; %s started as usual imports them all, so this run hides them (python3 -S or -I, a "
                      "changed PYTHONPATH or sys.path?): run it as usual, e.g. %s %s ..." % (
                          system_python, system_python, script))
    if same:
        return msg + "; install them: %s" % (debs if apt else pip)
    if other is not None and not other[1]:
        return msg + ("; %s (Python %s) imports them all: run the reader with it (%s %s ...), or install them "
                      "for this interpreter: %s" % (system_python, other[0], system_python, script, pip))
    if other is not None:
        return msg + ("; %s (Python %s) cannot import %s either: install them for this interpreter (%s)%s" % (
            system_python, other[0], ", ".join(other[1]), pip,
            ", or for %s (%s)" % (system_python, "apt-get install %s" % " ".join("python3-" + m for m in other[1]))
            if apt else ""))
    return msg + "; install them for this interpreter: %s" % pip


_failures = _import_failures()
if _failures:    # one line for the command line; an ImportError saying the same for importers
    if __name__ == "__main__":
        sys.stderr.write(missing_modules_message(_failures) + "\n")
        sys.exit(1)
    raise ImportError(missing_modules_message(_failures))
import h5py          # noqa: E402
import numpy as np   # noqa: E402
import xxhash        # noqa: E402

# §P5: SELU (Klambauer et al. 2017); these decimals round to the doubles libbellamy uses.
SELU_LAMBDA = 1.0507009873554804934193349852946
SELU_ALPHA = 1.6732632423543772848170429916717

HEADER_SIZE = 512
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
FORMAT_NAME = "bellamy-model"
MAJOR_MIN, MAJOR_MAX = 1, 3            # the format majors this reader knows
DIM_MAX, PROPS_MAX, MEMBERS_MAX = 256, 256, 16
CODE_MAX = 16                          # libbellamy's limit on the code size (bl_model_context)
KNOWN_PROPERTIES = ("machine_type", "job_type", "job_args", "data_size_MB", "data_characteristics",
                    "environment", "memory", "slots")
DIM_NAMES = ("f_in", "f_hidden", "f_out", "vec_len", "ae_hidden", "code", "z_hidden", "n_essential",
             "n_optional")
BLOCKS = ("f.0.weight", "f.0.bias", "f.2.weight", "f.2.bias", "g.0.weight", "g.3.weight", "h.0.weight",
          "h.3.weight", "z.0.weight", "z.0.bias", "z.2.weight", "z.2.bias")
NUMBERS = ("binary", "log", "range", "both")


class BellamyError(Exception):
    """A refusal: one line naming the file and what to do. kind mirrors libbellamy's status
    ('format', 'version', 'notfound', 'invalid', 'range', 'io')."""

    def __init__(self, message, kind="format"):
        super().__init__(message)
        self.kind = kind


# ---- §P1 the file: header, HDF5, format and version -------------------------------------------

def _hard(g, name):
    """g[name] when it is a hard link in g, else None: soft and external links (which could lead to
    another object or another file) are not read, as libbellamy's reader does not read them."""
    try:
        link = g.get(name, getlink=True)
    except (KeyError, OSError, RuntimeError, ValueError):
        return None
    return g[name] if isinstance(link, h5py.HardLink) else None


def _model_names(f):
    """The models of an open file: hard-linked groups under /models, in the file's order."""
    models = _hard(f, "models")
    return [] if models is None else [n for n in models.keys() if isinstance(_hard(models, n), h5py.Group)]


def _read_file(path):
    try:
        os.stat(path)
    except OSError as e:
        raise BellamyError("%s: cannot open: %s" % (path, e.strerror), "io")
    if os.path.isdir(path):
        raise BellamyError("%s: is a folder, not a file" % path, "io")
    if not os.path.isfile(path):
        raise BellamyError("%s: not a regular file (a pipe, device or socket)" % path, "io")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BellamyError("%s: cannot read: %s" % (path, e.strerror), "io")
    return data


def _digits(block, p):
    """libbellamy's parse_u64: 1 to 19 decimal digits at p; (value, end) or None."""
    q = p
    while q < len(block) and q - p < 20 and 0x30 <= block[q] <= 0x39:
        q += 1
    if q == p or q - p > 19:
        return None
    return int(block[p:q]), q


def check_header(data, path, ignore_checksum=False):
    """§P1.1: checks the 512-byte header; returns (has_header, note): (True, None) a header that
    matches, (False, None) none, (False, note) a damaged one that ignore_checksum let through (note
    says what is wrong); raises BellamyError for a damaged header otherwise."""
    family = b"BELLAMY-MODEL "
    if not data.startswith(family):
        if data[:8] == HDF5_SIGNATURE:
            return False, None                      # no user block: a file without a header
        if len(data) < HEADER_SIZE + 8 or data[HEADER_SIZE:HEADER_SIZE + 8] != HDF5_SIGNATURE:
            return False, None                      # not ours at all: HDF5 will say what it is
        msg = "%s: damaged file: its first %d bytes (the header) are not a Bellamy model header" % (path, HEADER_SIZE)
        if ignore_checksum:
            return False, msg
        raise BellamyError(msg + " (a foreign HDF5 file with a user block of its own reads with --ignore-checksum)")
    if len(data) < HEADER_SIZE:
        raise BellamyError("%s: truncated file: %d bytes, shorter than its header" % (path, len(data)))
    block = data[:HEADER_SIZE]
    unreadable = BellamyError("%s: damaged file: its header line is unreadable" % path)
    r = _digits(block, len(family))
    if r is None or r[1] >= len(block) or block[r[1]] != 0x20:
        raise unreadable
    version, p = r[0], r[1] + 1
    if version != 1:
        raise BellamyError("%s: header version %d (%s)" % (
            path, version, "newer than this reader supports; use a newer bellamy_model.py" if version > 1
            else "damaged header"), "version" if version > 1 else "format")
    if block[p:p + 5] != b"size=":
        raise unreadable
    r = _digits(block, p + 5)
    if r is None:
        raise unreadable
    want, p = r
    m = re.compile(rb" xxh64=([0-9a-f]{16})\n").match(block, p)
    if not m or any(block[m.end():]):
        raise unreadable
    # an edit on purpose (an attribute added with h5py) changes the length as often as the bytes: the
    # override lets both through, and the file then has a header, overridden (not none: §P1.1)
    if want != len(data):
        msg = "%s: damaged or truncated file: %d bytes, its header says %d (changed after it was written" % (
            path, len(data), want)
    elif xxhash.xxh64_intdigest(data[HEADER_SIZE:], seed=0) != int(m.group(1), 16):
        msg = "%s: damaged file: its checksum does not match its contents (changed after it was written" % path
    else:
        return True, None
    if ignore_checksum:
        return False, msg + ")"
    if want > len(data):  # cut short, as by an interrupted copy: reading it anyway cannot work
        raise BellamyError("%s: truncated file: %d bytes, its header says %d (cut short, as by an interrupted copy "
                           "or download: copy it again from where it was written)" % (path, len(data), want))
    raise BellamyError(msg + "; --ignore-checksum or BELLAMY_MODEL_IGNORE_CHECKSUM=1 reads a file edited on purpose)")


def _override_from_env():
    return os.environ.get("BELLAMY_MODEL_IGNORE_CHECKSUM") == "1"


def _unstamped_from_env():
    return os.environ.get("BELLAMY_MODEL_ALLOW_UNSTAMPED") == "1"


def has_hdf5_signature(data):
    """HDF5's signature where HDF5 looks for it: byte 0, 512, 1024, 2048, … (libbellamy's test too)."""
    off = 0
    while off + 8 <= len(data):
        if data[off:off + 8] == HDF5_SIGNATURE:
            return True
        off = off * 2 if off else HEADER_SIZE
    return False


def _open_h5(path, ignore_checksum, allow_unstamped=None):
    """Reads, checks and opens the verified bytes (never the file again); returns (h5 file, note,
    unstamped): note says why a damaged header was let through, unstamped that the file has no header
    and was read because allow_unstamped (None: BELLAMY_MODEL_ALLOW_UNSTAMPED=1) let it."""
    if ignore_checksum is None:
        ignore_checksum = _override_from_env()
    if allow_unstamped is None:
        allow_unstamped = _unstamped_from_env()
    data = _read_file(path)
    has, note = check_header(data, path, ignore_checksum)
    if not data:
        raise BellamyError("%s: empty file, not an HDF5 model file" % path)
    if not has_hdf5_signature(data):
        raise BellamyError("%s: not an HDF5 file" % path)
    # §P1.1: no header, nothing vouches for the bytes (a header let through by the override is not "none")
    unstamped = not has and note is None
    if unstamped and not allow_unstamped:
        raise BellamyError("%s: no checksum header (written before libbellamy 0.4.1 or by another program), so its "
                           "contents cannot be verified; if you trust the file, stamp it once with 'bellamy-train "
                           "check --model FILE --stamp', or load it unverified with BELLAMY_MODEL_ALLOW_UNSTAMPED=1 "
                           "(or --allow-unstamped)" % path)
    try:
        f = h5py.File(io.BytesIO(data), "r")
    except (OSError, ValueError) as e:
        raise BellamyError("%s: not an HDF5 file, or a damaged one (%s)" % (path, str(e).split("\n")[0]))
    try:
        _check_root(f, path)
    except BaseException:
        f.close()
        raise
    return f, note, unstamped


def _check_root(f, path):
    """§P1.2: the root attributes name the format and a major version this reader knows."""
    if "format" not in f.attrs:
        raise BellamyError("%s: not a Bellamy model file (no root attribute 'format')" % path)
    kind, fmt = _attr_value(f.attrs, "format")
    if kind != "string" or fmt != FORMAT_NAME:
        raise BellamyError("%s: not a Bellamy model file (root attribute 'format' is %s, expected '%s')" % (
            path, ("'%s'" % fmt) if kind == "string" else "a " + kind, FORMAT_NAME))
    if "format_version" not in f.attrs:
        raise BellamyError("%s: no root attribute 'format_version'" % path)
    kind, ver = _attr_value(f.attrs, "format_version")
    m = re.fullmatch(r"([0-9]+)\.([0-9]+)", ver) if kind == "string" else None
    if not m:
        raise BellamyError("%s: root attribute 'format_version' is not \"MAJOR.MINOR\"" % path)
    major = int(m.group(1))
    if not MAJOR_MIN <= major <= MAJOR_MAX:
        raise BellamyError("%s: model file format version %s is %s than this reader supports (%d.x to %d.x)%s" % (
            path, ver, "newer" if major > MAJOR_MAX else "older", MAJOR_MIN, MAJOR_MAX,
            "; use a newer bellamy_model.py" if major > MAJOR_MAX else ""), "version")
    if "models" not in f or not isinstance(f["models"], h5py.Group):
        raise BellamyError("%s: no group /models" % path)


def list_models(path, ignore_checksum=None, allow_unstamped=None):
    """The names of the models in a file, in the file's order."""
    f, _, _ = _open_h5(path, ignore_checksum, allow_unstamped)
    with f:
        return _model_names(f)


# ---- attributes as libbellamy types them --------------------------------------------------------

def _text(v):
    return v.decode("utf-8") if isinstance(v, (bytes, np.bytes_)) else str(v)


def _attr_value(attrs, name):
    """(kind, value): kind one of string, int64, double, string array, int64 array, double array,
    or 'unknown'. Integers of any width count as int64, floats of any width as double."""
    try:
        v = attrs[name]
    except (OSError, TypeError, ValueError):
        return "unknown", None
    if isinstance(v, (str, bytes, np.bytes_)):
        return "string", _text(v)
    if isinstance(v, (np.integer, int)) and not isinstance(v, (bool, np.bool_)):
        return "int64", int(v)
    if isinstance(v, (np.floating, float)):
        return "double", float(v)
    if isinstance(v, np.ndarray) and v.ndim == 1:
        if v.dtype.kind in "iu":
            return "int64 array", [int(x) for x in v]
        if v.dtype.kind == "f":
            return "double array", np.asarray(v, dtype=np.float64)
        if v.dtype.kind in "OSU" and all(isinstance(x, (str, bytes, np.bytes_)) for x in v):
            return "string array", [_text(x) for x in v]
    return "unknown", None


class _Record:
    """One model group: typed attribute getters whose messages name the file, model and attribute."""

    def __init__(self, path, name, group):
        self.path, self.name, self.g = path, name, group

    def fail(self, msg, kind="format"):
        return BellamyError("%s: model '%s': %s" % (self.path, self.name, msg), kind)

    def find(self, group, name):
        g = self.g
        for part in [p for p in group.split("/") if p]:
            g = _hard(g, part)
            if not isinstance(g, h5py.Group):
                return None
        return _attr_value(g.attrs, name) if name in g.attrs else None

    def get(self, group, name, kind, required=True):
        a = self.find(group, name)
        full = "%s/%s" % (group, name) if group else name
        if a is None:
            if required:
                raise self.fail("required attribute '%s' is missing" % full, "notfound")
            return None
        if a[0] != kind:
            raise self.fail("attribute '%s' is a %s, expected a %s" % (full, a[0], kind))
        return a[1]

    def get_int(self, group, name, lo, hi):
        v = self.get(group, name, "int64")
        if not lo <= v <= hi:
            raise self.fail("%s/%s = %d outside %d..%d" % (group, name, v, lo, hi))
        return v


# ---- §P4 encoders -------------------------------------------------------------------------------

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_number(text):
    """§P4.1: a finite decimal number (no blanks, hexadecimal, inf or nan); ValueError with the reason."""
    if text == "":
        raise ValueError("empty value where a number is required")
    if not _DECIMAL.fullmatch(text):
        q = text[1:] if text[:1] in "+-" else text
        if q[:1] in ("n", "N", "i", "I"):
            raise ValueError("'%.40s' is NaN or infinity, a finite number is required" % text)
        raise ValueError("'%.40s' is not a number" % text)
    d = float(text)
    if not math.isfinite(d):
        raise ValueError("'%.40s' is NaN or infinity, a finite number is required" % text)
    return d


def parse_natural(text, vec_len):
    """§P4.1: a natural number below 2^(vec_len − 1), as an int; ValueError with the reason."""
    d = parse_number(text)
    if d < 0:
        raise ValueError("'%.40s' is negative, a natural number is required" % text)
    if d != math.floor(d):
        raise ValueError("'%.40s' is not an integer (binarized properties need natural numbers; declare the "
                         "property as text to hash it instead)" % text)
    bits = vec_len - 1
    if d >= 2.0 ** bits:
        raise ValueError("'%.40s' is too large: the binarizer keeps %d bits, so values must be below 2^%d"
                         % (text, bits, bits))
    return int(d)


def encode_binary(v, vec_len):
    """§P4.2: [1, bit (vec_len−2) of v, …, bit 0 of v]."""
    bits = vec_len - 1
    return np.array([1.0] + [float((v >> (bits - 1 - i)) & 1) for i in range(bits)])


def encode_thermometer(v, vec_len, bounds=None):
    """§P4.3/§P4.4: [1, clamp(u − j, 0, 1) for j < vec_len − 1], u = log2(1 + v) (log) or that
    stretched over bounds (lo, hi) to (log2(1 + v) − lo) / (hi − lo) · (vec_len − 1) (range)."""
    bits = vec_len - 1
    L = math.log2(1.0 + float(v))
    u = L if bounds is None else (L - bounds[0]) / (bounds[1] - bounds[0]) * float(bits)
    return np.array([1.0] + [min(max(u - float(j), 0.0), 1.0) for j in range(bits)])


def hash_token(text_bytes, vocabulary):
    """§P4.5 steps 1–2: lower-case (ASCII, U+212A → k, U+0130 → i), keep vocabulary characters."""
    keep = set(vocabulary.encode("ascii"))
    out = bytearray()
    b, i = text_bytes, 0
    while i < len(b):
        c = b[i]
        o = None
        if c < 0x80:
            o = c + 32 if 0x41 <= c <= 0x5A else c
            i += 1
        elif b[i:i + 3] == b"\xe2\x84\xaa":
            o, i = 0x6B, i + 3
        elif b[i:i + 2] == b"\xc4\xb0":
            o, i = 0x69, i + 2
        else:
            i += 1
        if o is not None and o in keep:
            out.append(o)
    return bytes(out)


def char_wb_ngrams(token, ngram_min, ngram_max):
    """§P4.5 step 3: the n-grams of b" " + token + b" " in order (by n, then offset)."""
    if not token:
        return []
    w = b" " + token + b" "
    grams = []
    for n in range(ngram_min, ngram_max + 1):
        if len(w) <= n:
            grams.append(w)
            break
        grams.extend(w[o:o + n] for o in range(len(w) - n + 1))
    return grams


def encode_text(text_bytes, enc):
    """§P4.5: [0, L2-normalised signed XXH32 counts of the token's char n-grams in vec_len − 1 buckets]."""
    buckets = enc["vec_len"] - 1
    acc = [0.0] * buckets
    token = hash_token(text_bytes, enc["vocabulary"])
    for g in char_wb_ngrams(token, enc["ngram_min"], enc["ngram_max"]):
        h = xxhash.xxh32_intdigest(g, seed=enc["hash_seed"])
        s = h - (1 << 32) if h & 0x80000000 else h      # read as a signed 32-bit integer
        acc[abs(s) % buckets] += 1.0 if s >= 0 else -1.0
    ss = 0.0
    for a in acc:
        ss += a * a
    if ss > 0.0:
        inv = 1.0 / math.sqrt(ss)
        acc = [a * inv for a in acc]
    return np.array([0.0] + acc)


def _utf8_bytes(value):
    """The value's bytes (str: UTF-8, keeping undecodable command-line bytes); ValueError unless valid
    UTF-8 without NUL (§P3)."""
    b = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)
    try:
        b.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError("invalid UTF-8 at byte %d of the value" % e.start)
    if b"\0" in b:
        raise ValueError("invalid UTF-8 at byte %d of the value" % b.index(b"\0"))
    return b


# ---- §P3 cluster totals and constants from the stored schema --------------------------------------

class _SchemaError(Exception):
    pass


def _schema_tokens(line, lineno, name):
    """The schema format's tokens of one line: blanks separate, '#' starts a comment outside quotes,
    double quotes hold blanks, with \\" and \\\\ as escapes."""
    toks, i, n = [], 0, len(line)
    while True:
        while i < n and line[i] in " \t":
            i += 1
        if i >= n or line[i] == "#":
            return toks
        if len(toks) == 256:
            raise _SchemaError("%s:%d:%d: too many tokens on one line" % (name, lineno, i + 1))
        col = i + 1
        if line[i] == '"':
            j, w = i + 1, []
            while True:
                if j >= n:
                    raise _SchemaError("%s:%d:%d: unterminated quote" % (name, lineno, col))
                if line[j] == '"':
                    break
                if line[j] == "\\" and j + 1 < n and line[j + 1] in '"\\':
                    j += 1
                w.append(line[j])
                j += 1
            if j + 1 < n and line[j + 1] not in " \t#":
                raise _SchemaError("%s:%d:%d: text right after a closing quote" % (name, lineno, j + 2))
            toks.append("".join(w))
            i = j + 1
        else:
            j = i
            while j < n and line[j] not in " \t#":
                j += 1
            toks.append(line[i:j])
            if j < n and line[j] == "#":
                return toks
            i = j + 1 if j < n else j


def _known_property(name):
    return name in KNOWN_PROPERTIES or (name.startswith("x_") and len(name) > 2)


def stored_schema_totals(text, name="schema stored in the model"):
    """§P3.2: the names of the properties that are cluster totals under a schema text."""
    return stored_schema(text, name)[0]


def stored_schema(text, name="schema stored in the model"):
    """§P3.2 and §P3.5: (the names of the properties that are cluster totals under a schema text — a
    per_machine source, or a column listed on a cluster_totals line —, {name: value} of the properties
    whose source is const or per_machine, the value token as written). Parsed as libbellamy parses a
    stored schema (every line checked, the columns' roles not); raises _SchemaError naming
    SCHEMA:LINE:COLUMN."""
    if text.startswith("\ufeff"):
        text = text[1:]
    props, totals = {}, []          # name -> (essential, source, columns, const or per_machine value)
    seen_scale = seen_runtime = seen_any = False
    lines = text.split("\n")
    for lineno, line in enumerate(lines, 1):
        if line.endswith("\r"):
            line = line[:-1]
        t = _schema_tokens(line, lineno, name)
        if not t:
            continue
        first, seen_any = not seen_any, True
        d = t[0]
        where = "%s:%d" % (name, lineno)
        if d == "bellamy-schema":
            if not first or len(t) != 2 or t[1] != "1":
                raise _SchemaError("%s: bellamy-schema must be the first line and read 'bellamy-schema 1'" % where)
        elif d == "scale_out":
            if seen_scale or len(t) != 2 or not t[1]:
                raise _SchemaError("%s: scale_out takes one column name, once" % where)
            seen_scale = True
        elif d == "runtime":
            if seen_runtime or len(t) != 3 or not t[1] or t[2] not in ("s", "ms", "min", "h"):
                raise _SchemaError("%s: runtime takes a column name and a unit (s, ms, min or h), once" % where)
            seen_runtime = True
        elif d == "cluster_totals":
            if len(t) < 2 or not all(t[1:]):
                raise _SchemaError("%s: cluster_totals: no columns named" % where)
            totals.extend(t[1:])
        elif d == "property":
            if len(t) < 5:
                raise _SchemaError("%s: property: expected NAME essential|optional number|text SOURCE" % where)
            pname, ess, kind, src, args = t[1], t[2], t[3], t[4], t[5:]
            if not _known_property(pname) or pname in props:
                raise _SchemaError("%s: property '%s' is unknown or declared twice" % (where, pname))
            if ess not in ("essential", "optional") or kind not in ("number", "text"):
                raise _SchemaError("%s: property '%s': expected essential|optional number|text" % (where, pname))
            if src in ("column", "join"):
                if not args or (src == "column" and len(args) > 1) or not all(args):
                    raise _SchemaError("%s: %s: bad column names" % (where, src))
                cols, value = args, None
            elif src in ("const", "per_machine"):
                if len(args) != 1 or (src == "per_machine" and kind != "number"):
                    raise _SchemaError("%s: %s takes one value (per_machine: of a number property)" % (where, src))
                if kind == "number":
                    try:
                        parse_natural(args[0], 64)
                    except ValueError as e:
                        raise _SchemaError("%s: %s" % (where, e))
                try:
                    _utf8_bytes(args[0])
                except ValueError:
                    raise _SchemaError("%s: invalid UTF-8 in value" % where)
                cols, value = [], args[0]
            elif src == "template":
                if len(args) != 1:
                    raise _SchemaError("%s: template takes one (quoted) text" % where)
                cols, value = _template_columns(args[0], where), None
            else:
                raise _SchemaError("%s: unknown source '%s'" % (where, src))
            props[pname] = (ess == "essential", src, cols, value)
        else:
            raise _SchemaError("%s: unknown directive '%s'" % (where, d))
    if not seen_scale or not seen_runtime:
        raise _SchemaError("%s: no %s line" % (name, "scale_out" if not seen_scale else "runtime"))
    if not any(pr[0] for pr in props.values()):
        raise _SchemaError("%s: no essential property (a context needs at least one)" % name)
    total_names = {pname for pname, (_, src, cols, _) in props.items()
                   if src == "per_machine" or any(c in totals for c in cols)}
    return total_names, {pname: value for pname, (_, _, _, value) in props.items() if value is not None}


def _template_columns(tpl, where):
    cols, i = [], 0
    while i < len(tpl):
        c = tpl[i]
        if c == ">":
            raise _SchemaError("%s: template: '>' without '<'" % where)
        if c == "<":
            e = tpl.find(">", i + 1)
            lt = tpl.find("<", i + 1)
            if e < 0 or (0 <= lt < e):
                raise _SchemaError("%s: template: '<' without a closing '>'" % where)
            if e == i + 1:
                raise _SchemaError("%s: template: empty placeholder <>" % where)
            cols.append(tpl[i + 1:e])
            i = e
        i += 1
    return cols


_STRTOD_HEX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
_STRTOD_SPECIAL = re.compile(r"[+-]?(?:inf|infinity|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)


def _strtod_whole(text):
    """The number C's strtod reads when it consumes all of text, else None (§P3.3: libbellamy reads a
    per-machine value that way)."""
    s = text.lstrip(" \t\n\v\f\r")
    if _DECIMAL.fullmatch(s):
        return float(s)
    if _STRTOD_HEX.fullmatch(s):
        sign = -1.0 if s[0] == "-" else 1.0
        return sign * float.fromhex(s.lstrip("+-"))
    if _STRTOD_SPECIAL.fullmatch(s):
        word = s.lower().lstrip("+-")
        return float("nan") if word.startswith("nan") else (-math.inf if s[0] == "-" else math.inf)
    return None


# ---- §P2 the model ------------------------------------------------------------------------------

def _precision(rec):
    """§P2: the model's attribute precision: 'f64' (absent: files written before it, float64 models) or
    'f32'; any other value, or a value of another type, refused as libbellamy refuses it."""
    a = rec.find("", "precision")
    if a is None or a == ("string", "f64"):
        return "f64"
    if a == ("string", "f32"):
        return "f32"
    if a[0] == "string":
        v = "".join("?" if ord(c) < 0x20 or ord(c) == 0x7f else c for c in a[1][:40])
        what = "'%s'%s" % (v, "..." if len(a[1]) > 40 else "")
    else:
        what = "a value of type %s, not a string" % a[0]
    raise rec.fail('attribute precision (/models/%s) is %s, expected "f32" or "f64": a newer libbellamy wrote it '
                   'or it was edited; load it with the library that wrote it, or set the attribute to "f64" '
                   '(float64 weight datasets) or "f32" (float32 ones)' % (rec.name, what))


def _weight_datasets(rec, precision="f64"):
    """Every dataset under weights/ as a numpy array: rank 1 or 2, not empty; float64, or with precision
    'f32' float32 (kept as numpy float32: the model computes in float32, §P5)."""
    size = 4 if precision == "f32" else 8
    g = rec.g
    weights = _hard(g, "weights")
    if not isinstance(weights, h5py.Group):
        raise rec.fail("has no group /models/%s/weights" % rec.name)
    blocks = {}
    for bname in weights.keys():
        where = "/models/%s/weights/%s" % (rec.name, bname)
        obj = _hard(weights, bname)
        if not isinstance(obj, h5py.Dataset):   # a soft or external link, a group: as libbellamy refuses them
            raise BellamyError("%s: %s is not a dataset" % (rec.path, where))
        if obj.dtype.kind != "f" or obj.dtype.itemsize != size:
            if size == 4:
                raise BellamyError('%s: dataset %s is not float32, as the model\'s attribute precision "f32" says '
                                   'its weights are' % (rec.path, where))
            raise BellamyError("%s: dataset %s is not float64%s" % (
                rec.path, where, ' (float32 weights need the model attribute precision = "f32")'
                if obj.dtype.kind == "f" and obj.dtype.itemsize == 4 else ""))
        if obj.ndim not in (1, 2):
            raise BellamyError("%s: dataset %s has rank %d (must be 1 or 2)" % (rec.path, where, obj.ndim))
        if obj.size == 0:
            raise BellamyError("%s: dataset %s has an empty or too large shape" % (rec.path, where))
        blocks[bname] = np.asarray(obj[()], dtype=np.float32 if size == 4 else np.float64)
    return blocks


def _encoder_settings(rec):
    """The encoder group, absent attributes at their defaults (§P2)."""
    enc = {"vec_len": rec.get_int("encoder", "vec_len", 2, 64),
           "ngram_min": rec.get_int("encoder", "ngram_min", 1, 8),
           "ngram_max": rec.get_int("encoder", "ngram_max", 1, 8),
           "hash_seed": rec.get_int("encoder", "hash_seed", 0, 0xFFFFFFFF)}
    h = rec.get("encoder", "hash", "string", required=False)
    if h is not None and h != "xxh32":
        raise rec.fail("encoder/hash '%s' (this reader hashes with xxh32 only)" % h)
    vocab = rec.get("encoder", "vocabulary", "string")
    if len(vocab.encode("utf-8")) >= 128:
        raise rec.fail("encoder/vocabulary is too long")
    enc["vocabulary"] = vocab
    totals = rec.get("encoder", "cluster_totals", "string", required=False)
    if totals is not None and totals not in ("total", "per_machine"):
        raise rec.fail("encoder/cluster_totals '%s' (expected total or per_machine)" % totals)
    enc["totals_per_machine"] = totals == "per_machine"
    numbers = rec.get("encoder", "numbers", "string", required=False)
    if numbers is not None and numbers not in NUMBERS:
        raise rec.fail("encoder/numbers '%s' (expected binary, log, range or both)" % numbers)
    enc["numbers"] = numbers or "binary"
    if not enc["ngram_min"] <= enc["ngram_max"]:
        raise rec.fail("encoder: n-gram range %d..%d is outside 1..8" % (enc["ngram_min"], enc["ngram_max"]))
    if not vocab or any(not (0x20 < ord(c) < 0x7F) or "A" <= c <= "Z" for c in vocab):
        raise rec.fail("encoder: vocabulary must be non-empty printable ASCII without spaces or upper case")
    return enc


def _schema_properties(rec, dims):
    """schema/names, kinds and essential as Property objects, essential first."""
    names = rec.get("schema", "names", "string array")
    kinds = rec.get("schema", "kinds", "string array")
    ess = rec.get("schema", "essential", "int64 array")
    if not len(names) == len(kinds) == len(ess) == dims["n_essential"] + dims["n_optional"]:
        raise rec.fail("schema/names, kinds and essential disagree with the network's %d + %d properties"
                       % (dims["n_essential"], dims["n_optional"]))
    props = []
    for i, (pn, pk, pe) in enumerate(zip(names, kinds, ess)):
        if not _known_property(pn) or pn in [p.name for p in props]:
            raise rec.fail("schema/names[%d] = '%s' (%s)" % (i, pn, "named twice" if _known_property(pn)
                           else "not a property name: expected one of the schema's"))
        if pk not in ("number", "text"):
            raise rec.fail("schema/kinds[%d] = '%s' (expected number or text)" % (i, pk))
        if i > 0 and pe != 0 and not props[-1].essential:
            raise rec.fail("schema lists essential properties after optional ones")
        props.append(Property(pn, pe != 0, pk == "number"))
    n_ess = sum(p.essential for p in props)
    if n_ess != dims["n_essential"]:
        raise rec.fail("schema/essential marks %d properties, network/n_essential is %d" % (n_ess, dims["n_essential"]))
    return props


def _number_bounds(rec, props):
    """numbers = range: each property's (lo, hi) in log2(1 + value); text properties' unused."""
    lo = rec.get("encoder", "number_lo", "double array")
    hi = rec.get("encoder", "number_hi", "double array")
    if len(lo) != len(props) or len(hi) != len(props):
        raise rec.fail("encoder/number_lo and number_hi have %d and %d values, schema/names %d"
                       % (len(lo), len(hi), len(props)))
    for i, p in enumerate(props):
        if p.number and not (math.isfinite(lo[i]) and math.isfinite(hi[i]) and lo[i] < hi[i]):
            raise rec.fail("encoder/number_lo, number_hi [%d] = %g, %g for property '%s' (finite bounds "
                           "with lo < hi expected)" % (i, lo[i], hi[i], p.name))
    return [(float(lo[i]), float(hi[i])) for i in range(len(props))]


def _members(rec, dims, blocks):
    """The ensemble's networks, each a dict block name → array of the shape §P2 gives."""
    count = 1
    if rec.find("members", "count") is not None:
        count = rec.get_int("members", "count", 1, MEMBERS_MAX)
        if count * dims["z_hidden"] > DIM_MAX:
            raise rec.fail("members/count %d × z_hidden %d exceeds %d" % (count, dims["z_hidden"], DIM_MAX))
        comb = rec.get("members", "combine", "string")
        if comb != "median":
            raise rec.fail("members/combine '%s' (expected median)" % comb)
    d = dims
    z_in = d["f_out"] + d["code"] * d["n_essential"] + d["code"]
    shapes = {"f.0.weight": (d["f_hidden"], d["f_in"]), "f.0.bias": (d["f_hidden"],),
              "f.2.weight": (d["f_out"], d["f_hidden"]), "f.2.bias": (d["f_out"],),
              "g.0.weight": (d["ae_hidden"], d["vec_len"]), "g.3.weight": (d["code"], d["ae_hidden"]),
              "h.0.weight": (d["ae_hidden"], d["code"]), "h.3.weight": (d["vec_len"], d["ae_hidden"]),
              "z.0.weight": (d["z_hidden"], z_in), "z.0.bias": (d["z_hidden"],),
              "z.2.weight": (1, d["z_hidden"]), "z.2.bias": (1,)}
    members = []
    for j in range(count):
        net = {}
        for b in BLOCKS:
            bn = b if j == 0 else "member%d.%s" % (j, b)
            if bn not in blocks:
                raise rec.fail("no weight block '%s'" % bn, "notfound")
            x = blocks[bn]
            if x.shape != shapes[b]:
                raise rec.fail("weight block '%s' has shape %s, expected %s" % (bn, x.shape, shapes[b]))
            bad = np.flatnonzero(~np.isfinite(x.ravel()))
            if bad.size:
                raise rec.fail("block '%s' holds %g at element %d (finite numbers expected)"
                               % (bn, x.ravel()[bad[0]], bad[0]))
            net[b] = x
        members.append(net)
    if count > 1:
        for col in ("dropout", "learning_rate", "weight_decay", "best_val_loss"):
            v = rec.get("members", col, "double array")
            if len(v) != count:
                raise rec.fail("members/%s holds %d values, members/count is %d" % (col, len(v), count))
    return members


def _seen(rec, n_props):
    """§P2: the group seen (format 1.3; None before), checked as libbellamy checks it. A dict with
    values [(property index, value)], distinct, per_machine, number_min, number_max."""
    if rec.find("seen", "rows") is None:
        return None
    rows = rec.get("seen", "rows", "int64")
    so = [rec.get("seen", a, "double") for a in ("scale_out_min", "scale_out_max", "runtime_min_s", "runtime_max_s")]
    prop = rec.get("seen", "value_prop", "int64 array")
    values = rec.get("seen", "values", "string array")
    counts = rec.get("seen", "counts", "int64 array")
    per_prop = [rec.get("seen", a, k) for a, k in (("distinct", "int64 array"), ("per_machine", "int64 array"),
                                                   ("number_min", "double array"), ("number_max", "double array"))]

    def positive_range(lo, hi):
        return math.isfinite(lo) and math.isfinite(hi) and 0 < lo <= hi

    if rows < 1 or not positive_range(so[0], so[1]) or not positive_range(so[2], so[3]):
        raise rec.fail("seen/rows, scale_out_min/max or runtime_min_s/max_s out of range (rows >= 1, "
                       "0 < min <= max expected)")
    if not len(prop) == len(values) == len(counts):
        raise rec.fail("seen/value_prop, values and counts differ in length")
    if any(len(a) != n_props for a in per_prop):
        raise rec.fail("seen/distinct, per_machine, number_min and number_max must hold one value per property "
                       "(schema/names)")
    for k in range(len(prop)):
        if not 0 <= prop[k] < n_props or (k and prop[k] < prop[k - 1]) or counts[k] < 1:
            raise rec.fail("seen/value_prop must list property indices in order, seen/counts positive counts")
    distinct, per_machine, nmin, nmax = per_prop
    if any(d < 0 for d in distinct) or any(v not in (0, 1) for v in per_machine):
        raise rec.fail("seen/distinct must be >= 0 and seen/per_machine 0 or 1")
    return {"values": list(zip(prop, values)), "distinct": distinct, "per_machine": per_machine,
            "number_min": [float(v) for v in nmin], "number_max": [float(v) for v in nmax],
            "scale_out_min": float(so[0]), "scale_out_max": float(so[1]), "runtime_min_s": float(so[2])}


def _check_finetune(rec, n_props, members):
    """§P2: the group finetune and members/epochs (format 1.3), and the fine-tuning's fit to its runs
    (format 1.4): refused when malformed, as libbellamy refuses them. None when the model was never
    fine-tuned; else a dict: runs, contexts, scale_out_min, scale_out_max, runtime_min_s, context (one
    text per property), fit_scale_out (a list, or None before 1.4) and disagreement (D; NaN before 1.4)."""
    if members > 1 and rec.find("members", "epochs") is not None:
        if len(rec.get("members", "epochs", "int64 array")) != members:
            raise rec.fail("members/epochs must hold one value per member")
    if rec.find("finetune", "runs") is None:
        return None
    runs = rec.get("finetune", "runs", "int64")
    contexts = rec.get("finetune", "contexts", "int64")
    r = [rec.get("finetune", a, "double") for a in ("scale_out_min", "scale_out_max", "runtime_min_s", "runtime_max_s")]
    ctx = rec.get("finetune", "context", "string array")
    ok = all(math.isfinite(v) for v in r) and 0 < r[0] <= r[1] and 0 < r[2] <= r[3]
    if runs < 1 or contexts < 1 or not ok:
        raise rec.fail("finetune/runs, contexts, scale_out_min/max or runtime_min_s/max_s out of range")
    if len(ctx) != n_props:
        raise rec.fail("finetune/context must hold one value per property (schema/names)")
    tuned = {"runs": runs, "contexts": contexts, "scale_out_min": float(r[0]), "scale_out_max": float(r[1]),
             "runtime_min_s": float(r[2]), "context": [_text(v) for v in ctx], "fit_scale_out": None,
             "disagreement": math.nan, "held_out": 0, "protocol": 0}
    if rec.find("finetune", "protocol") is not None:        # the fine-tuning options' fingerprint (§P11.4)
        tuned["protocol"] = rec.get("finetune", "protocol", "int64")
    if rec.find("finetune", "disagreement_held_out") is not None:
        held = rec.get("finetune", "disagreement_held_out", "int64")
        if held not in (0, 1):
            raise rec.fail("finetune/disagreement_held_out must be 0 or 1")
        tuned["held_out"] = int(held)
    if rec.find("finetune", "fit_scale_out") is not None:      # format 1.4, 2.2, 3.1
        fit = [rec.get("finetune", a, "double array")
               for a in ("fit_scale_out", "fit_runtime_s", "fit_predicted_s", "fit_prior_s")]
        D = rec.get("finetune", "disagreement", "double")
        n = len(fit[0])
        if any(len(a) != n for a in fit) or n == 0 or n != runs or not (D >= 0):
            raise rec.fail("finetune/fit_scale_out, fit_runtime_s, fit_predicted_s and fit_prior_s must hold one "
                           "value per run (finetune/runs) and finetune/disagreement a number >= 0")
        for i in range(n):
            x, y, pred, prior = (float(a[i]) for a in fit)
            if not (x > 0) or not (y > 0) or not math.isfinite(x) or not math.isfinite(y) or \
                    math.isinf(pred) or math.isinf(prior):
                raise rec.fail("finetune/fit_scale_out and fit_runtime_s must be positive numbers, fit_predicted_s "
                               "and fit_prior_s finite or NaN")
        tuned["fit_scale_out"] = [float(v) for v in fit[0]]
        tuned["disagreement"] = float(D)
    return tuned


CALIB_KMAX = 5                         # runs calibrated: k = 0..5 (§P10; more runs count as 5)
CALIB_CELL_OTHER = 2 * (CALIB_KMAX + 1)  # a fine-tuned model on another context
CALIB_CELLS = CALIB_CELL_OTHER + 1     # cell 2k: inside the runs' range, 2k + 1: outside, and the other
CALIB_DREF_MIN = 0.01                  # the least D_ref
CALIB_SUPPORT = 4.0                    # beyond this factor outside the support an interval is unbounded
RUNTIME_MAX_S = 1e12                   # libbellamy's largest runtime (BL_RUNTIME_MAX_S)
INTERVAL_WHY = ("bounded", "beyond", "stand_in", "too_few", "too_wide")   # libbellamy's bl_interval_why
# an unbounded interval's "unbounded_why" in bellamy-predict --json
UNBOUNDED_NAME = {"beyond": "beyond_support", "stand_in": "stand_in", "too_few": "too_few_contexts",
                  "too_wide": "too_wide"}
CALIB_HMAX = 4.605170185988091         # ln 100: a wider interval is unbounded (BL_CALIB_HMAX)
LN2 = 0.69314718055994530942


def _calibration(rec):
    """§P2/§P10: the group calibration (format 1.4, 2.2, 3.1), checked as libbellamy checks it; None
    without calibration/version. A dict: contexts, finetunings, seconds, d_ref (6 values) and cells:
    for each of the 12 cells None (no scores) or (scores ascending, their weights — 1 / the scores of
    their context in the cell —, the number of contexts in the cell)."""
    if rec.find("calibration", "version") is None:
        return None
    version = rec.get("calibration", "version", "int64")
    if version != 1:
        raise rec.fail("calibration version %d is not the one this reader reads (1): %s" % (
            version, "a newer version wrote it" if version > 1 else "the file is damaged"), "version")
    contexts = rec.get("calibration", "contexts", "int64")
    finetunings = rec.get("calibration", "finetunings", "int64")
    seconds = rec.get("calibration", "seconds", "double")
    d_ref = rec.get("calibration", "d_ref", "double array")
    cell = rec.get("calibration", "cell", "int64 array")
    group = rec.get("calibration", "group", "int64 array")
    score = rec.get("calibration", "score", "double array")
    if contexts < 0 or contexts > 0x7FFFFFFF or contexts > len(cell) or finetunings < 0 or \
            len(d_ref) != CALIB_KMAX + 1 or len(cell) != len(group) or len(cell) != len(score):
        raise rec.fail("calibration/contexts (at most one per score), finetunings, d_ref (%d values), cell, group "
                       "and score (one length) out of range" % (CALIB_KMAX + 1))
    for k, d in enumerate(d_ref):
        if not (d > 0) or not math.isfinite(d):
            raise rec.fail("calibration/d_ref[%d] is %g (a positive number expected)" % (k, d))
    for i, (c, g, s) in enumerate(zip(cell, group, score)):
        if not 0 <= c < CALIB_CELLS or not 0 <= g < contexts or not (s >= 0) or not math.isfinite(s):
            raise rec.fail("calibration entry %d (cell %d, group %d, score %g) out of range (cells 0..%d, groups "
                           "below contexts, scores finite and >= 0)" % (i, c, g, s, CALIB_CELLS - 1))
    count = {}
    for c, g in zip(cell, group):
        count[(c, g)] = count.get((c, g), 0) + 1
    cells = []
    for k in range(CALIB_CELLS):
        pairs = sorted(((float(s), 1.0 / count[(c, g)]) for c, g, s in zip(cell, group, score) if c == k),
                       key=lambda sw: sw[0])
        groups = len({g for c, g in zip(cell, group) if c == k})
        cells.append(([s for s, _ in pairs], [w for _, w in pairs], groups) if pairs else None)
    protocol = rec.get("calibration", "protocol", "int64") if rec.find("calibration", "protocol") is not None else 0
    return {"contexts": contexts, "finetunings": finetunings, "seconds": float(seconds),
            "d_ref": [float(d) for d in d_ref], "cells": cells, "protocol": protocol}


def calib_quantile(cal, cell, coverage):
    """§P10.5: the group-weighted conformal quantile of a cell at coverage: NaN for a cell without
    scores, infinity when its contexts are too few to vouch for the coverage."""
    entry = cal["cells"][cell] if 0 <= cell < CALIB_CELLS else None
    if entry is None:
        return math.nan
    scores, weights, G = entry
    need = coverage * (G + 1.0)            # of the total weight G
    if need > G * (1.0 + 1e-12):
        return math.inf
    cum = 0.0
    for s, w in zip(scores, weights):
        cum += w
        if cum >= need * (1.0 - 1e-12):
            return s
    return scores[-1]


def floor_runtime(x, raw, lo, r_lo, hi, r_hi):
    """§P9: beyond the support [lo, hi] a runtime falls no faster than linear scaling from the nearer
    end (r_lo, r_hi: the runtimes there). A NaN or infinite runtime stays so (an overflow is refused,
    never floored)."""
    if not math.isfinite(raw):
        return raw
    if x > hi and r_hi > 0 and math.isfinite(r_hi):
        f = r_hi * hi / x
        return raw if raw > f else f
    if x < lo and r_lo > 0 and math.isfinite(r_lo):
        f = r_lo * x / lo
        return raw if raw > f else f
    return raw


def stand_in(t, F):
    """§P9: a finite runtime below F (no runtime the model knows) as the positive stand-in
    F · e^max((t − F) / F, −700); any other runtime as it is."""
    if not math.isfinite(t) or t >= F:
        return t
    a = (t - F) / F
    return F * _exp(a if a > -700 else -700.0)


def _outside_by(x, lo, hi):
    """How far x lies outside [lo, hi] in ln machines (0 inside)."""
    if x < lo:
        return math.log(lo / x)
    if x > hi:
        return math.log(x / hi)
    return 0.0


def _outside(x, lo, hi):
    """(how many of the scale-outs x lie outside [lo, hi], b"17..200" or b"1 and 17..200": those below and
    above, each side as its smallest..largest or one value), as libbellamy words them in 80 bytes."""
    below = [v for v in x if v < lo]
    above = [v for v in x if v > hi]
    buf = bytearray()
    for side in (below, above):
        if not side:
            continue
        if buf:
            _put(buf, 80, " and ")
        a, b = min(side), max(side)
        _put(buf, 80, "%.10g" % a if a == b else "%.10g..%.10g" % (a, b))
    return len(below) + len(above), bytes(buf)


def _exp(v):
    try:
        return math.exp(v)
    except OverflowError:                  # C's exp gives +infinity
        return math.inf


_STRTOD_DEC_PREFIX = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_STRTOD_HEX_PREFIX = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
_STRTOD_SPECIAL_PREFIX = re.compile(r"[+-]?(?:infinity|inf|nan(?:\([0-9A-Za-z_]*\))?)", re.IGNORECASE)


def _strtod_prefix(text):
    """What C's strtod(text, NULL) returns: the number at the start of text (after blanks), 0 when
    there is none (§P10.1 compares numbers so)."""
    s = text.lstrip(" \t\n\v\f\r")
    m = _STRTOD_HEX_PREFIX.match(s)
    if m:
        sign = -1.0 if s[0] == "-" else 1.0
        body = m.group(0).lstrip("+-")
        try:
            return sign * float.fromhex(body)
        except OverflowError:
            return sign * math.inf
    m = _STRTOD_SPECIAL_PREFIX.match(s)
    if m:
        word = m.group(0).lower().lstrip("+-")
        return math.nan if word.startswith("nan") else (-math.inf if s[0] == "-" else math.inf)
    m = _STRTOD_DEC_PREFIX.match(s)
    return float(m.group(0)) if m else 0.0


GUARD_METHODS = ("network", "blend", "ernest")


def _guard(rec):
    """§P2/§P8: the group guard — (ernest_weight w, ernest_theta θ0..θ3, why); (0, zeros, "") when the
    model has none (the network alone)."""
    if rec.find("guard", "ernest_weight") is None:
        major = rec.get("", "format_major_required", "int64", required=False)   # refused unless int64, as in C
        blends = major is not None and major >= 3
        if blends or rec.find("guard", "ernest_theta") is not None or rec.find("guard", "why") is not None:
            raise rec.fail("damaged: it %s but guard/ernest_weight is missing (without it the model would predict "
                           "with its network alone); fine-tune it again or restore the file" % (
                               "blends Ernest into its predictions (format_major_required = 3)" if blends
                               else "holds part of a guard/ group"))
        return 0.0, [0.0] * 4, ""
    w = rec.get("guard", "ernest_weight", "double")
    theta = rec.get("guard", "ernest_theta", "double array")
    why = rec.get("guard", "why", "string")
    if not 0 <= w <= 1 or len(theta) != 4:
        raise rec.fail("guard/ernest_weight must lie in [0, 1] and guard/ernest_theta hold 4 values")
    for k in range(4):
        if not 0 <= theta[k] <= 1e300:
            raise rec.fail("guard/ernest_theta[%d] = %g (Ernest's terms are finite and >= 0)" % (k, theta[k]))
    return float(w), [float(t) for t in theta], why


def _seen_values(seen, i):
    """The values seen of property i, the most frequent first ([] without a seen group)."""
    return [v for p, v in seen["values"] if p == i] if seen else []


def _seen_only_value(seen, i):
    """§P3.5: the value every pre-training row had for property i (one entry, distinct = 1), or None."""
    vals = _seen_values(seen, i)
    return vals[0] if len(vals) == 1 and seen["distinct"][i] == 1 else None


def _put(buf, cap, text):
    """Appends text (UTF-8) to the bytearray buf as libbellamy's messages do in a buffer of cap bytes:
    what does not fit is cut, its last three bytes then '...'."""
    if len(buf) + 1 >= cap:
        return
    b = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)
    if len(b) >= cap - len(buf):
        buf.extend(b[:cap - 1 - len(buf)])
        if cap > 4:
            buf[cap - 4:cap - 1] = b"..."
    else:
        buf.extend(b)


def _cut(text, n):
    """C's %.Ns: the first n bytes of text's UTF-8."""
    return (text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text))[:n]


def _b(text):
    """text's bytes (str: UTF-8, undecodable command-line bytes kept), as libbellamy's messages see it."""
    return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else bytes(text)


def _as_text(value):
    """A context value as text (bytes as UTF-8)."""
    return value if isinstance(value, str) else bytes(value).decode("utf-8", "surrogateescape")


# ---- did you mean (libbellamy's src/common/suggest.c, rule for rule) -------------------------------

NAME_MAX_LEN = 255                     # the edit distance reads at most this many bytes of each word


def edit_distance(a, b):
    """The optimal-string-alignment distance of two texts (bytes or str), ASCII letters compared without
    case, each cut to 255 bytes: insertions, deletions, substitutions and swaps of neighbours cost 1."""
    a, b = _b(a)[:NAME_MAX_LEN].lower(), _b(b)[:NAME_MAX_LEN].lower()   # bytes.lower: ASCII only
    pp, p = None, list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        c = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            d = min(p[j - 1] + (a[i - 1] != b[j - 1]), p[j] + 1, c[j - 1] + 1)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d = min(d, pp[j - 2] + 1)
            c[j] = d
        pp, p = p, c
    return p[len(b)]


def _words(text):
    """The words of text (bytes), split at _ - . space and /."""
    return [w for w in re.split(rb"[-_. /]", text) if w]


def _closeness(word, cand):
    """How close cand is to word (bytes): a score, lower closer, or None when not close at all."""
    lw, lc = len(word), len(cand)
    if lw == 0 or lc == 0:
        return None
    d = edit_distance(word, cand)
    if d == 0:
        return 0
    if lw < 3:                             # a name of one or two characters is close to too much
        return None
    shorter = min(lw, lc)
    limit = 1 if shorter <= 3 else shorter // 3
    if limit < 2 and shorter > 3:
        limit = 2
    if d <= limit:
        return d
    if lw < lc and cand[:lw].lower() == word.lower():     # a prefix of three or more characters
        return 100 + (lc - lw)
    cw = {w.lower() for w in _words(cand)}
    if any(len(w) >= 3 and w.lower() in cw for w in _words(word)):    # a shared word of three or more
        return 200 + d
    return None


def suggest(word, candidates, prefix="", cap=300):
    """libbellamy's "; did you mean 'a', 'b' or 'c'?" (prefix before each name, names cut to 80 bytes):
    the closest candidates to word, at most three, each once, in the candidates' order; "" when none is
    close or the text does not fit in cap bytes."""
    w = _b(word)
    cands = [_b(c) for c in candidates]
    scores = [_closeness(w, c) for c in cands]
    found = [s for s in scores if s is not None]
    if not found:
        return ""
    best = min(found)
    picked = []
    for c, s in zip(cands, scores):
        if s == best and c not in picked:
            picked.append(c)
    total = min(len(picked), 3)
    out = b""
    for k, c in enumerate(picked[:3]):
        sep = "; did you mean " if k == 0 else " or " if k + 1 == total else ", "
        out += sep.encode() + b"'" + _b(prefix) + c[:80] + b"'"
    out += b"?"
    return out.decode("utf-8", "replace") if len(out) < cap else ""


# ---- warnings about a request (libbellamy's bl_warnings, src/api/api.c) ----------------------------

# One warning about a request, as libbellamy gives it: kind (one of WARNING_KINDS), property (its name, or
# None) and message.
RequestWarning = collections.namedtuple("RequestWarning", "kind property message")
WARNING_KINDS = ("scale_out", "unseen_value", "number_range", "left_out", "context", "protocol")
WARNING_MAX = 640                      # libbellamy's message buffer: a longer message is cut to 639 bytes


def _warning(kind, prop, msg):
    """A RequestWarning from message bytes, cut as libbellamy's buffer cuts it."""
    return RequestWarning(kind, prop, _b(msg)[:WARNING_MAX - 1].decode("utf-8", "replace"))


def _selu(x):
    """§P5: λx for x > 0, λα(eˣ − 1) otherwise; in x's precision (float32 constants for float32 x)."""
    t = np.float32 if getattr(x, "dtype", None) == np.float32 else float
    lam, lam_alpha = t(SELU_LAMBDA), t(SELU_LAMBDA * SELU_ALPHA)
    return np.where(x > 0, lam * x, lam_alpha * np.expm1(np.minimum(x, t(0))))


class Property:
    """One property of a model: name, essential (else optional), number (else text), cluster_total,
    default (the value the model fills in when a context leaves the property out, or None) and
    default_from ('schema': a const or per_machine source of the stored schema; 'seen': the one value
    every pre-training row had; 'finetune': the context of the runs a model was fine-tuned on; None)."""

    def __init__(self, name, essential, number, cluster_total=False, default=None, default_from=None):
        self.name, self.essential, self.number, self.cluster_total = name, essential, number, cluster_total
        self.default, self.default_from = default, default_from

    def __repr__(self):
        return "Property(%r, essential=%r, number=%r, cluster_total=%r, default=%r, default_from=%r)" % (
            self.name, self.essential, self.number, self.cluster_total, self.default, self.default_from)


class Model:
    """A model read from a file; predicting is all it does. Attributes: path, name, properties,
    members (a list of dicts of numpy blocks), precision ('f64' or 'f32': what the networks compute in,
    numpy's float32 for 'f32'), dims, enc (encoder settings), scaler_lo/hi,
    target_scaling, target_scale, number_bounds (numbers = range), schema_text, seen (the group seen
    as a dict, or None), tuned (the group finetune as a dict, or None: never fine-tuned), calibration
    (the group calibration as a dict, or None: no intervals), method ('network', 'blend' or 'ernest'),
    ernest_weight, ernest_theta, method_why (the guard's reason, "" without one), note (None, or why
    the file was read unverified), unstamped (the file has no checksum header and was read because
    that was allowed). predict() gives runtimes, predict_interval() runtimes with intervals."""

    @classmethod
    def load(cls, path, name=None, ignore_checksum=None, allow_unstamped=None):
        """Reads model `name` of the file (None: the file's only model). ignore_checksum None follows
        BELLAMY_MODEL_IGNORE_CHECKSUM=1 like libbellamy; True reads a file whose checksum mismatches.
        allow_unstamped None follows BELLAMY_MODEL_ALLOW_UNSTAMPED=1; True reads a file without a
        checksum header (refused otherwise)."""
        try:
            f, note, unstamped = _open_h5(path, ignore_checksum, allow_unstamped)
            with f:
                return cls._load_open(f, path, name, note, unstamped)
        except BellamyError:
            raise
        except (OSError, KeyError, RuntimeError, ValueError, TypeError, IndexError) as e:
            # h5py's own errors on a damaged file (read with the checksum ignored): one line naming it
            raise BellamyError("%s: damaged file: %s" % (path, (str(e) or type(e).__name__).split("\n")[0]))

    @classmethod
    def _load_open(cls, f, path, name, note, unstamped):
        models = _model_names(f)
        present = ", ".join("'%s'" % n for n in models) if models else "none"
        if name is None:
            if len(models) != 1:
                raise BellamyError("%s: %s; name the model with --name (models present: %s)" % (
                    path, "the file holds several models" if models else "the file holds no model", present),
                    "invalid" if models else "notfound")
            name = models[0]
        elif name not in models:
            raise BellamyError("%s: no model '%s' (models present: %s)" % (path, name, present), "notfound")
        g = _hard(f["models"], name)
        if not isinstance(g, h5py.Group):
            raise BellamyError("%s: /models/%s is not a group" % (path, name))
        m = cls()
        m.path, m.name, m.note, m.unstamped = path, name, note, unstamped
        m._read(_Record(path, name, g))
        return m

    def _read(self, rec):
        """§P2: every attribute and block a prediction reads, checked as libbellamy checks them."""
        precision = _precision(rec)
        blocks = _weight_datasets(rec, precision)
        major = rec.find("", "format_major_required")
        if major and major[0] == "int64" and major[1] > MAJOR_MAX:
            raise rec.fail("needs format major %d (this reader knows %d.x to %d.x); use a newer bellamy_model.py"
                           % (major[1], MAJOR_MIN, MAJOR_MAX), "version")
        dims = {dn: rec.get_int("network", dn, 1 if i < 7 else 0, DIM_MAX if i < 7 else PROPS_MAX)
                for i, dn in enumerate(DIM_NAMES)}
        enc = _encoder_settings(rec)
        if dims["vec_len"] != enc["vec_len"]:
            raise rec.fail("network/vec_len %d differs from encoder/vec_len %d" % (dims["vec_len"], enc["vec_len"]))
        if dims["f_in"] != 3:
            raise rec.fail("network/f_in = %d: the scale-out features are 3 ([1/x, ln x, x])" % dims["f_in"])
        props = _schema_properties(rec, dims)
        schema_text = rec.get("schema", "text", "string")
        self.number_bounds = _number_bounds(rec, props) if enc["numbers"] == "range" else None
        members = _members(rec, dims, blocks)

        lo = rec.get("scaler", "min", "double array")
        hi = rec.get("scaler", "max", "double array")
        if len(lo) != 3 or len(hi) != 3:
            raise rec.fail("scaler/min and scaler/max must hold 3 values")
        for k in range(3):
            if not (math.isfinite(lo[k]) and math.isfinite(hi[k]) and lo[k] <= hi[k]):
                raise rec.fail("scaler/min, scaler/max [%d] = %g, %g (finite, min <= max expected)" % (k, lo[k], hi[k]))
        scaling = rec.get("target", "scaling", "string")
        if scaling not in ("seconds", "mean", "log"):
            raise rec.fail("target/scaling '%s' (expected seconds, mean or log)" % scaling)
        scale = rec.get("target", "scale", "double")
        if not (scale > 0) or scale > 1e300:
            raise rec.fail("target/scale must be a positive number")
        for hp in ("dropout", "learning_rate", "weight_decay"):   # unused here, required all the same
            rec.get("hyperparameters", hp, "double")
        seen = _seen(rec, len(props))
        tuned = _check_finetune(rec, len(props), len(members))
        calibration = _calibration(rec)
        w, theta, why = _guard(rec)

        if schema_text:                   # §P3.2, §P3.5: cluster totals and constants, from the stored schema
            try:
                total_names, constants = stored_schema(schema_text)
            except _SchemaError as e:
                raise rec.fail(str(e))
            for p in props:
                p.cluster_total = p.number and p.name in total_names
                if p.name in constants:
                    p.default, p.default_from = constants[p.name], "schema"
        for i, p in enumerate(props):     # §P3.5: an optional property every pre-training row had one value of
            only = _seen_only_value(seen, i)
            if p.default is None and not p.essential and only is not None:
                p.default, p.default_from = only, "seen"
        if tuned is not None and tuned["contexts"] == 1:   # §P3.5.3: fine-tuned on one context: its values
            for i, p in enumerate(props):
                tv = tuned["context"][i]
                if p.default is not None and tv and tv != p.default:
                    p.default, p.default_from = tv, "finetune"

        self.dims, self.enc, self.properties, self.members = dims, enc, props, members
        self.precision = precision
        self.dtype = np.float32 if precision == "f32" else np.float64   # §P5: what the networks compute in
        self.scaler_lo, self.scaler_hi = np.array(lo, dtype=np.float64), np.array(hi, dtype=np.float64)
        self.target_scaling, self.target_scale = scaling, float(scale)
        self.schema_text = schema_text
        self.seen, self.tuned, self.calibration = seen, tuned, calibration
        self.ernest_weight, self.ernest_theta, self.method_why = w, theta, why
        self.method = GUARD_METHODS[0 if w <= 0 else 2 if w >= 1 else 1]

    # ---- §P3 the context ----------------------------------------------------------------------

    def _resolve(self, context, info=None):
        """Checks the (name, value) pairs and completes them (§P3); returns (values by property index or
        None, per-machine values of cluster totals that grow with the scale-out). info (a dict, optional)
        receives 'filled' (the indices the model filled) and 'left_out' (§P11's warnings of kind left_out)."""
        pairs = list(context.items()) if isinstance(context, dict) else list(context)
        vals = [None] * len(self.properties)
        index = {p.name: i for i, p in enumerate(self.properties)}
        for j, (pn, value) in enumerate(pairs):
            if not pn:
                raise BellamyError("context value %d has no property name" % j, "invalid")
            if pn not in index:
                names = [p.name for p in self.properties]
                listed = _b(", ".join(names))[:399]         # libbellamy lists them in 400 bytes
                msg = b"unknown property '" + _cut(pn, 80) + b"'" + _b(suggest(pn, names)) + b" (model '" + \
                    _cut(self.name, 60) + b"' has: " + listed + b")"
                raise BellamyError(msg[:511].decode("utf-8", "replace"), "invalid")
            k = index[pn]
            if value is None:
                raise BellamyError("property '%s' has no value" % _cut(pn, 80).decode("utf-8", "replace"), "invalid")
            if vals[k] is not None:
                raise BellamyError("property '%s' is given twice" % _cut(pn, 80).decode("utf-8", "replace"), "invalid")
            vals[k] = value
        filled, left = set(), []
        for i, p in enumerate(self.properties):   # §P3.5: left out, filled from what the model knows
            if vals[i] is None and p.default is not None:
                vals[i] = p.default
                filled.add(i)
            elif vals[i] is None and not p.essential and self.seen:    # §P11.1: left out, nothing fills it
                left.append(_warning("left_out", p.name, b"optional property '" + _cut(p.name, 80) +
                                     b"' is left out, but every pre-training row had it (" +
                                     self._seen_brief(i, 3, 200) + b"): the prediction then rests on the other "
                                     b"properties alone; give its value"))
        if info is not None:
            info["filled"], info["left_out"] = filled, left
        missing = [i for i, p in enumerate(self.properties) if vals[i] is None and p.essential]
        if missing:
            raise BellamyError(self._missing_message(missing), "invalid")
        per_machine = {}
        for k, p in enumerate(self.properties):   # §P3.3: cluster totals, given or filled, are per machine
            value = vals[k]
            if not p.cluster_total or value is None:
                continue
            d = _strtod_whole(value) if isinstance(value, str) else None
            too_large = d is not None and d >= 9007199254740992.0
            if value == "" or d is None or not d >= 0 or too_large or d != math.floor(d):
                raise BellamyError("property '%s' is a number per machine: '%s' is %s" % (
                    p.name, _cut(value, 40).decode("utf-8", "replace"),
                    "too large (below 2^53 expected)" if too_large else "not a natural number"), "format")
            if not self.enc["totals_per_machine"]:
                per_machine[k] = d
        return vals, per_machine

    def _seen_brief(self, i, most, cap):
        """What property i's pre-training rows held, as libbellamy words it in a message (bytes):
        "50..200" (a number's range; " per machine" for a cluster total) or "'a', 'b', ... (N values)";
        b"" without a seen group."""
        buf, seen = bytearray(), self.seen
        if not seen:
            return bytes(buf)
        lo, hi = seen["number_min"][i], seen["number_max"][i]
        if self.properties[i].number and math.isfinite(lo):
            _put(buf, cap, "%.17g" % lo if lo == hi else "%.17g..%.17g" % (lo, hi))
            if seen["per_machine"][i]:
                _put(buf, cap, " per machine")
            return bytes(buf)
        for k, v in enumerate(_seen_values(seen, i)[:most]):
            _put(buf, cap, (b", " if k else b"") + b"'" + _cut(v, 40) + b"'")
        if seen["distinct"][i] > most:
            _put(buf, cap, ", ... (%d values)" % seen["distinct"][i])
        return bytes(buf)

    def _missing_message(self, missing):
        """libbellamy's one message naming every essential property a context leaves out (§P3.1)."""
        cap, buf = 512, bytearray()
        one = len(missing) == 1
        _put(buf, cap, "essential property " if one else "%d essential properties are missing: " % len(missing))
        for n, i in enumerate(missing):
            _put(buf, cap, (b", " if n else b"") + b"'" + _cut(self.properties[i].name, 60) + b"'" +
                 (b" is missing" if one else b""))
            brief = self._seen_brief(i, 2, 160)
            if brief:
                _put(buf, cap, b" (seen in training: " + brief + b")")
        return bytes(buf).decode("utf-8", "replace")

    def member_numbers(self, mi):
        """§P4.6: the number encoding member mi reads: enc numbers, or with 'both' binary for even
        members and log for odd ones."""
        e = self.enc["numbers"]
        return ("log" if mi & 1 else "binary") if e == "both" else e

    def _vector(self, i, value, mi):
        """§P4: the vector of property i's value as member mi reads it."""
        p = self.properties[i]
        vl = self.enc["vec_len"]
        try:
            b = _utf8_bytes(value)
        except ValueError as e:
            raise BellamyError("property '%s': %s" % (p.name, e), "format")
        if not p.number:
            return encode_text(b, self.enc)
        try:
            v = parse_natural(b.decode("utf-8"), vl)
        except ValueError as e:
            raise BellamyError("property '%s' is a number: %s" % (p.name, e), "format")
        e = self.member_numbers(mi)
        if e == "binary":
            return encode_binary(v, vl)
        return encode_thermometer(v, vl, self.number_bounds[i] if e == "range" else None)

    def context_terms(self, values):
        """§P5.2: each member's constant part of z's first pre-activation, [members][z_hidden]."""
        d = self.dims
        if d["code"] > CODE_MAX:
            raise BellamyError("code size %d unsupported" % d["code"], "invalid")
        FO, C, ne = d["f_out"], d["code"], d["n_essential"]
        for i, v in enumerate(values):          # every value is checked before any member runs
            if v is not None:
                self._vector(i, v, 0)
        terms = []
        for mi, net in enumerate(self.members):
            W = net["z.0.weight"]
            ctx = net["z.0.bias"].copy()
            opt = []
            for i, v in enumerate(values):
                if v is None:
                    continue
                vec = self._vector(i, v, mi).astype(self.dtype)
                code = _selu(net["g.3.weight"] @ _selu(net["g.0.weight"] @ vec))
                if self.properties[i].essential:      # essential ones come first: i is j of §P5.2
                    ctx = ctx + W[:, FO + C * i:FO + C * (i + 1)] @ code
                else:
                    opt.append(code)
            if opt:                               # §P5.2: no optional value, no term
                mean = np.zeros(C, dtype=self.dtype)
                for code in opt:
                    mean = mean + code
                mean = mean / len(opt)
                ctx = ctx + W[:, FO + C * ne:FO + C * ne + C] @ mean
            terms.append(ctx)
        return terms

    def _outputs(self, terms, x):
        """§P5.3–§P8: runtimes in seconds at scale-outs x (numpy array) for context terms."""
        with np.errstate(all="ignore"):   # a scale-out far outside the training range: inf or NaN (§P9)
            return self._outputs_raw(terms, x)

    def _outputs_raw(self, terms, x):
        feat = np.stack([1.0 / x, np.log(x), x], axis=1)
        rng = self.scaler_hi - self.scaler_lo
        rng = np.where(rng > 0.0, rng, 1.0)
        s = ((feat - self.scaler_lo) / rng).astype(self.dtype)   # f32: rounded where it enters the network
        FO = self.dims["f_out"]
        outs = []
        for net, ctx in zip(self.members, terms):
            h = _selu(s @ net["f.0.weight"].T + net["f.0.bias"])
            F = _selu(h @ net["f.2.weight"].T + net["f.2.bias"])
            hid = _selu(F @ net["z.0.weight"][:, :FO].T + ctx)
            outs.append(_selu(hid @ net["z.2.weight"][0] + net["z.2.bias"][0]))
        y = np.stack(outs).astype(np.float64)     # [members][n]; f32: each output widened exactly
        K = len(outs)
        srt = np.sort(y, axis=0)
        med = srt[K // 2] if K % 2 else 0.5 * (srt[K // 2 - 1] + srt[K // 2])
        med = np.where(np.isnan(y).any(axis=0), np.nan, med)
        if self.target_scaling == "log":
            t = self.target_scale * np.exp(med)
        else:
            t = med * self.target_scale
        w = self.ernest_weight
        if w > 0:                                 # §P8: the guard's blend, after the target scaling
            th = self.ernest_theta
            e = np.array([th[0] + th[1] / xi + th[2] * math.log(xi) + th[3] * xi for xi in x])
            # Ernest alone at weight 1, whatever the network says (0 · inf would be NaN), as libbellamy
            t = e if w >= 1 else (1.0 - w) * t + w * e
        return t

    def predict(self, context, scale_outs, warnings=None):
        """Runtimes in seconds (a list of floats, each > 0) at each scale-out for a context: a dict or
        (name, value) pairs of text values; essential properties required unless the model fills them
        (a property's default), optional ones as available, cluster totals given per machine. Raises
        BellamyError (its message says what to change). warnings (a list, optional) is emptied and
        receives libbellamy's warnings about the request (§P11), RequestWarning(kind, property, message)
        each; it stays empty when the request is refused."""
        return self._predict(context, scale_outs, warnings)[0]

    def review(self, context, scale_outs):
        """The warnings about a request (§P11) without predicting (libbellamy's bl_predictor_review): a
        list of RequestWarning, the stand-ins' left out (they need the runtimes). Raises BellamyError for
        a request predict() refuses for its context or scale-outs."""
        x = self._scale_outs(scale_outs)
        info = {}
        vals, per_machine = self._resolve(context, info)
        self._check_fixed(vals, per_machine)
        at = list(vals)
        for k, d in per_machine.items():          # the context at one machine, as libbellamy checks it
            at[k] = "%.0f" % float(np.rint(d))
        self.context_terms(at)
        return self._review(info, vals, x, None)

    # ---- §P9 the support and the floor ------------------------------------------------------------

    def pre_range(self):
        """The pre-training's scale-outs (lo, hi): seen/scale_out_min and max, else the scaler's bounds
        of the feature x (§P9)."""
        if self.seen:
            return self.seen["scale_out_min"], self.seen["scale_out_max"]
        return float(self.scaler_lo[2]), float(self.scaler_hi[2])

    def support(self):
        """§P9: the scale-outs (L, H) the model and its runs know, the pre-training's and the last
        fine-tuning's together."""
        lo, hi = self.pre_range()
        if self.tuned:
            if not self.tuned["scale_out_min"] >= lo:
                lo = self.tuned["scale_out_min"]
            if not self.tuned["scale_out_max"] <= hi:
                hi = self.tuned["scale_out_max"]
        return lo, hi

    def runtime_floor(self):
        """§P9: F, 1 % of the least runtime the model knows (seen/runtime_min_s, finetune/runtime_min_s),
        1e-3 s with neither: a runtime below it is a stand-in."""
        r = math.inf
        if self.seen and self.seen["runtime_min_s"] > 0:
            r = self.seen["runtime_min_s"]
        if self.tuned and self.tuned["runtime_min_s"] > 0 and self.tuned["runtime_min_s"] < r:
            r = self.tuned["runtime_min_s"]
        return 0.01 * r if math.isfinite(r) else 1e-3

    def _check_fixed(self, vals, per_machine):
        """§P3.4: the values that do not vary with the scale-out (all but the cluster totals given per
        machine) are encoded once, before any scale-out: a refusal of one names no scale-out."""
        if self.dims["code"] > CODE_MAX:
            raise BellamyError("code size %d unsupported" % self.dims["code"], "invalid")
        for i, v in enumerate(vals):
            if v is not None and i not in per_machine:
                self._vector(i, v, 0)

    def _runtime_at(self, vals, per_machine, xi, terms=None):
        """§P1–§P8 at one scale-out (cluster totals × xi); terms: the context's, when no total scales."""
        if per_machine:
            at = list(vals)
            for k, d in per_machine.items():       # rint: half to even, as C's nearbyint; inf stays
                at[k] = "%.0f" % float(np.rint(d * xi))
            terms = self.context_terms(at)
        return float(self._outputs(terms, np.array([xi]))[0])

    @staticmethod
    def _scale_outs(scale_outs):
        x = [float(v) for v in scale_outs]
        for v in x:
            if not math.isfinite(v) or not v > 0:
                raise BellamyError("scale-out %g is not a positive number" % v, "range")
        return x

    def _predict(self, context, scale_outs, warnings=None):
        """predict(), and the context's values (by property index) for the interval's mismatch rule;
        warnings (a list or None) receives §P11's warnings once the request succeeds."""
        if warnings is not None:
            del warnings[:]
        x = self._scale_outs(scale_outs)
        info = {}
        vals, per_machine = self._resolve(context, info)
        terms = None
        if not per_machine:                       # every value is encoded, also for no scale-out at all
            terms = self.context_terms(vals)
        else:
            self._check_fixed(vals, per_machine)
        if not x:
            if warnings is not None:
                warnings.extend(self._review(info, vals, x, []))
            return [], vals
        if not per_machine:
            out = [float(t) for t in self._outputs(terms, np.array(x))]
        else:                                     # §P3.3: totals = per machine × scale-out
            out = []
            for xi in x:
                try:
                    out.append(self._runtime_at(vals, per_machine, xi))
                except BellamyError as e:
                    raise BellamyError("at scale-out %g (cluster totals are the per-machine values × %g): %s"
                                       % (xi, xi, e), e.kind)
        lo, hi = self.support()                   # §P9: beyond the support, no faster than linear scaling
        F = self.runtime_floor()
        if any(xi < lo or xi > hi for xi in x):
            r_lo = self._runtime_at(vals, per_machine, lo, terms)
            r_hi = self._runtime_at(vals, per_machine, hi, terms)
            r_lo, r_hi = (r if r >= F else math.nan for r in (r_lo, r_hi))    # an end below F gives no bound
            out = [floor_runtime(xi, t, lo, r_lo, hi, r_hi) for xi, t in zip(x, out)]
        out = [stand_in(t, F) for t in out]       # below F: a positive stand-in
        for xi, t in zip(x, out):              # §P9: NaN, infinity and t <= 0 are not runtimes
            if not math.isfinite(t) or not t > 0:
                what = "not a number" if math.isnan(t) else "infinite" if math.isinf(t) else "not positive"
                raise BellamyError("scale-out %g: the model's prediction is %s (the scale-out is too far outside "
                                   "the range it was trained on, or the model is damaged)" % (xi, what), "range")
        if warnings is not None:
            warnings.extend(self._review(info, vals, x, out))
        return out, vals

    # ---- §P11 warnings about a request ------------------------------------------------------------

    def _review(self, info, vals, x, runtimes):
        """§P11: the warnings about a request that succeeded, in libbellamy's order: left-out optional
        properties, stand-ins (runtimes None: not predicted), values never seen, the fine-tuning's
        options and context, scale-outs outside the ranges."""
        out = list(info["left_out"])
        F = self.runtime_floor()
        low = [xi for xi, t in zip(x, runtimes or []) if math.isfinite(t) and t < F]
        if low:                                   # §P11.2: stand-ins, the runtime unknown there
            a, b = min(low), max(low)
            where = "scale-out %.10g" % a if a == b else "%d scale-outs in %.10g..%.10g" % (len(low), a, b)
            out.append(_warning("scale_out", None, "%s: the model predicts no runtime it knows (its output falls "
                                "below %.3g s, 1 %% of the least runtime it was trained or fine-tuned on): the value "
                                "shown is a positive stand-in, the runtime is unknown there, never chosen; fine-tune "
                                "on runs nearer those scale-outs" % (where, F)))
        out.extend(self._review_values(vals, info["filled"]))
        out.extend(self._review_context(vals))
        out.extend(self._review_scale_outs(x))
        return out

    def _review_values(self, vals, filled):
        """§P11.3: the values given (not filled) that no pre-training row had: text never seen (the
        closest seen named), numbers outside the range seen; the fine-tuning runs' value counts as seen."""
        seen, out = self.seen, []
        if not seen:
            return out
        for i, p in enumerate(self.properties):
            v = vals[i]
            if v is None or i in filled:
                continue
            tuned = self.tuned["context"][i] if self.tuned else None
            vb, name = _b(v), _cut(p.name, 80)
            if p.number:
                xv = _strtod_prefix(_as_text(v))
                lo, hi = seen["number_min"][i], seen["number_max"][i]
                if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= xv <= hi:
                    continue
                if tuned and _strtod_prefix(tuned) == xv:
                    continue
                unit = b" per machine" if seen["per_machine"][i] else b""
                out.append(_warning("number_range", p.name, name + b" " + vb[:40] + unit +
                                    b" lies outside the values the pre-training rows had (" +
                                    _b("%.17g..%.17g" % (lo, hi)) + unit + b"): the prediction extrapolates; fine-tune "
                                    b"on runs of this context (their runs bring the value in)"))
                continue
            known = [_b(sv) for sv in _seen_values(seen, i)]
            if (tuned is not None and _b(tuned) == vb) or vb in known or seen["distinct"][i] > len(known):
                continue                          # seen, or not every value kept: cannot tell
            near = sorted(range(len(known)), key=lambda k: edit_distance(vb, known[k]))[:3]   # ties: the more frequent
            close = bytearray()
            for n, k in enumerate(near):
                _put(close, 300, (b", " if n else b"") + b"'" + known[k][:60] + b"'")
            d = seen["distinct"][i]
            out.append(_warning("unseen_value", p.name, name + b" '" + vb[:60] + b"' is a value no pre-training row "
                                b"had (closest seen: " + (bytes(close) if near else b"none") +
                                _b("; %d value%s in all): the model reads it by its characters alone; check the "
                                   "spelling, or fine-tune on runs of this context" % (d, "" if d == 1 else "s"))))
        return out

    def _context_diff(self, vals):
        """§P10.1 with the words of §P11.5: (how many properties differ from the fine-tuned context,
        "name value (runs: value), ..." as libbellamy writes it in 400 bytes)."""
        buf, k = bytearray(), 0
        for i in self.context_differs(vals):
            p = self.properties[i]
            _put(buf, 400, (b", " if k else b"") + _cut(p.name, 60) + b" " + _cut(vals[i], 40) +
                 (b" per machine" if p.cluster_total else b"") + b" (runs: " + _cut(self.tuned["context"][i], 40) +
                 b")")
            k += 1
        return k, bytes(buf)

    def _review_context(self, vals):
        """§P11.4 and §P11.5: a fine-tuning by other options than the calibration's, and a request of
        another context than the fine-tuned one."""
        out = []
        cal, tuned = self.calibration, self.tuned
        if cal and tuned and cal["protocol"] and tuned["protocol"] and cal["protocol"] != tuned["protocol"]:
            out.append(_warning("protocol", None, "the model was fine-tuned with other options than those its "
                                "intervals were calibrated for (e.g. another stopping rule, learning rates, or the "
                                "guard off): the intervals assume the calibrated fine-tuning; fine-tune with the "
                                "defaults for intervals that hold"))
        k, diff = self._context_diff(vals)
        if k:
            runs = tuned["runs"]
            out.append(_warning("context", None, _b("the model was fine-tuned on %d run%s of another context (" % (
                runs, "" if runs == 1 else "s")) + diff + b"): for this context no run of its own informs the "
                b"prediction, which rests on the pre-trained network as that fine-tuning moved it, and its interval is "
                b"sized as a pre-trained model's on an unseen context, doubled; fine-tune on runs of this context, or "
                b"predict with the pre-trained model"))
        return out

    def _review_scale_outs(self, x):
        """§P11.6: the scale-outs outside the pre-training's range and the fine-tuning runs', one warning."""
        if not x:
            return []
        lo, hi = self.pre_range()
        k_pre, pre = _outside(x, lo, hi) if math.isfinite(lo) and math.isfinite(hi) and lo > 0 else (0, b"")
        t = self.tuned
        k_ft, ft = _outside(x, t["scale_out_min"], t["scale_out_max"]) if t else (0, b"")
        if not k_pre and not k_ft:
            return []
        msg = bytearray()
        if k_pre:
            _put(msg, 600, _b("%s " % ("scale-out" if k_pre == 1 else "scale-outs")) + pre +
                 _b(" %s outside the range of scale-outs the model was pre-trained on (%.10g..%.10g)" % (
                     "lies" if k_pre == 1 else "lie", lo, hi)))
        if k_ft:
            a, b = t["scale_out_min"], t["scale_out_max"]
            rg = "%.10g only" % a if a == b else "%.10g..%.10g" % (a, b)
            _put(msg, 600, _b("%s%s " % ("; " if k_pre else "", "scale-out" if k_ft == 1 else "scale-outs")) + ft +
                 _b(" %s outside the range of the %d run%s it was fine-tuned on (%s)" % (
                     "lies" if k_ft == 1 else "lie", t["runs"], "" if t["runs"] == 1 else "s", rg)))
        _put(msg, 600, ": predictions there extrapolate; %s" % (
            "fine-tune on runs that bracket the scale-outs you consider" if k_ft else
            "consider scale-outs inside that range, or fine-tune on runs at the scale-outs you consider"))
        return [_warning("scale_out", None, bytes(msg))]

    # ---- §P10 the interval ------------------------------------------------------------------------

    def context_differs(self, vals):
        """§P10.1: the indices of the properties in which a context's values (by property index, given
        or filled; None: left out) differ from the one the model was fine-tuned for (a value its runs
        all shared): numbers as numbers (as C's strtod reads them), text byte for byte."""
        if not self.tuned:
            return []
        out = []
        for i, p in enumerate(self.properties):
            t, v = self.tuned["context"][i], vals[i]
            if not t or v is None:
                continue
            if p.number:
                same = _strtod_prefix(t) == _strtod_prefix(v if isinstance(v, str) else bytes(v).decode("utf-8"))
            else:
                same = t.encode("utf-8", "surrogateescape") == _utf8_bytes(v)
            if not same:
                out.append(i)
        return out

    def interval_basis(self, mismatch=False):
        """§P10.2: (k, factor) — the runs the interval is sized for and its widening. Not fine-tuned:
        (0, 1); a fine-tuned model asked about another context (mismatch): (0, 1 + w) read from the cell of
        other contexts, or (0, 2 · (1 + w)) where the calibration has none (cell 0 then)."""
        if not self.tuned:
            return 0, 1.0
        w = self.ernest_weight if self.ernest_weight > 0 else 0.0
        if mismatch:
            other = self.calibration is not None and self.calibration["cells"][CALIB_CELL_OTHER] is not None
            return 0, (1.0 if other else 2.0) * (1.0 + w)
        fx = self.tuned["fit_scale_out"]
        if fx:
            k = len(set(fx))
        else:
            runs = self.tuned["runs"]
            k = min(runs, 1000) if runs > 0 else 0
        k = min(k, CALIB_KMAX)
        D = self.tuned["disagreement"]
        D = D if D > 0 else 0.0                  # +inf: a fit that failed its runs (unbounded)
        d = self.calibration["d_ref"][k] if self.calibration and 0 <= k <= CALIB_KMAX else 0.0
        d_ref = d if d > CALIB_DREF_MIN else CALIB_DREF_MIN
        if self.tuned.get("held_out"):           # D is the held-out error: no w (nor d_pre, below)
            return k, 1.0 + D / d_ref
        return k, (1.0 + w) * (1.0 + D / d_ref)

    def _no_calibration(self):
        return BellamyError("model '%s' carries no calibration (pre-trained before libbellamy 0.6, or with "
                            "calibration off): intervals are unavailable; pre-train it again to get them"
                            % self.name, "unsupported")

    def intervals(self, scale_outs, runtimes, coverage, k, factor, mismatch=False, why=None):
        """§P10.3–6: (lo, hi) lists around runtimes at scale_outs for a basis (k, factor); unbounded:
        lo 0, hi infinity. why (a list, optional) is emptied and receives each interval's reason, one of
        INTERVAL_WHY ('bounded'; unbounded: 'beyond' 4 × the support, a 'stand_in', 'too_few' contexts
        vouch for the coverage, 'too_wide'), in libbellamy's order of precedence."""
        if why is not None:
            del why[:]
        cal = self.calibration
        if cal is None:
            raise self._no_calibration()
        slo, shi = self.support()
        plo, phi = self.pre_range()
        F = self.runtime_floor()
        rlo = self.tuned["scale_out_min"] if self.tuned else math.nan
        rhi = self.tuned["scale_out_max"] if self.tuned else math.nan
        los, his = [], []
        for xi, p in zip(scale_outs, runtimes):
            los.append(0.0)
            his.append(math.inf)
            if why is not None:
                why.append("beyond")
            if xi < slo / CALIB_SUPPORT or xi > shi * CALIB_SUPPORT or not (xi > 0):     # unknown there
                continue
            if why is not None:
                why[-1] = "stand_in"
            if not (p >= F) or not math.isfinite(p):    # a stand-in: unknown there
                continue
            if why is not None:
                why[-1] = "too_few"
            cell = 0 if k <= 0 else 3 if k == 1 else 2 * k if rlo < xi < rhi else 2 * k + 1
            inside = cell % 2 == 0 and k >= 2
            q = math.inf
            other = mismatch and cal["cells"][CALIB_CELL_OTHER] is not None
            if other:                            # another context: its own cell, no fallback
                q = calib_quantile(cal, CALIB_CELL_OTHER, coverage)
                q = math.inf if math.isnan(q) else q
            for kk in (range(k, -1, -1) if not other else ()):   # a cell without scores: fewer runs, the same side
                c = calib_quantile(cal, 0 if kk == 0 else 3 if kk == 1 else 2 * kk + (0 if inside else 1), coverage)
                if not math.isnan(c):
                    q = c
                    break
            if not math.isfinite(q):
                continue
            if why is not None:
                why[-1] = "too_wide"
            held = bool(self.tuned and self.tuned.get("held_out")) and not mismatch
            d = (_outside_by(xi, rlo, rhi) if k >= 1 else 0.0) + (0.0 if held else _outside_by(xi, plo, phi))
            h = q * (1.0 + d / LN2) * factor if not (q == 0 and math.isinf(factor)) else math.nan
            if not (h <= CALIB_HMAX):            # wider than a factor 100 either way: unbounded
                continue
            lo, hi = p * _exp(-h), p * _exp(h)
            if not (hi <= RUNTIME_MAX_S):
                continue
            los[-1], his[-1] = lo, hi
            if why is not None:
                why[-1] = "bounded"
        return los, his

    def predict_interval(self, context, scale_outs, coverage=0.9, warnings=None, why=None):
        """(lo, runtimes, hi): three lists, runtimes as predict() gives them and [lo, hi] the interval
        meant to hold a run's runtime with probability coverage (0 < coverage < 1), calibrated at
        pre-training (§P10); an unbounded one is lo 0, hi math.inf. Raises BellamyError (kind
        'unsupported') for a model without calibration, 'invalid' for a coverage outside (0, 1).
        warnings (a list, optional) receives the request's warnings as in predict(); why (a list,
        optional) each interval's reason as in intervals()."""
        for lst in (warnings, why):
            if lst is not None:
                del lst[:]
        coverage = float(coverage)
        if not (0 < coverage < 1):
            raise BellamyError("coverage %g: must lie strictly between 0 and 1 (e.g. 0.9 for a 90 %% interval)"
                               % coverage, "invalid")
        if self.calibration is None:
            raise self._no_calibration()
        x = [float(v) for v in scale_outs]
        t, vals = self._predict(context, x, warnings)
        mismatch = bool(self.context_differs(vals))
        k, factor = self.interval_basis(mismatch)
        lo, hi = self.intervals(x, t, coverage, k, factor, mismatch, why)
        return lo, t, hi


# ---- the command line -----------------------------------------------------------------------------

class _Usage(Exception):
    pass


USAGE = ("usage: bellamy_model.py --model MODEL.h5 [--name NAME] --set PROP=VALUE ... --scale-out A..B|N|N,M,...\n"
         "                        [--coverage C] [--json] [--ignore-checksum] [--allow-unstamped]\n"
         "       bellamy_model.py --model MODEL.h5 --list\n"
         "       bellamy_model.py --help")

HELP = USAGE + """

Predicts a job's runtime at each scale-out from a Bellamy model file, as libbellamy does
(models/README.md is the specification this program follows). Prints "scale_out<TAB>runtime_s<TAB>
lo_runtime_s<TAB>hi_runtime_s" lines, the interval at --coverage (hi inf where it is unbounded), for a
model with calibration, and "scale_out<TAB>runtime_s" lines (and a note on stderr) for one without; a
model whose fine-tuning blends Ernest into its predictions says so on stderr. Warnings about the request
(a value no pre-training row had, a number outside the range seen, an optional property left out, scale-outs
outside the ranges the model knows, another context than the fine-tuned one) go to stderr as
"bellamy_model.py: warning: ...", in libbellamy's words (those of bellamy-predict).

options:
  --model MODEL.h5      model file (required)
  --name NAME           model inside the file (default: the file's only model)
  --set PROP=VALUE      a property of the job's context; every essential one is needed unless the model
                        fills it (cluster totals per machine); repeat for each property
  --scale-out SPEC      whole numbers of machines: a range A..B, one value N, or a list N,M,...
  --coverage C          coverage of the intervals, strictly between 0 and 1 (default 0.9); given, a
                        model without calibration is an error instead of runtimes without intervals
  --json                write one JSON object instead of the lines: bellamy-predict --json's fields but
                        its choice (model, context, context_from, method, interval, predictions, warnings)
  --ignore-checksum     read a file whose checksum header does not match (also BELLAMY_MODEL_IGNORE_CHECKSUM=1)
  --allow-unstamped     read a file without a checksum header (also BELLAMY_MODEL_ALLOW_UNSTAMPED=1)
  --list                print the names of the file's models, one a line
  --help                show this help and exit
exit status: 0 ok, 1 failure, 2 usage error"""


VALUED = ("--model", "--name", "--set", "--scale-out", "--coverage")
FLAGS = ("--json", "--ignore-checksum", "--allow-unstamped", "--list")


def _parse_args(argv):
    opts = {"set": []}
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--help", "-h"):
            opts["help"] = True
            i += 1
            continue
        if a in FLAGS:
            opts[a[2:]] = True
            i += 1
            continue
        key, eq, val = a.partition("=")
        if key in FLAGS:
            raise _Usage("%s takes no value" % key)
        if key not in VALUED:
            word = key.lstrip("-") if key.startswith("-") else key
            hint = suggest(word, [o[2:] for o in VALUED + FLAGS] + ["help"], "--", 400)
            raise _Usage("unknown option '%s'%s (see --help)" % (a, hint))
        if not eq:
            if i + 1 >= len(argv):
                raise _Usage("%s needs a value (see --help)" % key)
            val = argv[i + 1]
            i += 1
        i += 1
        if not val:
            raise _Usage("%s: empty value" % key)
        if key == "--set":
            opts["set"].append(val)
        elif key[2:] in opts:
            raise _Usage("%s given twice" % key)
        else:
            opts[key[2:]] = val
    return opts


def _scale_out_item(spec, item):
    """One whole number of machines in 1..1000000, as bellamy-predict reads it."""
    item = item.strip(" \t")
    m = re.fullmatch(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", item)
    x = float(item) if m else None
    if x is None or not math.isfinite(x):
        raise _Usage("--scale-out %s: '%s' is not a number (give N, A..B or N,M,...)" % (spec, item))
    if not 1 <= x <= 1e6:
        raise _Usage("--scale-out %s: scale-out %s must be >= 1 and <= 1000000 (a number of machines)" % (spec, item))
    if x != math.floor(x):
        raise _Usage("--scale-out %s: '%s' is not a whole number (a scale-out counts machines)" % (spec, item))
    return x


def parse_scale_outs(spec):
    """"A..B", "N" or "N,M,..." → a list of floats (at most 100000)."""
    if ".." in spec:
        a_s, _, b_s = spec.partition("..")
        if ".." in b_s or "," in spec:
            raise _Usage("--scale-out %s: a range is two whole numbers, e.g. 2..12" % spec)
        a, b = _scale_out_item(spec, a_s), _scale_out_item(spec, b_s)
        if b < a:
            raise _Usage("--scale-out %s: the range is reversed (write %.0f..%.0f)" % (spec, b, a))
        if b - a + 1 > 100000:
            raise _Usage("--scale-out %s: more than 100000 scale-outs" % spec)
        return [a + i for i in range(int(b - a) + 1)]
    items = spec.split(",")
    if len(items) > 100000:
        raise _Usage("--scale-out: more than 100000 scale-outs")
    return [_scale_out_item(spec, it) for it in items]


def _stderr(text):
    """text on stderr as UTF-8, bytes the command line gave kept as they were (as a C program writes them)."""
    buf = getattr(sys.stderr, "buffer", None)
    if buf is None:
        sys.stderr.write(text)
        return
    sys.stderr.flush()
    buf.write(text.encode("utf-8", "surrogateescape"))
    buf.flush()


def _stdout_bytes(data):
    buf = getattr(sys.stdout, "buffer", None)
    if buf is None:
        sys.stdout.write(data.decode("utf-8", "replace"))
        return
    sys.stdout.flush()
    buf.write(data)
    buf.flush()


def _interval_notes(m, why, coverage):
    """Where intervals are unbounded and why, on stderr, as bellamy-predict says it (beyond the support in a
    note, the others in its table's "# intervals" line); stand-ins have their warning."""
    n = {w: why.count(w) for w in INTERVAL_WHY}
    if n["beyond"]:
        lo, hi = m.support()
        sys.stderr.write("%s: note: %d scale-out%s lie%s beyond 4 times the scale-outs the model and its runs know "
                         "(%.10g..%.10g): the runtime is unknown there (unbounded interval), and %s never chosen\n" % (
                             PROG, n["beyond"], "" if n["beyond"] == 1 else "s", "s" if n["beyond"] == 1 else "", lo,
                             hi, "it is" if n["beyond"] == 1 else "they are"))
    G = m.calibration["contexts"] if m.calibration else 0
    if n["too_few"] and G == 0:
        sys.stderr.write("%s: note: intervals: all unbounded: no context was held out at pre-training (its data had "
                         "one context, or it was pre-trained with --val-split groups): pre-training on runs of several "
                         "contexts, with --val-split contexts (the default), bounds them\n" % PROG)
    elif n["too_few"]:               # the conformal quantile needs coverage · (G + 1) <= G
        sys.stderr.write("%s: note: intervals: %d unbounded: too few held-out contexts vouch for %g (9 are needed for "
                         "0.9), --coverage %.2f or lower bounds them\n" % (
                             PROG, n["too_few"], coverage, math.floor(100.0 * G / (G + 1)) / 100.0))
    if n["too_wide"]:
        sys.stderr.write("%s: note: intervals: %d unbounded: wider than a factor 100 either way (the model's runs "
                         "disagree with it, or the scale-out is far from them)\n" % (PROG, n["too_wide"]))


def fmt_double(v):
    """libbellamy's bl_fmt_double: the shortest %g text (1 to 17 significant digits) that reads back as v,
    whole numbers below 1e17 written out (100, not 1e+02); "nan", "inf" or "-inf" for those."""
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    for p in range(1, 18):
        text = "%.*g" % (p, v)
        if p == 17 or float(text) == v:
            break
    e = text.find("e")
    x = int(text[e + 1:]) if e >= 0 else -1
    if e >= 0 and 0 <= x < 17:
        text = "%.*f" % (max(p - 1 - x, 0), v)
    return text


def _json_num(v):
    """A JSON number as bellamy-predict writes it; null for NaN and infinities (JSON has neither)."""
    return fmt_double(v).encode() if math.isfinite(v) else b"null"


def _json_str(text):
    """A JSON string as bellamy-predict writes it: \\ \" \\n \\t and \\u00XX escaped, the rest as its bytes."""
    out = bytearray(b'"')
    for c in _b("" if text is None else text):
        if c in (0x22, 0x5C):
            out += b"\\" + bytes([c])
        elif c == 0x0A:
            out += b"\\n"
        elif c == 0x09:
            out += b"\\t"
        elif c < 0x20:
            out += b"\\u%04x" % c
        else:
            out.append(c)
    return bytes(out + b'"')


def _json_value(value, number):
    """A property's value as bellamy-predict writes it: a number property's natural number (below 2^53,
    a plain decimal) as a JSON number, anything else as a string."""
    text = _as_text(value)
    if number and _DECIMAL.fullmatch(text):
        d = float(text)
        underflow = d == 0 and re.search(r"[1-9]", text.lower().partition("e")[0])   # strtod's ERANGE
        if math.isfinite(d) and not underflow and d >= 0 and d == math.floor(d) and d < 9007199254740992.0:
            return b"%.0f" % d
    return _json_str(value)


def _json_obj(items):
    return b"{" + b",".join(_json_str(k) + b":" + v for k, v in items) + b"}"


def _json_report(m, ctx, x, t, lo, hi, coverage, why, warns):
    """The --json object: bellamy-predict --json's fields, in its order, but for its choice (this reader
    chooses no scale-out) — the model, the context used and where each value came from, the method,
    the fine-tuned context, the interval's basis, the predictions and the warnings."""
    given = dict(ctx)
    used, source = [], []
    for p in m.properties:                    # every property with a value, in the model's order
        v = given.get(p.name, p.default)
        if v is None:
            continue
        used.append((p.name, _json_value(v, p.number)))
        source.append((p.name, _json_str("set" if p.name in given else "model")))
    items = [("model", _json_str(m.name)), ("context", _json_obj(used)), ("context_from", _json_obj(source)),
             ("fine_tuned_on_runs", b"%d" % (m.tuned["runs"] if m.tuned else 0)), ("fine_tuned_now", b"false"),
             ("method", _json_obj([("name", _json_str(m.method)), ("ernest_weight", _json_num(m.ernest_weight)),
                                   ("why", _json_str(m.method_why))]))]
    if m.tuned:
        items.append(("fine_tuned_context", _json_obj([(p.name, _json_value(m.tuned["context"][i], p.number))
                                                       for i, p in enumerate(m.properties)])))
    if hi is not None:
        mismatch = any(w.kind == "context" for w in warns)     # sized as for an unseen context
        items.append(("interval", _json_obj([
            ("coverage", _json_num(coverage)), ("runs", b"%d" % (0 if mismatch else m.interval_basis(False)[0])),
            ("calibration_contexts", b"%d" % m.calibration["contexts"]),
            ("unbounded_beyond_support", b"%d" % why.count("beyond")),
            ("unbounded_too_few_contexts", b"%d" % why.count("too_few")),
            ("unbounded_too_wide", b"%d" % why.count("too_wide"))])))
    else:
        items.append(("interval", b"null"))
    preds = []
    for i, (xi, ti) in enumerate(zip(x, t)):
        row = [("scale_out", _json_num(xi)), ("predicted_runtime_s", _json_num(ti))]
        if hi is not None and hi[i] <= RUNTIME_MAX_S:
            row += [("lo_runtime_s", _json_num(lo[i])), ("hi_runtime_s", _json_num(hi[i]))]
        elif hi is not None:                  # unbounded: no end is a runtime (not 0 s, not inf), and why
            row += [("lo_runtime_s", b"null"), ("hi_runtime_s", b"null"),
                    ("unbounded_why", _json_str(UNBOUNDED_NAME.get(why[i], "unbounded")))]
        if not 0 < ti <= RUNTIME_MAX_S:       # a runtime no choice would take
            row.append(("left_out", b"true"))
        preds.append(_json_obj(row))
    items.append(("predictions", b"[" + b",".join(preds) + b"]"))
    items.append(("warnings", b"[" + b",".join(_json_obj([
        ("kind", _json_str(w.kind)), ("property", _json_str(w.property) if w.property is not None else b"null"),
        ("message", _json_str(w.message))]) for w in warns) + b"]"))
    return _json_obj(items) + b"\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    try:
        opts = _parse_args(argv)
        if opts.get("help"):
            print(HELP)
            return 0
        if "model" not in opts:
            raise _Usage("--model is required (see --help)")
        if opts.get("list"):
            if opts["set"] or "scale-out" in opts or "name" in opts or opts.get("json"):
                raise _Usage("--list takes only --model (and --ignore-checksum, --allow-unstamped)")
        elif "scale-out" not in opts:
            raise _Usage("--scale-out is required (see --help)")
        ctx = []
        for s in opts["set"]:
            k, eq, v = s.partition("=")
            if not eq or not k:
                raise _Usage("--set '%s': write PROP=VALUE, e.g. --set machine_type=c4.2xlarge" % s)
            ctx.append((k, v))
        x = parse_scale_outs(opts["scale-out"]) if not opts.get("list") else []
        coverage = 0.9
        if "coverage" in opts:
            if opts.get("list"):
                raise _Usage("--list takes only --model (and --ignore-checksum, --allow-unstamped)")
            c = opts["coverage"].strip(" \t")
            coverage = float(c) if _DECIMAL.fullmatch(c) else math.nan
            if not (0 < coverage < 1):
                raise _Usage("--coverage %s: must lie strictly between 0 and 1 (0.9: a 90 %% interval)" % opts["coverage"])
    except _Usage as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 2
    ignore = True if opts.get("ignore-checksum") else None
    unstamped = True if opts.get("allow-unstamped") else None
    m = None
    try:
        if opts.get("list"):
            for n in list_models(opts["model"], ignore, unstamped):
                print(n)
            return 0
        m = Model.load(opts["model"], opts.get("name"), ignore, unstamped)
        if m.note:
            sys.stderr.write("%s: note: %s; read anyway because of %s\n" % (
                PROG, m.note, "--ignore-checksum" if ignore else "BELLAMY_MODEL_IGNORE_CHECKSUM=1"))
        if m.unstamped:
            sys.stderr.write("%s: note: %s has no checksum header; read unverified because of %s\n" % (
                PROG, opts["model"], "--allow-unstamped" if unstamped else "BELLAMY_MODEL_ALLOW_UNSTAMPED=1"))
        lo = hi = None
        warns, why = [], []
        if m.calibration is not None:
            lo, t, hi = m.predict_interval(ctx, x, coverage, warns, why)
        elif "coverage" in opts:
            sys.stderr.write("%s: %s: model '%s' carries no calibration (pre-trained before libbellamy 0.6, or with "
                             "calibration off): intervals (--coverage) are unavailable; pre-train it again with "
                             "bellamy-train pretrain to get intervals\n" % (PROG, opts["model"], m.name))
            return 1
        else:
            t = m.predict(ctx, x, warns)
        for w in warns:                       # as bellamy-predict prints them, first
            _stderr("%s: warning: %s\n" % (PROG, w.message))
        if hi is None:
            sys.stderr.write("%s: note: model '%s' carries no calibration (pre-trained before libbellamy 0.6, or with "
                             "calibration off): no intervals are shown; pre-train it again to get them\n"
                             % (PROG, m.name))
        _interval_notes(m, why, coverage)
        if m.method != "network":             # as bellamy-predict says it: what the runtimes are, and why
            sys.stderr.write("%s: note: runtimes are %s (Ernest's weight %.3g): %s\n" % (
                PROG, "Ernest's fit to the fine-tuning runs" if m.method == "ernest"
                else "a blend of the network and Ernest", m.ernest_weight, m.method_why))
    except (OSError, KeyError, RuntimeError, ValueError, TypeError, IndexError) as e:
        # h5py's errors on a damaged file read with the checksum ignored, wherever they arise
        what = "damaged file" if m is None else "model '%s': cannot predict" % m.name
        sys.stderr.write("%s: %s: %s: %s\n" % (PROG, opts["model"], what, (str(e) or type(e).__name__).split("\n")[0]))
        return 1
    except BellamyError as e:
        msg = str(e)
        if m is not None and e.kind == "unsupported":     # it names the model itself
            msg = "%s: %s" % (opts["model"], msg)
        elif m is not None:         # a context's error: say which file and model it is about
            msg = "%s: model '%s': %s" % (opts["model"], m.name, msg)
        sys.stderr.write("%s: %s\n" % (PROG, msg))
        return 1
    if opts.get("json"):
        _stdout_bytes(_json_report(m, ctx, x, t, lo, hi, coverage, why, warns))
        return 0
    out = sys.stdout
    for i, (xi, ti) in enumerate(zip(x, t)):
        if hi is None:
            out.write("%.0f\t%r\n" % (xi, ti))
        elif hi[i] <= RUNTIME_MAX_S:
            out.write("%.0f\t%r\t%r\t%r\n" % (xi, ti, lo[i], hi[i]))
        else:
            out.write("%.0f\t%r\t0\tinf\n" % (xi, ti))
    return 0


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # `... | head` ends the program quietly, as it does a C one
    sys.exit(main())
