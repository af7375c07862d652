"""Run every benchmark script (bench_*.py), each in a fresh interpreter, and print their tables.

usage: python benchmarks/run_all.py [name ...]   (e.g. core tape data conv train onnx)
"""
import pathlib
import subprocess
import sys

here = pathlib.Path(__file__).resolve().parent
wanted = set(sys.argv[1:])
failed = []
for script in sorted(here.glob("bench_*.py")):
    name = script.stem[len("bench_"):]
    if wanted and name not in wanted:
        continue
    print(f"\n######## {name} ########", flush=True)
    if subprocess.run([sys.executable, str(script)], cwd=here).returncode:
        failed.append(name)
if failed:
    sys.exit(f"benchmarks failed: {failed}")
