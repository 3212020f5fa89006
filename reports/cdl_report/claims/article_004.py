"""The claims of article 004 (E1, E2, E3): each claim, its rule in words, and the function that
answers it from the figures."""
from ..experiments import NAMES, REFUSED, WORKS, not_counted, outcome, tried
from ..stats import span
from .rules import DEPENDS, FAILS, HOLDS, UNMEASURED
from .rules import Claim, by_trial, compiles, fact, failed_experiment, gain, missing, one, records_of


def e1(d):
    e = one(d, "E1")
    gd = fact(d.facts, "global_calls_device")
    probe = f" nvcc {'compiles' if compiles(gd, 'nvcc') else 'refuses'} the same in C++." if gd else ""
    if e:
        ran = f"{outcome(e)}{not_counted(e)}"
        figures = f"A SourceModule whose `__global__` function calls a `__device__` function: {ran}.{probe}"
        return "PyCUDA" + ("; nvcc" if gd else ""), figures, by_trial(e, FAILS, HOLDS)
    if not gd:
        return missing("the PyCUDA experiment and the build probes (cdl_build_facts)")
    return (
        "nvcc (the compiler PyCUDA's SourceModule runs)",
        (
            f"nvcc {'compiles' if compiles(gd, 'nvcc') else 'refuses'} a "
            "kernel calling a device function; every kernel of this suite calls its op as one."
        ),
        FAILS if compiles(gd, "nvcc") else HOLDS,
    )


def e2(d):
    records = records_of(d, "E2")
    aos = d.found["other"].get("aos_soa", {})
    failed = [n for n, _ in d.bench.errors if n.startswith("points/") and "/aos/" in n]
    if not records:
        if not aos:
            return missing("the structured-array experiments and the points workload")
        return (
            "CUDA C++ (not the article's PyCUDA structured arrays)",
            (
                "One skeleton takes the array of structs and the struct of arrays, "
                f"{'with ' + str(len(failed)) + ' AoS failures' if failed else 'validated'}; AoS / SoA time "
                f"{span(list(aos.values()))}×."
            ),
            HOLDS if failed else FAILS,
        )

    def described(e):
        f = e.get("figures", {})
        sizes = ""
        if "itemsize" in f:
            sizes = (
                f" (itemsize {f['itemsize']}"
                + (f", C sizeof {f['c_sizeof']}" if "c_sizeof" in f else "")
                + ")"
            )
        return f"{e['name']}: {outcome(e)}{sizes}"

    article = [e for e in records if e.get("article") == "004"]
    wider = [e for e in records if e.get("article") != "004"]
    figures = ""
    if article:
        figures = "The article's own struct: " + "; ".join(described(e) for e in article) + "."
    if wider:
        figures += (" Beside it, " if article else "") + "structs of mixed widths: "
        figures += "; ".join(described(e) for e in wider) + "."
    systems = ", ".join(NAMES.get(s, s) for s in sorted({e.get("system", "?") for e in article or wider}))
    if article:
        # Needing handling shows as a wrong result or a refusal of the struct as it is.
        needs = any((e["runs"] and not e.get("valid")) or tried(e) == REFUSED for e in article)
        verdict = HOLDS if needs else FAILS if all(tried(e) == WORKS for e in article) else UNMEASURED
        return systems, figures.strip(), verdict
    ok = [e["runs"] and e.get("valid") for e in wider]
    packed = [e["runs"] and e.get("valid") for e in wider if "packed" in e["name"]]
    verdict = FAILS if all(ok) else DEPENDS if packed and not all(packed) else UNMEASURED
    return systems + " (not the article's example)", figures.strip(), verdict


def e3(d):
    e = one(d, "E3")
    if not e:
        return missing("host-to-device transfers from page-locked and pageable memory")
    if not (e["runs"] and e.get("valid")):
        return failed_experiment(e, "E3")
    ratios, parts = [], []
    for size, f in e["figures"].items():
        mine = {
            "to the GPU": f["pinned_htod_ms"] / f["pageable_htod_ms"],
            "from the GPU": f["pinned_dtoh_ms"] / f["pageable_dtoh_ms"],
            "allocated for the call, from the GPU (the article's form)": (
                f["pinned_alloc_dtoh_ms"] / f["pageable_alloc_dtoh_ms"]
            ),
        }
        ratios += mine.values()
        kib = int(size) / 1024
        parts.append(f"{kib:.0f} KiB: " if kib < 1024 else f"{kib / 1024:.0f} MiB: ")
        parts[-1] += ", ".join(f"{k} ×{v:.2f}" for k, v in mine.items())
    return "PyCUDA", "Page-locked / pageable time: " + "; ".join(parts) + ".", gain(ratios, d.noise)


CLAIMS = [
    Claim(
        "E1",
        "004",
        '"Direct function calls from a global function to a device function are not permitted"',
        "PyCUDA",
        (
            "holds if PyCUDA's compiler refuses a SourceModule whose kernel calls a `__device__` function;"
            " does not hold if it runs and validates; not measured if it fails elsewhere or gives a wrong"
            " result"
        ),
        e1,
    ),
    Claim(
        "E2",
        "004",
        'struct data "needs explicit handling for memory alignment"',
        "PyCUDA",
        (
            "from the article's own struct array (`Point {float x, y}`) as it is: holds if it gives a wrong"
            " result or is refused; does not hold if it runs and validates; not measured if it fails"
            " elsewhere. Structs of mixed widths stand beside it; without the article's example they answer:"
            " does not hold if every one validates as it is, depends if a packed one does not (it needs"
            " `align=True`)"
        ),
        e2,
    ),
    Claim(
        "E3",
        "004",
        'page-locked host memory (`pagelocked_empty`) for "faster transfer"',
        "PyCUDA",
        (
            "holds if page-locked memory is faster than pageable by more than the noise in every copy"
            " measured (the article's 4 KiB and 256 MiB, each way, and the article's allocate-then-copy);"
            " does not hold if in none; depends otherwise"
        ),
        e3,
        timed=True,
    ),
]
