"""Fused element-wise programs on a GPU: one generated kernel per program (``tpf_fused_eval`` on a device).

A program is ``csrc/fused.c``'s register bytecode (instructions ``kind, op, dt, dst, a, b, c``).  Here it
becomes straight-line OpenCL C / CUDA C: each work-item reads its element of every input, computes
each instruction with the same scalar expressions as the element-wise kernels (``include/scalar_math.h``'s
``TPF_X_*`` macros, picked from the rows of ``include/elementwise.def``: the op list stays one list)
into a local variable, and writes its element of every output.  The source is the GPU prelude
(``gpu/tpf_gpu.h``) with the scalar math, then the kernel; it is compiled once per program text (and
denormal mode) and cached on the backend.

>>> from tapeflow.kernels.gpu_fused import fused_kernel_source
>>> src = fused_kernel_source([0, 6, 2, 1, 0, 0, 0], [0.0], 1, 2, [2, 2], [0], 1, [1], 1)
>>> "TPF_X_EXP_f32(r0, " in src and "out0[i] = r1;" in src
True
"""
from __future__ import annotations

import hashlib
import pathlib
import re

try:
    from .gpu_common import EBADARG, EBADDTYPE, EBADOP, EBADSIZE, OK, DeviceBuffer
except ImportError:  # no NumPy: only the source generator works (nox -s cuda_compile's samples); tpf.h's codes
    OK, EBADSIZE, EBADDTYPE, EBADOP, EBADARG = 0, 1, 2, 3, 7
    DeviceBuffer = None
from .gpu_contract import LOCAL

F32, F64, BOOL = 2, 3, 9
_CTYPE = {F32: "float", F64: "double", BOOL: "u8"}
_WIDE = {F32: "u32", F64: "u64", BOOL: "u32"}
NFIELDS = 7
_HERE = pathlib.Path(__file__).resolve().parent
_ROW = re.compile(r"^TPF_(BINARY|UNARY)\(\s*(\w+)\s*,\s*\w+\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*\w+\s*,\s*\w+\s*,"
                  r"\s*(\w+)\s*,\s*(\w+)\s*\)", re.MULTILINE)


def _rows():
    """elementwise.def: per arity, a list in op-code order of (name, float kind, float expr, bool kind, bool expr)."""
    text = (_HERE / "include" / "elementwise.def").read_text()
    out = {"BINARY": [], "UNARY": []}
    for arity, name, fk, fe, bk, be in _ROW.findall(text):
        out[arity].append((name, fk, fe, bk, be))
    return out


_OPS = _rows()


def _expr(kind: int, op: int, dt: int):
    """The scalar-math macro of op ``op`` (kind 0 unary, 1 binary) for dtype ``dt`` and whether its result is
    boolean; None when the op has no loop for that dtype."""
    table = _OPS["UNARY" if kind == 0 else "BINARY"]
    if not 0 <= op < len(table):
        return None
    _, fk, fe, bk, be = table[op]
    if dt == BOOL:
        return (be, False) if bk == "B" else None
    if fk == "NO":
        return None
    if fk == "FS":
        return f"{fe}_{'f32' if dt == F32 else 'f64'}", False
    return fe, fk == "FB"


def _check(program, params, n_instr, n_regs, reg_dtype, n_inputs, out_regs, n_outputs) -> int:
    if n_instr < 0 or n_regs < n_inputs or n_inputs < 0 or n_outputs < 0 or n_regs > 4096:
        return EBADARG
    if len(program) < n_instr * NFIELDS or len(reg_dtype) < n_regs or len(params) < n_instr:
        return EBADARG
    if any(d not in _CTYPE for d in reg_dtype[:n_regs]):
        return EBADDTYPE
    if any(not n_inputs <= r < n_regs for r in out_regs[:n_outputs]):
        return EBADARG
    for i in range(n_instr):
        kind, op, dt, d, a, b, c = program[i * NFIELDS:(i + 1) * NFIELDS]
        regs_ok = n_inputs <= d < n_regs and all(0 <= r < n_regs for r in (a, b, c))
        if not regs_ok or dt not in _CTYPE or reg_dtype[a] != (BOOL if kind == 3 else dt):
            return EBADARG
        if kind in (0, 1):
            e = _expr(kind, op, dt)
            if e is None:
                table = _OPS["UNARY" if kind == 0 else "BINARY"]
                return EBADOP if not 0 <= op < len(table) else EBADDTYPE
            if kind == 1 and reg_dtype[b] != dt:
                return EBADARG
            if reg_dtype[d] != (BOOL if e[1] else dt):
                return EBADARG
            if kind == 0 and _OPS["UNARY"][op][0] == "polygamma":
                p = params[i]
                if not (0 <= p <= 64 and p == int(p)):
                    return EBADARG
        elif kind == 2:
            if {dt, reg_dtype[d]} != {F32, F64}:
                return EBADDTYPE
        elif kind == 3:
            if reg_dtype[b] != dt or reg_dtype[c] != dt or reg_dtype[d] != dt:
                return EBADARG
        else:
            return EBADOP
    return OK


def _literal(v: float) -> str:
    if v != v:
        return "(0.0 / 0.0)"
    if v in (float("inf"), float("-inf")):
        return "(1.0 / 0.0)" if v > 0 else "(-1.0 / 0.0)"
    return repr(float(v))


def fused_kernel_source(program, params, n_instr, n_regs, reg_dtype, input_is_scalar, n_inputs, out_regs,
                        n_outputs, name: str | None = None) -> str:
    """The OpenCL C / CUDA C text of program ``program`` (``tpf_fused_eval``'s arguments, without the
    buffers): the GPU prelude, the scalar math and one kernel ``name`` (default ``fused_<hash>``)
    ``(i64 n, inputs..., outputs...)``."""
    lines = []
    for r in range(n_inputs):
        t = _CTYPE[reg_dtype[r]]
        per = int(input_is_scalar[r])  # 0 dense, 1 a scalar, p > 1 p elements repeated (csrc/fused.c's periods)
        idx = "i" if per == 0 else "0" if per == 1 else f"i % {per}"
        lines.append(f"    const {t} r{r} = in{r}[{idx}];")
    for i in range(n_instr):
        kind, op, dt, d, a, b, c = program[i * NFIELDS:(i + 1) * NFIELDS]
        to = _CTYPE[reg_dtype[d]]
        if kind == 0:
            e = _expr(0, op, dt)[0]
            rhs = f"({to})({e}(r{a}, (param_t){_literal(params[i])}, {_WIDE[dt]}))"
            what = _OPS["UNARY"][op][0]
        elif kind == 1:
            e = _expr(1, op, dt)[0]
            rhs = f"({to})({e}(r{a}, r{b}, {_WIDE[dt]}))"
            what = _OPS["BINARY"][op][0]
        elif kind == 2:
            rhs, what = f"({to})r{a}", "cast"
        else:
            rhs, what = f"r{a} ? r{b} : r{c}", "select"
        lines.append(f"    const {to} r{d} = {rhs};  /* {what} */")
    for k in range(n_outputs):
        lines.append(f"    out{k}[i] = r{out_regs[k]};")
    params_ = [f"const G {_CTYPE[reg_dtype[r]]} *in{r}" for r in range(n_inputs)]
    params_ += [f"G {_CTYPE[reg_dtype[r]]} *out{k}" for k, r in enumerate(out_regs[:n_outputs])]
    body = "\n".join(lines)
    if name is None:
        name = "fused_" + hashlib.sha256(body.encode()).hexdigest()[:16]
    kernel = (f"KERNEL {name}({', '.join(['i64 n'] + params_)}) {{\n"
              f"    i64 i = GID0();\n    if (i >= n) return;\n{body}\n}}\n")
    return _head() + kernel


_HEAD: list = []


def _head() -> str:
    """The generated kernels' common text: the GPU prelude and the scalar math, includes expanded (read once
    per process: expanding them took 0.25 ms, more than a small fused launch)."""
    if not _HEAD:
        from .kernel_sources import GPU_DIR, PRELUDE, expand_includes

        head = ("#include \"scalar_math.h\"\n#ifdef TPF_FP64\ntypedef double param_t;\n#else\n"
                "typedef float param_t;\n#endif\n")
        _HEAD.append(expand_includes((GPU_DIR / PRELUDE).read_text() + "\n" + head, "fused kernel"))
    return _HEAD[0]


class FusedEntries:
    """``fused_eval`` (``csrc/fused.c``'s entry) on a device, and ``fused_source`` (the generated text)."""

    def fused_source(self, program, params, n_instr, n_regs, reg_dtype, input_is_scalar, n_inputs, out_regs,
                     n_outputs):
        """The generated kernel source of a program (what ``ConcreteFunction.fused_kernels()`` shows)."""
        st = _check(program, params, n_instr, n_regs, reg_dtype, n_inputs, out_regs, n_outputs)
        if st:
            raise ValueError(f"not a fused program (status {st})")
        return fused_kernel_source(program, params, n_instr, n_regs, reg_dtype, input_is_scalar, n_inputs,
                                   out_regs, n_outputs, "fused")

    def fused_eval(self, program, params, n_instr, n_regs, reg_dtype, inputs, input_is_scalar, n_inputs,
                   outputs, out_regs, n_outputs, n):
        # the kernel of a program seen before, by the program's values (generating and hashing its source
        # each call cost more than the launch); a program's status is as fixed as its kernel
        try:
            key = (n_instr, n_regs, n_inputs, n_outputs, tuple(program[:n_instr * NFIELDS]),
                   tuple(params[:n_instr]), tuple(reg_dtype[:n_regs]), tuple(input_is_scalar[:n_inputs]),
                   tuple(out_regs[:n_outputs]), self._ftz)
        except TypeError:   # a cffi array without slicing: the long way
            key = None
        by_prog = self.__dict__.setdefault("_fused_by_program", {})
        hit = by_prog.get(key) if key is not None else None
        if hit is None:
            hit = self._fused_program(program, params, n_instr, n_regs, reg_dtype, input_is_scalar, n_inputs,
                                      out_regs, n_outputs)
            if key is not None:
                if len(by_prog) >= 4096:   # programs made on the fly without end: forget the oldest
                    del by_prog[next(iter(by_prog))]
                by_prog[key] = hit
        st = hit[0]
        if st:
            return st
        if n < 0:
            return EBADSIZE
        if n == 0:
            return OK
        if hit[1]:
            return hit[1]
        k = hit[2]
        if k is None:
            k = hit[2] = self._fused_kernel(hit[3])
        args = [n] + [self._device_arg(h) for h in list(inputs)[:n_inputs]] + list(outputs)[:n_outputs]
        self._launch(k, ((n + LOCAL - 1) // LOCAL * LOCAL,), (LOCAL,), "l" + "B" * (n_inputs + n_outputs), args)
        return OK

    def _fused_program(self, program, params, n_instr, n_regs, reg_dtype, input_is_scalar, n_inputs, out_regs,
                       n_outputs):
        """``[status of its check, status of a launch (float64 on a device without it), kernel (built at the
        first launch), source]`` of a program."""
        program, params, reg_dtype = list(program), list(params), list(reg_dtype)
        out_regs, input_is_scalar = list(out_regs), list(input_is_scalar)
        st = _check(program, params, n_instr, n_regs, reg_dtype, n_inputs, out_regs, n_outputs)
        if st:
            return [st, OK, None, None]
        if F64 in reg_dtype[:n_regs] and not getattr(self, "fp64", True):
            return [OK, EBADDTYPE, None, None]
        return [OK, OK, None, fused_kernel_source(program, params, n_instr, n_regs, reg_dtype, input_is_scalar,
                                                  n_inputs, out_regs, n_outputs, "fused")]

    def fused_eval_reduce(self, program, params, n_instr, n_regs, reg_dtype, inputs, input_period, n_inputs,
                          outputs, out_regs, n_outputs, red_ops, red_regs, red_out, n_red, n):
        """``fused_eval`` whose registers ``red_regs`` are also reduced over all ``n`` elements (``red_ops``:
        reduce.h's codes; sum, prod, mean, max, min) into ``red_out``: the generated kernel writes each
        reduced register to a scratch buffer that the backend's reduction kernel then reads."""
        red_ops, red_regs, reg_dtype = list(red_ops)[:n_red], list(red_regs)[:n_red], list(reg_dtype)
        if n_red < 0 or n < 0:
            return EBADSIZE
        if any(not 0 <= op <= 4 for op in red_ops):
            return EBADOP
        if any(not 0 <= r < n_regs for r in red_regs):
            return EBADARG
        if any(reg_dtype[r] not in (F32, F64) for r in red_regs):
            return EBADDTYPE
        input_period = list(input_period)[:n_inputs]
        if any(p < 0 or (p > 1 and n % p) for p in input_period):
            return EBADSIZE
        scratch = [self.alloc((n,), "float64" if reg_dtype[r] == F64 else "float32")[0] for r in red_regs]
        st = self.fused_eval(program, params, n_instr, n_regs, reg_dtype, inputs, input_period, n_inputs,
                             list(outputs)[:n_outputs] + scratch, list(out_regs)[:n_outputs] + red_regs,
                             n_outputs + n_red, n)
        for op, r, buf, out in zip(red_ops, red_regs, scratch, list(red_out)[:n_red]):
            if st == OK:
                st = self.reduce(op, reg_dtype[r], buf, out, 1, n, 1)
        return st

    def exec_fused(self, n_steps, programs, params, reg_dtypes, periods, sizes, ints, slots, n_slots, failed):
        """``csrc/executor.c``'s loop: ``n_steps`` fused programs over a table of buffer ``slots``, one after the
        other (``ints[k]``: counts, then the slots of step k's inputs, outputs and reductions); the first
        failing step's status is returned and its index stored in ``failed[0]``."""
        if n_steps < 0 or n_slots < 0:
            return EBADARG
        slots = list(slots)[:n_slots]
        for k in range(n_steps):
            h = list(ints[k])
            n_instr, n_regs, n_in, n_out, n_red = h[:5]
            ins = h[5:5 + n_in]
            outs = h[5 + n_in:5 + n_in + n_out]
            out_regs = h[5 + n_in + n_out:5 + n_in + 2 * n_out]
            rest = h[5 + n_in + 2 * n_out:]
            red_ops, red_regs, red_slots = rest[:n_red], rest[n_red:2 * n_red], rest[2 * n_red:3 * n_red]
            if any(not 0 <= i < n_slots or slots[i] is None for i in ins + outs + red_slots):
                failed[0] = k
                return EBADARG
            st = self.fused_eval_reduce(programs[k], params[k], n_instr, n_regs, reg_dtypes[k],
                                        [slots[i] for i in ins], periods[k], n_in, [slots[i] for i in outs], out_regs,
                                        n_out, red_ops, red_regs, [slots[i] for i in red_slots], n_red, sizes[k])
            if st != OK:
                failed[0] = k
                return st
        return OK

    def _device_arg(self, h):
        return h if type(h) is DeviceBuffer else self._as_device(h)

    def _as_device(self, h):
        raise TypeError(f"fused_eval takes device buffers, got {type(h).__name__}")

    def _fused_kernel(self, src: str):
        """The compiled kernel ``fused`` of ``src``, built once per source and denormal mode."""
        cache = self.__dict__.setdefault("_fused_cache", {})
        key = (src, self._ftz)
        k = cache.get(key)
        if k is None:
            with self._lock:
                k = cache.get(key)
                if k is None:
                    k = cache[key] = (self._fused_build_cuda(src) if hasattr(self, "nvrtc")
                                      else self._fused_build_opencl(src))
        return k

    def _fused_build_opencl(self, src: str):
        ffi, cl = self.ffi, self.cl
        csrc = ffi.new("char[]", src.encode())
        prog = cl.clCreateProgramWithSource(self._ctx, 1, ffi.new("const char *[1]", [csrc]), ffi.NULL, self._err)
        self._check(self._err[0], "clCreateProgramWithSource")
        st = cl.clBuildProgram(prog, 1, self._dev_arr, self.build_options().encode(), ffi.NULL, ffi.NULL)
        if st != 0:
            raise RuntimeError(f"building a fused element-wise kernel failed on {self.device_name}: status {st}\n"
                               f"{self._build_log(prog)}\n{src[-4000:]}")
        k = cl.clCreateKernel(prog, b"fused", self._err)
        self._check(self._err[0], "clCreateKernel(fused)")
        return k

    def _fused_build_cuda(self, src: str):
        ffi, nv = self.ffi, self.nvrtc
        prog = ffi.new("nvrtcProgram *")
        if nv.nvrtcCreateProgram(prog, src.encode(), b"fused.cu", 0, ffi.NULL, ffi.NULL) != 0:
            raise RuntimeError("nvrtcCreateProgram failed for a fused element-wise kernel")
        try:
            opts = [ffi.new("char[]", o.encode()) for o in self.build_options()]
            if nv.nvrtcCompileProgram(prog[0], len(opts), ffi.new("const char *[]", opts)) != 0:
                size = ffi.new("size_t *")
                nv.nvrtcGetProgramLogSize(prog[0], size)
                log = ffi.new("char[]", size[0] + 1)
                nv.nvrtcGetProgramLog(prog[0], log)
                raise RuntimeError(f"compiling a fused element-wise kernel failed:\n"
                                   f"{ffi.string(log).decode(errors='replace')}")
            size = ffi.new("size_t *")
            nv.nvrtcGetPTXSize(prog[0], size)
            ptx = ffi.new("char[]", size[0])
            nv.nvrtcGetPTX(prog[0], ptx)
        finally:
            nv.nvrtcDestroyProgram(prog)
        m = ffi.new("CUmodule *")
        self._check(self.cu.cuModuleLoadData(m, ptx), "cuModuleLoadData(fused)")
        f = ffi.new("CUfunction *")
        self._check(self.cu.cuModuleGetFunction(f, m[0], b"fused"), "cuModuleGetFunction(fused)")
        return f[0]


# ---- samples for the offline CUDA compiler (nox -s cuda_compile) ----------------------------------------

def _op(kind: int, name: str) -> int:
    table = _OPS["UNARY" if kind == 0 else "BINARY"]
    return [row[0] for row in table].index(name)


def sample_programs() -> dict:
    """A few fused programs as the fusion pass makes them, by name: ``fused_kernel_source``'s arguments.

    The issue's chain (float32, scalars broadcast), a float64 chain with a comparison, a select and casts
    from and to float32, several outputs, and a chain whose registers a reduction reads (the kernel writes
    them for the backend's reduction kernel, as ``fused_eval_reduce`` does).

    >>> sorted(sample_programs())
    ['casts_select_f64', 'issue_chain_f32', 'reduced_outputs_f32', 'several_outputs_f64']
    """
    U, B = 0, 1
    out = {}
    # tanh(x*2+1) * sigmoid(x) - exp(-x*x): r0 x, r1 2.0, r2 1.0 (scalars)
    prog = [(B, _op(B, "mul"), F32, 3, 0, 1, 0), (B, _op(B, "add"), F32, 4, 3, 2, 0),
            (U, _op(U, "tanh"), F32, 5, 4, 0, 0), (U, _op(U, "sigmoid"), F32, 6, 0, 0, 0),
            (B, _op(B, "mul"), F32, 7, 5, 6, 0), (U, _op(U, "neg"), F32, 8, 0, 0, 0),
            (B, _op(B, "mul"), F32, 9, 8, 0, 0), (U, _op(U, "exp"), F32, 10, 9, 0, 0),
            (B, _op(B, "sub"), F32, 11, 7, 10, 0)]
    out["issue_chain_f32"] = (prog, [0.0] * len(prog), [F32] * 12, [0, 1, 1], 3, [11])
    # where(x > y, exp(cast<f64>(z)), x * y) then back to float32: r0 x, r1 y (f64), r2 z (f32)
    prog = [(B, _op(B, "greater"), F64, 3, 0, 1, 0), (2, 0, F32, 4, 2, 0, 0), (U, _op(U, "exp"), F64, 5, 4, 0, 0),
            (B, _op(B, "mul"), F64, 6, 0, 1, 0), (3, 0, F64, 7, 3, 5, 6), (2, 0, F64, 8, 7, 0, 0)]
    out["casts_select_f64"] = (prog, [0.0] * len(prog), [F64, F64, F32, BOOL, F64, F64, F64, F64, F32],
                               [0, 0, 0], 3, [8])
    # leaky_relu(x, 0.2) and its square, gelu(x): three outputs; r1 a scalar
    prog = [(U, _op(U, "leaky_relu"), F64, 2, 0, 0, 0), (B, _op(B, "squared_difference"), F64, 3, 2, 1, 0),
            (U, _op(U, "gelu"), F64, 4, 0, 0, 0)]
    out["several_outputs_f64"] = (prog, [0.2, 0.0, 1.0], [F64] * 5, [0, 1], 2, [2, 3, 4])
    # (x - y)^2 and (x - y) * x, both only reduced (the linear regression's loss and gradient)
    prog = [(B, _op(B, "sub"), F32, 2, 0, 1, 0), (U, _op(U, "square"), F32, 3, 2, 0, 0),
            (B, _op(B, "mul"), F32, 4, 2, 0, 0)]
    out["reduced_outputs_f32"] = (prog, [0.0] * 3, [F32] * 5, [0, 0], 2, [3, 4])
    return out


def sample_sources() -> dict:
    """``sample_programs()`` as kernel sources (each kernel named after its program)."""
    srcs = {}
    for name, (prog, params, rdt, scalar, n_in, outs) in sample_programs().items():
        flat = [v for ins in prog for v in ins]
        st = _check(flat, params, len(prog), len(rdt), rdt, n_in, outs, len(outs))
        if st:
            raise AssertionError(f"sample program {name} is not valid (status {st})")
        srcs[name] = fused_kernel_source(flat, params, len(prog), len(rdt), rdt, scalar, n_in, outs, len(outs), name)
    return srcs


def main(argv=None) -> int:
    """``python -m tapeflow.kernels.gpu_fused --emit DIR [--nvcc NVCC --arch sm_XX ...]``: write the sample
    kernels' sources to DIR (``<name>.cu``) and, with ``--nvcc``, compile each to PTX (as tools/compile_cuda.py
    compiles the static kernel families); exit status 1 when one does not compile."""
    import argparse
    import subprocess

    ap = argparse.ArgumentParser(description=main.__doc__.split(":")[0])
    ap.add_argument("--emit", required=True)
    ap.add_argument("--nvcc")
    ap.add_argument("--arch", action="append")
    args = ap.parse_args(argv)
    outdir = pathlib.Path(args.emit)
    outdir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, src in sample_sources().items():
        path = outdir / f"{name}.cu"
        path.write_text(src)
        for arch in (args.arch or ["sm_75", "sm_90"]) if args.nvcc else ():
            ptx = outdir / f"{name}.{arch}.ptx"
            cmd = [args.nvcc, "-x", "cu", "-std=c++17", f"-arch={arch}", "--ptx", "-fmad=false", "-DTPF_FP64=1",
                   "-diag-suppress=177,186", "-o", str(ptx), str(path)]
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            ok = proc.returncode == 0 and f".entry {name}(" in ptx.read_text()
            failed += not ok
            print(f"  {'ok  ' if ok else 'FAIL'}  {arch}  fused kernel {name}" + ("" if ok else f"\n{proc.stderr}"))
    if not args.nvcc:
        print(f"wrote {len(sample_sources())} fused kernel sources to {outdir}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
