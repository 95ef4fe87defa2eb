#!/bin/sh
# test_pyreader.sh — runs tests/test_pyreader.py under a Python that has numpy, h5py and xxhash:
# /usr/bin/python3 (Debian's packages) when it has them, else python3 on PATH; SKIP (exit 77) when none has.
here=$(dirname "$0")
for py in /usr/bin/python3 python3; do
    if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import numpy, h5py, xxhash' 2>/dev/null; then
        exec "$py" "$here/test_pyreader.py" "$@"
    fi
done
echo "SKIP: no Python with numpy, h5py and xxhash (Debian: apt-get install python3-numpy python3-h5py python3-xxhash)"
exit 77
