"""No measured figure is copied by hand into the sources or the prose around the generated tables:
a copied number drifts from the reference it came from, and the suite would then show two numbers
for one measurement. Measured figures live in the reports and in the blocks reports/report.py
generates (strategies/README.md's results block); prose points to them. This test finds what looks
like a measured figure (a time, a bandwidth, a throughput, a fraction of copy or of cuBLAS, a
decimal ratio such as 1.08x, a register count) in the comments of strategies/, common/ and bench/,
and in the READMEs outside their generated blocks."""
import glob
import os
import re
import unittest

from helpers import ROOT

FIGURE = re.compile(
    r"\b\d+(\.\d+)?\s?(ms|µs|us|GB/s|TB/s|TOP/s|TFLOP/s)\b"
    r"|\b[01]?\.\d{2,}\s+of\s+(the\s+)?(copy|cuBLAS)"
    r"|\b\d+\.\d+\s?[x×](?=[\s,.;:)]|$)"
    r"|\bREG:\d+|\b\d+(-\d+)?\s+registers\b"
)
GENERATED = re.compile(r"<!-- (results|answer):begin -->.*?<!-- \1:end -->", re.S)
SOURCES = [
    "strategies/*.cu",
    "strategies/*.hpp",
    "strategies/*.cpp",
    "common/*.hpp",
    "common/*.cuh",
    "common/*.cpp",
    "common/*.cu",
    "common/skeletons/*",
    "bench/*.cpp",
    "bench/*.hpp",
]
READMES = ["README.md", "strategies/README.md"]


def comments(text):
    """The comment text of a C++/CUDA source, line by line (// comments; the sources use no /* */ prose)."""
    for number, line in enumerate(text.splitlines(), 1):
        if "//" in line:
            yield number, line[line.index("//") :]


def figures_in(path, text):
    lines = comments(text) if not path.endswith(".md") else enumerate(GENERATED.sub("", text).splitlines(), 1)
    return [
        f"{os.path.relpath(path, ROOT)}:{n}: {m.group(0)!r} in {line.strip()[:100]!r}"
        for n, line in lines
        for m in [FIGURE.search(line)]
        if m
    ]


class FiguresTest(unittest.TestCase):
    def test_no_measured_figure_is_copied_by_hand(self):
        found = []
        for pattern in SOURCES + READMES:
            for path in sorted(glob.glob(os.path.join(ROOT, pattern))):
                with open(path, encoding="utf-8") as f:
                    found += figures_in(path, f.read())
        self.assertEqual(
            found,
            [],
            "figures copied by hand (point to the report or the generated table):\n" + "\n".join(found),
        )

    def test_the_pattern_finds_what_it_is_for_and_not_sizes(self):
        for text in (
            "// 0.525 of cuBLAS",
            "// 1.084x the time",
            "// took 27 ms",
            "// 3033 GB/s",
            "// 2.5-3.5x at",
            "// reached 0.83 of the copy bandwidth",
            "// REG:38 STACK:0",
            "// takes 40 registers",
        ):
            self.assertTrue(figures_in("a.cu", text), text)
        for text in (
            "// a 32 x 32 tile",
            "// 8 x 8 results",
            "// 16-byte loads",
            "// 2^24 elements",
            "// k = 256",
            "// sm_90",
            "// 4 x float",
        ):
            self.assertFalse(figures_in("a.cu", text), text)
        self.assertFalse(
            figures_in("R.md", "<!-- results:begin -->\n0.5 of copy, 27 ms\n<!-- results:end -->\n")
        )


if __name__ == "__main__":
    unittest.main()
