"""The claims of article 003 (D1, D2, D3): each claim, its rule in words, and the function that
answers it from the figures."""
from ..experiments import WORKS, outcome, tried
from ..sections import precision
from .rules import DEPENDS, FAILS, HOLDS, UNMEASURED
from .rules import Claim, direction, fmt_ms, gain, missing, one, peer_ratios, records_of


def d1(d):
    ratios, parts = [], []
    for e in records_of(d, "D1"):
        if not (e["runs"] and e.get("valid")):
            parts.append(f"{e['system']}: {outcome(e)}")
            continue
        for problem, f in e["figures"].items():
            r = f["gpu_with_transfers_ms"] / f["numpy_ms"]
            ratios.append(r)
            parts.append(
                f"{e['system']} {problem}: NumPy {fmt_ms(f['numpy_ms'])}, GPU with transfers "
                f"{fmt_ms(f['gpu_with_transfers_ms'])} (×{r:.2f}), kernels alone "
                f"{fmt_ms(f.get('gpu_kernels_ms', f.get('gpu_kernel_ms', float('nan'))))}"
            )
    if not ratios:
        return (
            missing("NumPy on the host against CuPy and Numba with their transfers")
            if not parts
            else ("CuPy, Numba", "; ".join(parts) + ".", UNMEASURED)
        )
    return (
        "CuPy, Numba",
        "Time with the transfers / NumPy on the host: " + "; ".join(parts) + ".",
        gain(ratios, d.noise),
    )


def d2(d):
    ratios = {
        f"C++ {kind} ({op}, k = {k})": x
        for (kind, op, k), x in precision.ratios(d.found["precision"]).items()
    }
    for peer in ("cupy.RawKernel", "cupy.ElementwiseKernel"):
        per = {}
        for (w, f, p), ratio in d.found["python"]["ratio"].items():
            fd = dict(f)
            if p == peer and w == "map" and fd.get("op") == "quadratic" and fd.get("k") == "1" and ratio:
                row = d.python.bench.problems[(w, f)]
                per[fd["type"]] = next(r["median"] for e, r in row.items() if e.startswith(peer)) / int(
                    fd["n"]
                )
        if "f32" in per and "f64" in per:
            ratios[f"{peer} (memory)"] = per["f64"] / per["f32"]
    figures = "; ".join(f"{k}: f64 takes {v:.2f}× per element" for k, v in ratios.items()) or "–"
    e = one(d, "D2")
    if e and e["runs"] and e.get("valid"):
        f32, f64 = e["figures"]["float32"], e["figures"]["float64"]
        n = e["figures"].get("n", 1 << 26)  # the experiment's size: 2^26 where a file does not say
        blocks = n // 128
        figures += (
            ". CuPy's ElementwiseKernel at its default 128 threads a block: float32"
            f" {f32['default']['frac_copy']:.2f} of copy, float64 {f64['default']['frac_copy']:.2f}; at 256:"
            f" float32 {f32['256']['frac_copy']:.2f}. With the same 2^{n.bit_length() - 1} elements, so the"
            f" same {blocks} blocks, float64 moves twice the bytes in"
            f" {f64['default']['ms'] / f32['default']['ms']:.2f}× the time (float32: one block per"
            f" {f32['default']['ms'] * 1e6 / blocks:.2f} ns)"
        )
        if f64["default"]["ms"] < 1.5 * f32["default"]["ms"]:
            figures += ": at 128 threads float32's time follows the number of blocks, not the bytes"
    if not ratios:
        return missing("float32 against float64 in C++ or CuPy")
    systems = [
        s
        for s, used in (
            ("CuPy", any(k.startswith("cupy") for k in ratios) or e),
            ("CUDA C++", precision.ratios(d.found["precision"])),
        )
        if used
    ]
    return "; ".join(systems), figures, direction(list(ratios.values()), d.noise, holds_if_below=False)


def d3(d):
    # Beside the verdict: each CuPy way against the C++ one-element-per-thread template kernel.
    ufunc, ew = peer_ratios(d, "cupy.ufunc_chain"), peer_ratios(d, "cupy.ElementwiseKernel")
    cpp = ""
    if ufunc or ew:
        cpp = (
            " Beside it, time / the C++ one-element-per-thread template kernel: ufunc chain "
            + (", ".join(f"{k} {v:.2f}×" for k, v in ufunc.items()) or "–")
            + "; ElementwiseKernel "
            + (", ".join(f"{k} {v:.2f}×" for k, v in ew.items()) or "–")
            + "."
        )
    e = one(d, "D3")
    if not e:
        answered, figures, verdict = missing(
            "article 003's example 3 against CuPy's other ways for the same code"
        )
        return ("CuPy" if cpp else answered), figures + cpp, verdict
    if tried(e) != WORKS:
        return "CuPy", f"Article 003's example 3 and CuPy's other ways: {outcome(e)}." + cpp, UNMEASURED
    ratios, parts = [], []
    for size, row in e["figures"].items():
        others = {k[: -len("_ms")]: v for k, v in row.items() if k != "article_ms"}
        ratios.append(row["article_ms"] / min(others.values()))
        parts.append(
            f"{size}: the article's {fmt_ms(row['article_ms'])}, "
            + ", ".join(f"{k} {fmt_ms(v)}" for k, v in others.items())
            + f" (the article's / the fastest: ×{ratios[-1]:.2f})"
        )
    figures = "Article 003's example 3, CUDA events on the GPU's data: " + "; ".join(parts) + "." + cpp
    fast = [r <= 1 + d.noise for r in ratios]
    return "CuPy", figures, HOLDS if all(fast) else FAILS if not any(fast) else DEPENDS


CLAIMS = [
    Claim(
        "D1",
        "003",
        'CuPy and Numba give "significant speedups" over NumPy on one CPU core',
        "CuPy, Numba",
        (
            "holds if the GPU, transfers to and from it included, beats NumPy on the host by more than the"
            " noise in every problem; does not hold if it does in none; depends otherwise"
        ),
        d1,
        timed=True,
    ),
    Claim(
        "D2",
        "003",
        '`np.float32` "for optimal GPU performance"',
        "CuPy",
        (
            "holds if float64 takes more time per element than float32 beyond the noise in every case"
            " measured; does not hold if it takes less beyond the noise in every case; depends otherwise"
        ),
        d2,
        timed=True,
    ),
    Claim(
        "D3",
        "003",
        "CuPy's ufunc chains and `ElementwiseKernel` are the way to write the GPU code",
        "CuPy",
        (
            "on the article's example 3 in CuPy: holds if the article's form (a ufunc chain, then an"
            " ElementwiseKernel) runs within the noise of the fastest of CuPy's other ways for the same code"
            " (cupy.fuse, one ElementwiseKernel, a RawKernel) at every size; does not hold if slower beyond"
            " the noise at every size; depends otherwise; the C++ kernels stand beside and do not decide"
        ),
        d3,
        timed=True,
    ),
]
