"""A worker that fails ends the job: its traceback is printed, then MPI_Abort stops every process.

Without this, the other workers would wait forever in their next collective for the one that died.
"""
from __future__ import annotations

import os
import sys
import time
import traceback

_installed = [False]


def install(rank: int) -> None:
    """Make an uncaught exception on this worker print its traceback (marked with the rank) and abort the job."""
    if _installed[0]:
        return
    _installed[0] = True
    previous = sys.excepthook

    def hook(tp, value, tb):
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            # one write: the workers' reports reach a shared stderr whole, not interleaved line by line
            text = (f"tapeflow.distribute: worker {rank} raised {tp.__name__}; aborting the whole job (MPI_Abort)\n"
                    + "".join(traceback.format_exception(tp, value, tb)))
            os.write(2, text.encode("utf-8", "replace"))
            time.sleep(0.5)   # let mpiexec forward the report before MPI_Abort tears the job's output down
        finally:
            try:
                from mpi4py import MPI

                MPI.COMM_WORLD.Abort(1)
            except Exception:  # noqa: BLE001 - MPI is gone: at least report as usual
                previous(tp, value, tb)

    sys.excepthook = hook
