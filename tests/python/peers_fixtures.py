"""What the Python peers' tests share: the paths, the problems cdl_problem writes (its path is the
test files' first argument, ctest's CDL_PROBLEM), and installs that break the way real ones do."""
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
PEERS = os.path.join(ROOT, "bench", "python")
sys.path.insert(0, PEERS)
sys.path.insert(0, os.path.join(ROOT, "tests", "report"))

CDL_PROBLEM = None
PROBLEMS = {
    "map": "op=exp_sin_cos type=f32 n=1000 k=4",
    "zip": "op=add type=f64 n=1001",
    "tasks": "layout=random distinct=32 n=5000",
    "image": "op=sobel 37x5 r=1",
}


def make_problem(workload, spec, where):
    path = os.path.join(where, workload)
    run = subprocess.run([CDL_PROBLEM, path, workload, *spec.split()], capture_output=True, text=True)
    return path, run


PYCUDA_BANNER = """-------------------------------------------------------------------
PyCUDA ERROR: The context stack was not empty upon module cleanup.
-------------------------------------------------------------------
A context was still active when the context stack was being
cleaned up. At this point in our execution, CUDA may already
have been deinitialized, so there is no way we can finish
cleanly. The program will be aborted now.
Use Context.pop() to avoid this problem.
-------------------------------------------------------------------
"""

FAKE_PACKAGES = {  # each the way a real install breaks
    "cupy/__init__.py": "raise ImportError('numpy.core.multiarray failed to import')\n",
    "numba/__init__.py": "raise ImportError('Numba needs NumPy 2.3 or less. Got NumPy 2.5.')\n",
    "cuda/__init__.py": "",
    "cuda/bindings/__init__.py": (
        "raise ModuleNotFoundError(\"No module named 'cuda.bindings'\", name='cuda.bindings')\n"
    ),
    "pycuda/__init__.py": "raise ModuleNotFoundError(\"No module named 'pycuda'\", name='pycuda')\n",
    "torch/__init__.py": "raise ModuleNotFoundError(\"No module named 'torch'\", name='torch')\n",
    "jax/__init__.py": "raise ImportError('jaxlib version 0.4.30 is older than jax requires (0.11.2)')\n",
}


def main():
    """unittest.main, the program's first argument taken as cdl_problem's path."""
    global CDL_PROBLEM
    CDL_PROBLEM = os.path.abspath(sys.argv.pop(1))
    unittest.main(module="__main__")
