#!/usr/bin/env python3
"""Makes the report tests' fixture (tests/report/fixture) from a reference results directory: the
benchmarks and kernels below, every repetition of each kept, so that each section of the report has
something to compute and the files stay small.

    tests/report/make_fixture.py reports/reference/NVIDIA_H100_80GB_HBM3 tests/report/fixture
"""
import json
import os
import re
import shutil
import sys

KEEP = re.compile(
    "|".join(
        [
            r"^copy/cudaMemcpy/bytes:(262144|67108864|1073741824)/",
            r"^flush/",
            r"^map/(01_template_functor/(scalar|vec|staged)|03_switch(\.hoisted)?/(scalar|vec)|"
            r"04_function_pointer\.(symbol|crowded)/(scalar|vec)|05_virtual(\.crowded)?/(scalar|vec)|"
            r"06_nvrtc_jit/vec|cub/DeviceTransform)/op:quadratic/type:f32/n:(65536|16777216|268435456)/k:1/",
            r"^map/(01_template_functor|03_switch(\.hoisted)?|04_function_pointer\.symbol|05_virtual|"
            r"06_nvrtc_jit|08_expression_jit)/vec/op:(quadratic|exp_sin_cos)/type:f32/n:(4194304|16777216)/"
            r"k:(1|16|256)/",
            r"^map/01_template_functor/vec/op:(quadratic|exp_sin_cos)/type:f64/n:(16777216|134217728)/",
            r"^tasks/(01_template_functor/grouped(_device)?|03_switch/per_element|05_virtual/per_element)/"
            r"layout:(uniform|random)/distinct:(1|32)/",
            r"^image/(01_template_functor|04_function_pointer\.symbol)/(global|tiled)/op:box_blur/3840x2160/"
            r"r:(1|8)/",
            r"^matmul/(01_template_functor/(naive|tiled)|cublas/sgemm)/semiring:plus_times/type:f32/"
            r"(1024x1024x1024|4096x4096x4096)/",
            r"^zip/(01_template_functor/(scalar|staged)|00_inline/vec)/op:add/type:f32/n:268435456/",
            r"^points/01_template_functor/(aos|soa)/op:scale_shift/type:f32/n:67108864/",
            r"^jit/",
        ]
    )
)


def trim_bench(src, dst):
    with open(src) as f:
        doc = json.load(f)
    doc["benchmarks"] = [b for b in doc["benchmarks"] if KEEP.search(b["run_name"])]
    with open(dst, "w") as f:
        json.dump(doc, f, indent=1)
    return len({b["run_name"] for b in doc["benchmarks"]})


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    print(
        "bench.json:",
        trim_bench(os.path.join(src, "bench.json"), os.path.join(dst, "bench.json")),
        "benchmarks",
    )
    for name in ("repeat.json", "jit_cache_disabled.json"):
        if os.path.exists(os.path.join(src, name)):
            print(name + ":", trim_bench(os.path.join(src, name), os.path.join(dst, name)), "benchmarks")
    with open(os.path.join(src, "resources.json")) as f:
        res = json.load(f)
    res["kernels"] = [
        k
        for k in res["kernels"]
        if re.search(
            r"map_(scalar|vec)_kernel<float|map_hoisted_kernel<float|" r"map_quadratic_(scalar|vec)<float>",
            k["name"],
        )
        and ("quadratic" in k["name"] or "ops::" not in k["name"])
    ]
    with open(os.path.join(dst, "resources.json"), "w") as f:
        json.dump(res, f, indent=1)
    # The peers' results and the profiler's counters whole: the peers, claims and profile sections
    # then run on real records, not on their fallbacks.
    for name in ("build_facts.json", "python.json", "profile.json"):
        shutil.copy(os.path.join(src, name), dst)
    print("resources.json:", len(res["kernels"]), "kernels")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(*sys.argv[1:])
