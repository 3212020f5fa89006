"""Whether a GPU is visible to the programs under test, for the Python test scripts (tests/faults,
tests/docs) that run them: nvidia-smi lists one and CUDA_VISIBLE_DEVICES does not hide it."""
import os
import subprocess

NO_GPU = dict(os.environ, CUDA_VISIBLE_DEVICES="")  # the environment of a machine without one


def gpu_visible():
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return listed.returncode == 0 and "GPU " in listed.stdout and os.environ.get("CUDA_VISIBLE_DEVICES") != ""
