"""PyTorch's memory and events as the harness's Device: what the Triton and torch.compile peers run on
(a Triton kernel takes torch tensors and launches on torch's current stream, and so does the code
Inductor writes), so that both are timed by the same events on the stream they launch on.

A tasks input (cdl_problem's array of {op, p1, p2} records) is uploaded as three tensors, one per
field: these systems index tensors of one type, and a PyTorch user holds the records that way.
"""
import numpy as np

from . import harness


def import_torch(needed_by=""):
    """torch with a usable GPU, or Unavailable saying why in one line."""
    try:
        import torch
    except Exception as e:
        raise harness.Unavailable(harness.import_failure("torch", e) + needed_by)
    if not torch.cuda.is_available():
        raise harness.Unavailable(f"torch {torch.__version__} sees no CUDA device")
    return torch


class TorchDevice(harness.Device):
    def __init__(self, torch):
        self.torch = torch
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        self.props = {"name": p.name, "l2_bytes": int(p.L2_cache_size), "cc": f"{p.major}.{p.minor}"}
        # The L2 flush: a max over twice the L2, read once, one word written (the suite's read
        # flush in spirit: no dirty line of the flush is left for the timed call to write back).
        self.scratch = torch.zeros(2 * self.props["l2_bytes"] // 4, dtype=torch.int32, device="cuda")
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)
        # The hold: torch.cuda._sleep spins for a count of GPU cycles; their rate measured here.
        self.cycles_per_us = 1000.0
        self.cycles_per_us = self.cycles_per_us_measured()

    def cycles_per_us_measured(self, cycles=2_000_000):
        self.flush_l2()
        t = lambda: min(self.time_ms(lambda: self.torch.cuda._sleep(cycles)) for _ in range(5))
        return cycles / (t() * 1e3)

    def upload(self, array):
        if array.dtype.names:
            return {name: self.upload(np.ascontiguousarray(array[name])) for name in array.dtype.names}
        return self.torch.from_numpy(np.ascontiguousarray(array)).to("cuda")

    def empty_like(self, array):
        return self.torch.empty(array.shape, dtype=getattr(self.torch, array.dtype.name), device="cuda")

    def download(self, buffer):
        return buffer.cpu().numpy()

    def poison(self, buffer):
        buffer.view(self.torch.uint8).fill_(0xFF)

    def flush_l2(self, hold_us=0.0):
        self.torch.amax(self.scratch)
        if hold_us > 0:
            self.torch.cuda._sleep(int(hold_us * self.cycles_per_us))

    def elapsed_ms(self, start, stop):
        return start.elapsed_time(stop)

    def copy(self, dst, src):
        dst.copy_(src)

    def synchronize(self):
        self.torch.cuda.synchronize()

    def properties(self):
        return self.props
