"""Everything else lives in pyproject.toml; cffi's build hook needs setup().

build_ext is keyed by the build's flags (build_ffi.flags_signature: compile flags,
CC/CFLAGS/CPPFLAGS/LDFLAGS, OpenBLAS, Python): objects go to a folder per
signature, and the library is rebuilt whenever the signature of the one already at
the destination differs, so reinstalling with new CFLAGS never ships the old
library as "already up-to-date".

The extensions use only Python's stable ABI (cffi defines Py_LIMITED_API on CPython for the kernel
library; build_ffi.fastpath_extension, core's C fast path, defines it too), so one wheel, tagged
``cp310-abi3``, serves CPython 3.10 and every later version.  A debug or
free-threaded CPython (no limited API) and PyPy get a wheel for their own interpreter.
"""
import hashlib
import os
import platform
import sys
import sysconfig

from setuptools import setup
from setuptools.command.build_ext import build_ext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import build_ffi


class FlagKeyedBuildExt(build_ext):
    def finalize_options(self):
        super().finalize_options()
        self._stamps = self.build_temp
        self.build_temp = os.path.join(self.build_temp, "flags-" + build_ffi.flags_signature())

    def build_extension(self, ext):
        dest = os.path.abspath(self.get_ext_fullpath(ext.name))
        stamp = os.path.join(self._stamps, "built-" + hashlib.sha256(dest.encode()).hexdigest()[:16])
        sig = build_ffi.flags_signature()
        try:
            with open(stamp) as f:
                same = f.read().strip() == sig
        except OSError:
            same = False
        force = self.force
        self.force = force or not same or not os.path.exists(dest)
        try:
            super().build_extension(ext)
        finally:
            self.force = force
        os.makedirs(self._stamps, exist_ok=True)
        with open(stamp, "w") as f:
            f.write(sig + "\n")


def _limited_api() -> bool:
    return (platform.python_implementation() == "CPython" and not hasattr(sys, "gettotalrefcount")
            and not sysconfig.get_config_var("Py_GIL_DISABLED"))


setup(cffi_modules=["build_ffi.py:ffibuilder"], ext_modules=[build_ffi.fastpath_extension()],
      cmdclass={"build_ext": FlagKeyedBuildExt},
      options={"bdist_wheel": {"py_limited_api": "cp310"}} if _limited_api() else {})
