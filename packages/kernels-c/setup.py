from setuptools import setup

# Everything else lives in pyproject.toml; cffi's build hook needs setup().
setup(cffi_modules=["build_ffi.py:ffibuilder"])
