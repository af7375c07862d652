"""Generated C for fused element-wise programs on the CPU: one loop per program, compiled at first use.

``csrc/fused.c`` interprets a program (``kind, op, dt, dst, a, b, c`` instructions) one instruction at a time
over each tile.  Here the program becomes one C function that computes the whole chain per element in one
loop, the registers being local variables (the compiler vectorises the loop; only the outputs and the reduced
registers are written), compiled by the system compiler (``CC``, else ``sysconfig``'s, else ``cc``) into a
shared library and registered with ``fused.c`` under the program's signature (``tpfgen_register``): from then
on every evaluation of that program (core's fused op, the executor) calls it per tile (or once per chunk of
32 tiles when no input is a broadcast row and nothing is reduced), with the interpreter's threads, broadcasts and
reductions.  Libraries are cached on disk, keyed by a hash of the source, the compiler (its path and
``--version``), the flags and the headers the source includes (their contents: ``include/``):
``$XDG_CACHE_HOME/tapeflow/kernels`` (default ``~/.cache/tapeflow/kernels``; ``TAPEFLOW_KERNEL_CACHE``
overrides), written atomically (a temporary file renamed).  Without a compiler, or when compiling fails,
nothing is registered and the interpreter runs.

The results are the interpreter's bit for bit.  Each instruction is the same scalar expression
(``scalar_math.h``'s ``TPF_X_*`` macros, the rows of ``elementwise.def``) with the same floating-point
contraction: ``fused.c`` compiles with ``fp-contract=fast``, its vectorisable loops (``FV`` rows, ``FS``
unary float32) once per instruction set (``target_clones``), the others for the base instruction set.  The
generated loop has the same clones, and the instructions of the other rows are non-inlined functions for the
base instruction set; an instruction's float result goes through an integer xor with a zero the compiler
cannot see (an argument), so that no multiply is contracted with the next instruction's add (a rounding
the interpreter does, as it stores each result), no negation is folded into the next add and no binary op's
operands are swapped (which of two NaNs comes out).  Results that no later instruction reads, and those that
are never a multiply's (``_NOT_A_PRODUCT``: an add, a subtraction, a division, a select, vmath.h's tanh and
sigmoid; the non-inlined helpers' calls) read only by unary ops that take their argument whole
(``_KEEPS_NAN_SIGN``: tanh, sigmoid, exp, ...), go without it: ``tanh(x * 2 + 1)``'s add, the last
instruction.  Only GCC is used (clang contracts differently; the interpreter then runs).

>>> from tapeflow.kernels.codegen import kernel_source
>>> src = kernel_source([0, 6, 2, 1, 0, 0, 0], 2, [2, 2], [0], 1, [1], [], "f")
>>> "TPF_X_EXP_f32(r0, p0, uint32_t)" in src and "o1[i] = r1;" in src
True
"""
from __future__ import annotations

import hashlib
import os
import pathlib
import platform
import shlex
import shutil
import subprocess
import sysconfig
import tempfile
import threading

from .gpu_fused import _OPS, _expr

F32, F64, BOOL = 2, 3, 9
_CTYPE = {F32: "float", F64: "double", BOOL: "uint8_t"}
_WIDE = {F32: "uint32_t", F64: "uint64_t", BOOL: "uint32_t"}
NFIELDS = 7
INCLUDE = pathlib.Path(__file__).resolve().parent / "include"
_X86 = platform.machine().lower() in ("x86_64", "amd64")
#: the flags that decide the values (csrc/fused.c's, build_ffi.py's; the clones are in the source), and GCC's
#: scheduling before register allocation (off by default on x86): it interleaves the long dependency chains of a
#: chain's math (vmath.h's reductions, polynomials and divisions) so that more of them run at once (the issue's
#: 4M-element chain: 7% faster per element on one thread; values unchanged: scheduling never reorders arithmetic)
FLAGS = ("-O3", "-std=gnu11", "-fno-math-errno", "-fno-trapping-math", "-fPIC", "-shared", "-w",
         "-fschedule-insns", "-fsched-pressure")


#: inlined ops whose result is never a multiply's (so a later add cannot contract it): an add, a subtraction, a
#: division, a select of registers, vmath.h's tanh (its last operation a copysign) and sigmoid (a fused
#: multiply-add)
_NOT_A_PRODUCT = {("BINARY", n) for n in ("add", "sub", "div", "maximum", "minimum", "relu_grad")} | {
    ("UNARY", n) for n in ("relu", "relu6", "tanh", "sigmoid")}
#: unary ops that read their argument without GCC folding it into another operation in a way that changes which
#: NaN (of which sign) comes out: a negation folds into the next add (x + -y is x - y, whose NaN is y's, not -y's),
#: a binary op may swap its operands; these start with an absolute value, a comparison or a multiply by a constant
_KEEPS_NAN_SIGN = {"tanh", "sigmoid", "exp", "relu", "relu6", "abs"}


def _cloned(kind: int, op: int, dt: int) -> bool:
    """Whether fused.c's loop for this instruction is compiled per instruction set (FV rows, FS unary float32)
    or has no floating-point arithmetic to contract (comparisons, booleans)."""
    table = _OPS["UNARY" if kind == 0 else "BINARY"]
    _, fk, _, _, _ = table[op]
    if dt == BOOL or fk in ("FV", "FB"):
        return True
    return fk == "FS" and kind == 0 and dt == F32


def kernel_source(program, n_regs, reg_dtype, input_period, n_inputs, out_regs, red_regs, name) -> str:
    """The C text of function ``name`` computing ``program`` (flat instructions) per element: inputs of period 1
    (scalars) read once, the others per element; the registers ``out_regs`` and ``red_regs`` written."""
    n_instr = len(program) // NFIELDS
    read_later = set()   # registers a later instruction reads
    sign_reads = {}      # ... and whether one that could fold it with a NaN's sign changed reads them
    for i in range(n_instr):
        kind, op, _, _, a, b, c = program[i * NFIELDS:(i + 1) * NFIELDS]
        regs = (a,) if kind in (0, 2) else (a, b) if kind == 1 else (a, b, c)
        read_later.update(regs)
        folds = kind != 0 or _OPS["UNARY"][op][0] not in _KEEPS_NAN_SIGN
        for r in regs:
            sign_reads[r] = sign_reads.get(r, False) or folds
    clones = '__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))' if _X86 else ""
    base = '__attribute__((noinline, target("arch=x86-64")))' if _X86 else "__attribute__((noinline))"
    helpers, pre, body = [], [], []
    for r in range(n_inputs):
        t = _CTYPE[reg_dtype[r]]
        if input_period[r] == 1:
            pre.append(f"    const {t} r{r} = ((const {t} *)ptr[{r}])[0];")
        else:
            pre.append(f"    const {t} *i{r} = (const {t} *)ptr[{r}];")
            body.append(f"        const {t} r{r} = i{r}[i];")
    stored = list(dict.fromkeys(list(out_regs) + list(red_regs)))
    for r in stored:
        pre.append(f"    {_CTYPE[reg_dtype[r]]} *o{r} = ({_CTYPE[reg_dtype[r]]} *)ptr[{r}];")
    for i in range(n_instr):
        kind, op, dt, d, a, b, c = program[i * NFIELDS:(i + 1) * NFIELDS]
        to, ti, w = _CTYPE[reg_dtype[d]], _CTYPE[dt], _WIDE[dt]
        if kind in (0, 1):
            e, _ = _expr(kind, op, dt)
            what = _OPS["UNARY" if kind == 0 else "BINARY"][op][0]
            if kind == 0:
                pre.append(f"    const double p{i} = params[{i}];")
                args, call = f"{ti} x, double p", f"(r{a}, p{i})"
                expr = f"{e}(x, p, {w})"
                inline = f"({to})({e}(r{a}, p{i}, {w}))"
            else:
                args, call = f"{ti} x, {ti} y", f"(r{a}, r{b})"
                expr = f"{e}(x, y, {w})"
                inline = f"({to})({e}(r{a}, r{b}, {w}))"
            if _cloned(kind, op, dt):
                rhs = inline
                product = (("UNARY" if kind == 0 else "BINARY"), what) not in _NOT_A_PRODUCT
            else:
                helpers.append(f"{base} static {to} h{i}({args}) {{ return ({to})({expr}); }}  /* {what} */")
                rhs, product = f"h{i}{call}", False
        elif kind == 2:
            rhs, what, product = f"({to})r{a}", "cast", True
        else:
            rhs, what, product = f"r{a} ? r{b} : r{c}", "select", False
        if reg_dtype[d] in (F32, F64) and d in read_later and (product or sign_reads[d]):
            rhs = f"bar{32 if reg_dtype[d] == F32 else 64}({rhs}, z)"
        body.append(f"        const {to} r{d} = {rhs};  /* {what} */")
    for r in stored:
        body.append(f"        o{r}[i] = r{r};")
    head = ("#pragma GCC optimize(\"fp-contract=fast\")\n#include <stdint.h>\n#include <string.h>\n#include <math.h>\n"
            "#include <tgmath.h>\n#include \"scalar_math.h\"\n"
            "static inline float bar32(float v, uint32_t z) { uint32_t u; memcpy(&u, &v, 4); u ^= z; "
            "memcpy(&v, &u, 4); return v; }\n"
            "static inline double bar64(double v, uint32_t z) { uint64_t u; memcpy(&u, &v, 8); u ^= z; "
            "memcpy(&v, &u, 8); return v; }\n")
    fn = (f"{clones}\nvoid {name}(void *const *ptr, const double *params, int64_t m, uint32_t z) {{\n"
          f"    (void)params;\n" + "\n".join(pre) + "\n    for (int64_t i = 0; i < m; i++) {\n"
          + "\n".join(body) + "\n    }\n}\n")
    return head + "\n".join(helpers) + ("\n" if helpers else "") + fn


# ---- compiling and caching -------------------------------------------------------------------------------

_LOCK = threading.Lock()
_COMPILERS: dict = {}   # CC command -> its identity (path and --version) or None
_LOADED: dict = {}      # library path -> (ctypes library, function address)
#: what happened: kernels compiled, taken from the disk cache, and failures (no compiler or a compile error)
stats = {"compiled": 0, "cached": 0, "failed": 0}


def compiler() -> tuple | None:
    """The C compiler (``CC``, else Python's ``sysconfig`` CC, else ``cc``) when it is a GCC that runs: its
    command and identity (path and ``--version``); else None."""
    cc = os.environ.get("CC") or (sysconfig.get_config_var("CC") or "").strip() or "cc"
    cmd = shlex.split(cc)
    if not cmd or shutil.which(cmd[0]) is None:
        return None
    if cc not in _COMPILERS:
        try:
            out = subprocess.run(cmd + ["--version"], capture_output=True, text=True, timeout=30)
            ver = out.stdout if out.returncode == 0 else ""
        except (OSError, subprocess.SubprocessError):
            ver = ""
        gcc = "Free Software Foundation" in ver and "clang" not in ver.lower()
        _COMPILERS[cc] = f"{shutil.which(cmd[0])}\n{ver}" if gcc else None
    return (cmd, _COMPILERS[cc]) if _COMPILERS[cc] is not None else None


def cache_dir() -> pathlib.Path:
    d = os.environ.get("TAPEFLOW_KERNEL_CACHE")
    if d:
        return pathlib.Path(d)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return pathlib.Path(base) / "tapeflow" / "kernels"


def headers_digest(include: pathlib.Path | None = None) -> str:
    """A hash of the headers a generated kernel includes (``include/``'s ``.h`` and ``.def`` files, names and
    contents): part of the disk cache's key, so a kernel compiled against other scalar math is never reused.

    >>> len(headers_digest()) == 64 and headers_digest() != headers_digest(INCLUDE.parent)
    True
    """
    h = hashlib.sha256()
    for f in sorted((include or INCLUDE).glob("*")):
        if f.suffix in (".h", ".def"):
            h.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def build(source: str, name: str) -> int | None:
    """The address of function ``name`` of ``source`` compiled (or found in the disk cache), or None when there
    is no usable compiler or compiling fails."""
    import ctypes

    cc = compiler()
    if cc is None:
        stats["failed"] += 1
        return None
    cmd, ident = cc
    key = hashlib.sha256("\0".join([source, ident, " ".join(FLAGS), str(INCLUDE), headers_digest()]).encode()
                         ).hexdigest()[:32]
    d = cache_dir()
    path = d / f"fused_{key}.so"
    with _LOCK:
        if str(path) in _LOADED:
            return _LOADED[str(path)][1]
        if path.exists():
            stats["cached"] += 1
        else:
            try:
                d.mkdir(parents=True, exist_ok=True)
                fd, tmp_so = tempfile.mkstemp(dir=d, prefix=".tmp_", suffix=".so")
                os.close(fd)
                src_path = tmp_so[:-3] + ".c"
                pathlib.Path(src_path).write_text(source)
                try:
                    out = subprocess.run(cmd + list(FLAGS) + [f"-I{INCLUDE}", src_path, "-o", tmp_so],
                                         capture_output=True, text=True, timeout=300)
                    if out.returncode != 0:
                        stats["failed"] += 1
                        return None
                    os.replace(tmp_so, path)
                finally:
                    for f in (src_path, tmp_so):
                        if os.path.exists(f):
                            os.unlink(f)
            except (OSError, subprocess.SubprocessError):
                stats["failed"] += 1
                return None
            stats["compiled"] += 1
        try:
            lib = ctypes.CDLL(str(path))
            addr = ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
        except (OSError, AttributeError):
            stats["failed"] += 1
            return None
        _LOADED[str(path)] = (lib, addr)
        return addr


def register(backend, program, n_regs, reg_dtype, input_period, n_inputs, out_regs, red_regs) -> bool:
    """Generate, compile (or find) and register with ``fused.c`` the kernel of a program (``backend``: the CPU
    backend; the other arguments as Python lists); whether a generated kernel now serves it."""
    src = kernel_source(program, n_regs, reg_dtype, input_period, n_inputs, out_regs, red_regs, "tpfgen_kernel")
    name = "tpfgen_" + hashlib.sha256(src.encode()).hexdigest()[:16]
    addr = build(src.replace("tpfgen_kernel", name), name)
    if addr is None:
        return False
    ffi, lib = backend.ffi, backend.lib
    st = lib.tpfgen_register(ffi.new("int32_t[]", list(program) or [0]), len(program) // NFIELDS, n_regs,
                             ffi.new("int32_t[]", list(reg_dtype) or [0]),
                             ffi.new("int64_t[]", list(input_period) or [0]), n_inputs,
                             ffi.new("int32_t[]", list(out_regs) or [0]), len(out_regs),
                             ffi.new("int32_t[]", list(red_regs) or [0]), len(red_regs), ffi.cast("void *", addr))
    return st == 0
