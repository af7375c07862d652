"""Compile every GPU kernel family as CUDA C++ with nvcc (no GPU needed).

The kernels in ``packages/kernels-c/src/tapeflow/kernels/gpu/`` are OpenCL C and CUDA
C++ at once (``tpf_gpu.h`` maps the differences).  At run time the CUDA backend
compiles them with NVRTC; this script checks, with the offline compiler, that each
family compiles as CUDA for the architectures we target, and reports every kernel
it found in the PTX, so a family that builds for OpenCL but not for CUDA fails CI.

    python tools/compile_cuda.py                 # every family, default architectures
    python tools/compile_cuda.py --arch sm_80 elementwise reduce
    python tools/compile_cuda.py --keep build/ptx    # keep the .ptx files

Exit status 0 when everything compiles, 1 otherwise; 0 with a message when nvcc is
missing and --require-nvcc is not given.

>>> import subprocess, sys
>>> subprocess.run([sys.executable, __file__, "--list"], capture_output=True, text=True, check=False).stdout.split()[:2]
['elementwise', 'reduce']
"""
from __future__ import annotations

import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
GPU = ROOT / "packages" / "kernels-c" / "src" / "tapeflow" / "kernels" / "gpu"
FAMILIES = ("elementwise", "reduce", "matmul", "cast", "copy", "index", "join", "sort", "nn", "random", "conv",
            "linalg")
DEFAULT_ARCHS = ("sm_75", "sm_90")


def find_nvcc() -> str | None:
    for cand in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if cand and os.path.exists(cand):
            return cand
    return None


def family_source(family: str) -> str:
    """What the CUDA backend hands NVRTC: the prelude, then the family, the shared headers of
    ``include/`` (scalar math, Philox, the element-wise op list) expanded in place."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_tpf_kernel_sources", GPU.parent / "kernel_sources.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)   # standard library only: no tapeflow install needed
    return mod.gpu_source(family)


def compile_family(nvcc: str, family: str, arch: str, outdir: pathlib.Path) -> tuple[bool, str, list]:
    src = outdir / f"{family}.cu"
    src.write_text(family_source(family))
    ptx = outdir / f"{family}.{arch}.ptx"
    cmd = [nvcc, "-x", "cu", "-std=c++17", f"-arch={arch}", "--ptx", "-fmad=false", "-DTPF_FP64=1",
           "-Xcudafe", "--display_error_number", "-diag-suppress=177,186", "-o", str(ptx), str(src)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return False, proc.stderr + proc.stdout, []
    kernels = re.findall(r"^\.visible \.entry (\w+)\(", ptx.read_text(), re.MULTILINE)
    return True, proc.stderr, kernels


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("families", nargs="*", default=list(FAMILIES))
    ap.add_argument("--arch", action="append", help=f"target architecture(s), default {', '.join(DEFAULT_ARCHS)}")
    ap.add_argument("--keep", help="folder to keep the generated .cu and .ptx files in")
    ap.add_argument("--require-nvcc", action="store_true", help="fail (instead of skipping) without nvcc")
    ap.add_argument("--list", action="store_true", help="print the kernel families and exit")
    args = ap.parse_args(argv)
    if args.list:
        print("\n".join(FAMILIES))
        return 0
    unknown = [f for f in args.families if f not in FAMILIES]
    if unknown:
        print(f"unknown families: {', '.join(unknown)}; known: {', '.join(FAMILIES)}", file=sys.stderr)
        return 2
    nvcc = find_nvcc()
    if nvcc is None:
        print("nvcc not found (install the CUDA toolkit or set NVCC): CUDA kernels not compiled")
        return 1 if args.require_nvcc else 0
    version = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                             check=False).stdout.strip().splitlines()[-1]
    print(f"{nvcc}: {version}")
    archs = args.arch or list(DEFAULT_ARCHS)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        outdir = pathlib.Path(args.keep or tmp)
        outdir.mkdir(parents=True, exist_ok=True)
        for arch in archs:
            for fam in args.families:
                t0 = time.perf_counter()
                ok, log, kernels = compile_family(nvcc, fam, arch, outdir)
                dt = time.perf_counter() - t0
                if ok:
                    print(f"  ok    {arch}  {fam:12s} {len(kernels):4d} kernels  ({dt:.1f} s)")
                    warnings = [ln for ln in log.splitlines() if "warning" in ln]
                    for ln in warnings[:10]:
                        print(f"        {ln}")
                else:
                    failed += 1
                    print(f"  FAIL  {arch}  {fam}\n{log}")
    print(f"{'all families compiled' if not failed else f'{failed} compilation(s) failed'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
