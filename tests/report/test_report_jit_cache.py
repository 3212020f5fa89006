"""The report's run-time compilation sections on the trimmed H100 results in fixture/: what the
compilers' caches answer and what the host adds, from the paired floor ratios and the run with the
caches off."""
import os
import unittest

from helpers import FixtureTest, renamed


class JitCacheReportTest(FixtureTest):
    def test_paired_floor_ratios_and_the_drivers_compiler_time_are_read_when_recorded(self):
        text = self.report()
        self.assertIn("(the ratio of the two medians, measured apart)", text)

        def pair(doc):  # as bench/jit_stages.cpp records them: counters of each repetition and aggregate
            for b in doc["benchmarks"]:
                name = b["run_name"]
                if name.startswith("jit/compile/06/new_op/"):
                    b.update(x_floor=1.8, floor_ms=40.0)
                elif name.startswith("jit/compile/08/new_op/"):
                    b.update(x_floor=0.8, floor_ms=41.0)
                for key in ("name", "run_name"):
                    if key in b:
                        b[key] = b[key].replace("jit/link/08_ptx_to_cubin/", "jit/load/08_ptx/")
                if b["run_name"].startswith("jit/load/08_ptx/"):
                    b["driver_compiler_ms"] = 12.5

        self.edit_results(pair)
        text = self.report()
        self.assertIn(
            (
                "06 costs 1.80× this floor of any NVRTC route (paired: each iteration against a one-line"
                " kernel compiled beside it, 40 ms)"
            ),
            text,
        )
        self.assertIn("12.5 ms of it in the driver's compiler by its own account", text)
        self.assertIn("and 1.25× less than NVRTC takes for a one-line kernel", text)
        self.assertIn("compiled beside it, 41 ms)", text)

    def test_the_same_texts_shorter_compile_is_called_the_cache_only_where_the_caches_off_run_says(self):
        self.assertIn(
            "less; with the caches off (`CUDA_CACHE_DISABLE=1`) it takes 281 ms: that is", self.report()
        )

        def as_fast(doc):  # the same text as fast with the caches off: something else made it short
            for b in doc["benchmarks"]:
                if b["run_name"].startswith("jit/compile/06/same_text/") and b.get("aggregate_name") != "cv":
                    b["real_time"] = 21.0

        self.edit_results(as_fast, "jit_cache_disabled.json")
        self.assertIn(
            "less; with the caches off it takes 21 ms, inside the range it took with them on: not the"
            " driver's cache.",
            self.report(),
        )
        os.remove(os.path.join(self.results, "jit_cache_disabled.json"))
        self.assertIn(
            "less: whether that is the compiler's cache, no run with the caches off says.", self.report()
        )

    def test_a_new_ops_paired_ratios_tell_the_host_from_the_cache(self):
        # 07's link paired with the floor in both runs, the cache-off run on a slower host; the
        # smallest LTO link (jit/link/one_line_kernel/) beside it; nvJitLink's steps for the sentence.
        def paired(ratio, floor_ms, least=True):
            def edit(doc):
                added = []
                for b in doc["benchmarks"]:
                    if b["run_name"].startswith("jit/link/07/new_op"):
                        b.update(x_floor=ratio, floor_ms=floor_ms)
                        if least:
                            added.append(
                                renamed(
                                    b,
                                    "jit/link/07/new_op/map/op:quadratic/type:f32",
                                    "jit/link/one_line_kernel/new_op",
                                    x_floor=0.4,
                                )
                            )
                            added.append(
                                renamed(
                                    b, "jit/link/07/", "jit/phases/07_link/", to_ptx_ms=9.0, after_ptx_ms=8.0
                                )
                            )
                doc["benchmarks"] += added

            return edit

        self.edit_results(paired(0.85, 30.0))
        self.edit_results(paired(0.80, 48.0, least=False), "jit_cache_disabled.json")
        text = self.report()
        self.assertRegex(
            text, r"\| `jit/link/07/new_op/map/op:quadratic/type:f32` \|[^\n]*\| 0\.85 / 0\.80 \|\n"
        )
        self.assertRegex(
            text,
            r"with the caches off, the paired stages took [0-9.]+(–[0-9.]+)?× their milliseconds, the floors"
            r" compiled "
            r"beside them 1\.60×, and their ratios to those floors 0\.94×: the ratios held within "
            r"10 %, so what moved the milliseconds between the columns is the host's speed, which the pairing"
            r" cancels\.",
        )
        self.assertRegex(
            text,
            r"The least any LTO link costs, a one-line kernel's with a new one-line op"
            r" \(`jit/link/one_line_kernel/`\), "
            r"is [0-9.]+ ms, 0\.40× NVRTC's one-line floor compiled beside it, against 0\.85× for 07's: the"
            r" map's "
            r"kernel makes 53% of 07's link, and the rest is what any link costs\.",
        )
        self.edit_results(paired(0.60, 48.0, least=False), "jit_cache_disabled.json")
        self.assertIn(
            (
                "`jit/link/07/new_op/map/op:quadratic/type:f32`'s ratio moved by 29%, more than the 10 % the"
                " pairing is trusted to"
            ),
            self.report(),
        )


if __name__ == "__main__":
    unittest.main()
