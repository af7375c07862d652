"""Run a Python script as an MPI job from a test: ``mpiexec -n N python script`` with a time limit.

>>> import tempfile, pathlib
>>> from tapeflow.distribute.testing import run_mpi
>>> script = pathlib.Path(tempfile.mkdtemp()) / "hello.py"
>>> _ = script.write_text("from mpi4py import MPI\\nprint('rank', MPI.COMM_WORLD.Get_rank())\\n")
>>> run_mpi(script, 1).stdout.split()
['rank', '0']
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys


def mpiexec() -> str:
    """The ``mpiexec`` of this Python's environment (the mpich wheel installs it beside ``python``)."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    found = here if os.path.exists(here) else shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError("no mpiexec beside this Python nor on PATH: pip install tapeflow-distribute "
                                "(its mpich dependency brings one)")
    return found


def run_mpi(script, n: int, args=(), timeout: float = 120, env=None) -> subprocess.CompletedProcess:
    """``mpiexec -n n python script *args``: stdout and stderr as text; ``subprocess.TimeoutExpired`` if the job
    runs past ``timeout`` seconds (the whole process group is killed then, so nothing is left running)."""
    cmd = [mpiexec(), "-n", str(int(n)), sys.executable, os.fspath(script), *map(str, args)]
    full_env = dict(os.environ, **(env or {}))
    full_env.setdefault("PYTHONUNBUFFERED", "1")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out, err)
