"""The Python binding (bindings/python/libzarr.py) used as an installed library is: copied out of
the checkout, with no LIBZARR_PATH, it finds libzarr.so through the system's loader by its SONAME."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import libzarr


def test_the_binding_outside_the_checkout_finds_the_library_by_its_soname(tmp_path):
    shutil.copy(libzarr.__file__, tmp_path / "libzarr.py")
    lib_dir = str(Path(libzarr.LIB_PATH).resolve().parent)  # where the loader is told to look
    env = {k: v for k, v in os.environ.items() if k != "LIBZARR_PATH"}
    env.update(PYTHONPATH=str(tmp_path), LD_LIBRARY_PATH=lib_dir)
    script = ("import libzarr, numpy as np\n"
              "with libzarr.open_store('memory:', 'w') as s:\n"
              "    a = s.create_array('a', {'shape': [3], 'chunks': [2], 'dtype': '<i4'})\n"
              "    a.write(np.array([5, 6, 7], dtype='<i4'))\n"
              "    print(libzarr.LIB_PATH, libzarr.version(), a.read().tolist())\n")
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["libzarr.so.0.1", libzarr.version(), "[5,", "6,", "7]"], out.stdout
