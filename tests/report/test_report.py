"""The whole report (reports/report.py and cdl_report/build.py) on the trimmed H100 results in
fixture/: every section, plot and table is written, findings are computed from the numbers, and
failed benchmarks head the report."""
import json
import os
import re
import shutil
import unittest

from helpers import FixtureTest, renamed


class ReportTest(FixtureTest):
    def test_writes_the_report_with_its_plots_and_tables(self):
        text = self.report(figures=True)
        for heading in (
            "What the L2 flush leaves behind",
            "The memory-bound map",
            "The dispatch penalty",
            "Per-element dispatch",
            "Run-time compilation",
            "Stencils",
            "Matrix products against cuBLAS",
            "Kernel resources",
            "The articles' claims",
            "Run to run",
        ):
            self.assertIn(heading, text)
        for png in (
            "map_bandwidth.png",
            "dispatch_penalty.png",
            "tasks_divergence.png",
            "image_blur.png",
            "matmul_cublas.png",
        ):
            with open(os.path.join(self.out, png), "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n", png)
            self.assertIn(f"]({png})", text)
        self.assertTrue(os.path.exists(os.path.join(self.out, "resources.md")))
        self.assertFalse([n for n in os.listdir(self.out) if ".tmp" in n], "temporary files left behind")
        # Findings are computed: the fixture's switch kernel reaches 0.830 of copy.
        self.assertIn("| `03_switch/vec` | 853.3 |", text)
        # Every claim of the articles has a row, with a verdict.
        claims = text.split("## The articles' claims")[1].split("\n## ")[0]
        rows = [l for l in claims.splitlines() if re.match(r"\| [A-E][0-9] \|", l)]
        self.assertEqual(
            [r.split(" | ")[0] for r in rows],
            [
                "| A1",
                "| A2",
                "| A3",
                "| B1",
                "| B2",
                "| B3",
                "| B4",
                "| C1",
                "| C2",
                "| D1",
                "| D2",
                "| D3",
                "| E1",
                "| E2",
                "| E3",
            ],
        )
        # Each verdict is the one its rule gives on the fixture's figures (test_claims.py tests each
        # rule in every outcome it names).
        verdicts = {r.split(" | ")[0][2:]: re.search(r"\*\*([a-z ]+)\*\* \|$", r).group(1) for r in rows}
        self.assertEqual(
            verdicts,
            {
                "A1": "not measured",  # a clash of the installed versions, not Numba refusing the argument
                "A2": "does not hold",
                "A3": "does not hold",
                "B1": "holds",
                "B2": "holds",
                "B3": "holds",
                "B4": "holds",
                "C1": "not measured",  # no 16 in the fixture: no compiler-free route takes run-time logic
                "C2": "does not hold",
                "D1": "depends",
                "D2": "holds",
                "D3": "not measured",
                "E1": "does not hold",
                "E2": "does not hold",  # the article's own Point validates as it is
                "E3": "depends",
            },
        )

    def test_the_scalar_map_is_explained_from_registers_and_occupancy(self):
        text = self.report()
        self.assertNotIn("most likely", text)
        for line in (
            "| `04_function_pointer.crowded/scalar` | 0.496 | 43 | 5 | 0.62 | 0 | 5 |",
            "| `04_function_pointer.symbol/scalar` | 0.715 | 32 | 8 | 1.00 | 0 | 5 |",
            (
                "`04_function_pointer.crowded/scalar` 43 registers, 5 blocks per SM (0.62 occupancy), 0.496"
                " of copy against 32, 8, 0.715 for the map alone (`04_function_pointer.symbol/scalar`)"
            ),
            "What else the module held set the registers, and so the occupancy.",
            # The resource table has each kernel's occupancy at its launch bound.
            (
                "| `04_function_pointer.map.cu` | `map_scalar_kernel<float, pointer_invoker<float (float)> >`"
                " | 32 | 8 × 256 (1.00) |"
            ),
            (
                "| `04_function_pointer.crowded.cu` | `map_scalar_kernel<float, pointer_invoker<float"
                " (float)> >` | 43 | 5 × 256 (0.62) |"
            ),
        ):
            self.assertIn(line, text)

    def test_missing_occupancy_is_said_at_the_top(self):
        """Before the first section: none measured (and why), or the kernels without it, named."""

        def top(text):
            return text.split("\n## ")[0]

        self.assertNotIn("occupancy is missing", self.report())

        def one_missing(doc):
            doc["kernels"][0].update(block=None, blocks_per_sm=None, occupancy=None)

        self.edit_results(one_missing, "resources.json")
        text = top(self.report())
        self.assertIn(
            "**WARNING: occupancy is missing**: `resources.json` has none for 1 of 22 kernels: `", text
        )

        def none_measured(doc):
            doc["occupancy_missing"] = "cdl_occupancy: no usable CUDA device"
            for k in doc["kernels"]:
                k.update(block=None, blocks_per_sm=None, occupancy=None)

        self.edit_results(none_measured, "resources.json")
        self.assertIn(
            (
                "**WARNING: occupancy is missing**: `resources.json` has none (cdl_occupancy: no usable CUDA"
                " device)"
            ),
            top(self.report()),
        )

    def test_copy_and_patch_images_resources_are_listed_where_the_build_has_them(self):
        """17's patched kernels have their image's resources, listed where resources.json has them."""
        self.assertNotIn("17's patched kernels are the images", self.report())

        def with_images(doc):
            image = dict(
                doc["kernels"][0], source="strategies/suite/copy_and_patch/stencils.cu", registers=24
            )
            doc["kernels"].append(dict(image, kernel="cdl_image_vec_4", name="cdl_image_vec_4"))

        self.edit_results(with_images, "resources.json")
        text = self.report()
        self.assertIn("17's patched kernels are the images", text)
        self.assertRegex(text, r"\| `stencils\.cu` \| `cdl_image_vec_4` \| 24 \|")

    def test_the_noise_threshold_comes_from_the_repeat_run_or_says_it_does_not(self):
        self.assertIn(
            "**Noise: 1.0%**, the 95% quantile of how far 22 benchmarks' medians moved", self.report()
        )
        os.remove(os.path.join(self.results, "repeat.json"))
        self.assertIn("**Noise: 2.0%**, no repeat run beside the results: the fallback 2%", self.report())

    def test_the_size_check_shows_the_waves(self):
        text = self.report()
        self.assertIn(
            "| 16 | `04_function_pointer.symbol` | 5.21 | 4.51 | -13.5% | 329.8 / 82.4 | 7.76 / 1.94 |"
            " waves |",
            text,
        )
        self.assertIn("So the size matters", text)
        self.assertIn("run other waves of blocks than the template's at one size or both", text)

    def test_text_only_writes_the_figures_links_and_no_figure(self):
        text = self.report()  # the tests' default: --text-only
        self.assertIn("](map_bandwidth.png)", text)
        self.assertFalse([n for n in os.listdir(self.out) if n.endswith(".png")])

    def test_the_gemm_progression_and_the_semirings_model_are_computed(self):
        # The fixture's 1024^3 template tiled kernel, copied as the earlier steps (each slower by a
        # known factor) and as (min,+) at 0.6 of its model: the tables and rules must follow.
        tiled = "matmul/01_template_functor/tiled/semiring:plus_times/type:f32/1024x1024x1024/"

        def steps(b):
            if b["run_name"].startswith(tiled):
                for step, slower in ((0, 3.0), (1, 1.5), (2, 1.2), (3, 1.1)):
                    c = renamed(b, "/tiled/", f"/tiled_step{step}/")
                    c["real_time"] *= slower
                    c["TOP/s"] /= slower
                    yield c
                c = renamed(b, "plus_times", "min_plus")
                c["real_time"] /= 0.3  # half the (+,×) rate is the model: 0.6 of it
                c["TOP/s"] *= 0.3
                yield c

        self.add_rows(steps)
        text = self.report(figures=True)
        section = text.split("### The tiled kernel, step by step")[1].split("\n## ")[0]
        self.assertIn("| step 3: A's shared rows padded |", section)
        self.assertIn("| 1.10× |", section)  # step 4 over step 3
        self.assertIn("| 1.25× |", section)  # step 2 over step 1: 1.5 / 1.2
        self.assertIn("the goal of at least 0.85 is missed", section)  # the fixture's tiled kernel: 0.24
        self.assertIn("| min_plus | 1024x1024x1024 | `01_template_functor/tiled` |", section)
        self.assertIn("| 0.60 |", section)
        self.assertIn("lowest fraction of its model: 0.60; the goal of at least 0.8 is missed", section)
        self.assertTrue(os.path.exists(os.path.join(self.out, "matmul_progression.png")))

    def test_the_objects_section_sets_coal_against_the_papers_gain(self):
        # The fixture's tasks rows (random, 32 ops) copied as the objects workload's forms, at
        # known times: virtual 1, coal 1/2 (a speed-up of 2, past the paper's 1.8), and the others.
        source = "tasks/05_virtual/per_element/layout:random/distinct:32/"

        forms = {
            "virtual": 1.0,
            "coal": 0.5,
            "coal_inlined": 1 / 1.2,
            "virtual_by_class": 1.1,
            "type_pointer": 0.4,
            "coal_prefetched": 0.25,
        }
        self.add_rows(
            lambda b: [
                renamed(
                    b,
                    "tasks/05_virtual/per_element/",
                    f"objects/11_type_from_address/{form}/",
                    real_time=b["real_time"] * factor,
                )
                for form, factor in forms.items()
                if b["run_name"].startswith(source)
            ]
        )
        text = self.report()
        section = text.split("## Virtual calls on an object per element")[1].split("\n## ")[0]
        self.assertIn("| random | 32 |", section)
        self.assertIn("| 0.50 |", section)  # coal's time over virtual's
        self.assertIn("| random | 32 | 1.8 | 2.00 | reproduces the paper's gain |", section)
        # COAL over virtual, then each one-thing ratio: by class 1.1, the search 0.5 / 0.4, the
        # objects asked for before the call 0.5 / 0.25.
        self.assertIn("| random | 32 | 0.50 | 1.10 | 1.25 | 2.00 |", section)

    def test_the_readme_table_and_answer_are_generated_into_their_blocks(self):
        readme = os.path.join(self.dir, "README.md")
        with open(readme, "w") as f:
            f.write(
                "# Strategies\n\n<!-- answer:begin -->\nstale text\n<!-- answer:end -->\n\n"
                "<!-- results:begin -->\nstale text\n<!-- results:end -->\nafter\n"
            )
        self.report("--readme", readme)
        with open(readme) as f:
            text = f.read()
        self.assertNotIn("stale text", text)
        self.assertTrue(text.endswith("<!-- results:end -->\nafter\n"))
        self.assertIn("| `08_expression_jit` | – | – | (0.67) | (0.99) |", text)
        self.assertIn("In parentheses: 08's vec kernel runs one k loop", text)
        # The blur's column, from the stencil section's findings (global over tiled at r = 8).
        self.assertIn("| strategy | blur r = 8: global / tiled |", text)
        self.assertIn("| `01_template_functor` | 1.36 |", text)
        answer = text.split("<!-- answer:begin -->")[1].split("<!-- answer:end -->")[0]
        self.assertIn("**The answer.**", answer)
        # The report's links, made links into the report's file from the README's folder.
        self.assertIn("](out/report.md#the-dispatch-penalty-time-against-k-map-float32-n--224)", answer)
        self.assertNotIn("](#", answer)

    def test_clocks_that_moved_are_warned_about(self):
        self.assertNotIn("WARNING: the clocks", self.report())

        def throttled(doc):
            end = json.loads(doc["context"]["cdl_clocks_end"])
            end.update(sm_mhz=1500, reason_names=["sw_power_cap"])
            doc["context"]["cdl_clocks_end"] = json.dumps(end)

        self.edit_results(throttled)
        text = self.report()
        self.assertIn(
            (
                "**WARNING: the clocks did not hold during this run**: the SM clock moved from 1980 MHz at"
                " the start to 1500 MHz at the end; at the end the driver was slowing the GPU down"
                " (sw_power_cap)"
            ),
            text,
        )

    def test_a_failed_benchmark_is_listed_first_and_fails_the_run(self):
        def fail_one(doc):
            doc["benchmarks"].append(
                {
                    "name": "map/05_virtual/vec/op:quadratic/type:f32/n:16/k:1",
                    "run_name": "map/05_virtual/vec/op:quadratic/type:f32/n:16/k:1",
                    "error_occurred": True,
                    "error_message": "validation failed: WRONG RESULT",
                }
            )

        self.edit_results(fail_one)
        text = self.report(status=1)
        self.assertLess(text.index("ERRORS"), text.index("The memory-bound map"))
        self.assertIn("validation failed: WRONG RESULT", text)

    def test_todays_systems_missing_from_python_json_are_named_with_the_phase_that_adds_them(self):
        text = self.report()
        for name in ("triton", "torch", "jax"):
            self.assertRegex(text, rf"\| `{name}` \| not run \| not in this `python.json`: .*`today` phase")

        def ran(doc):
            doc["cdl_python"]["systems"]["triton"] = {"status": "skipped", "reason": "no module named triton"}

        self.edit_results(ran, "python.json")
        text = self.report()
        self.assertIn("| `triton` | skipped | no module named triton |", text)
        self.assertNotRegex(text, r"\| `triton` \| not run \|")
        self.assertRegex(text, r"\| `jax` \| not run \|")

    def test_a_new_op_with_no_compile_is_set_beside_the_compiles_as_its_first_result(self):
        def interpreted(doc):
            doc["cdl_python"]["experiments"].append(
                {
                    "claim": "C1",
                    "name": "PyCUDA, no compiler: a new op as data",
                    "runs": True,
                    "valid": True,
                    "error": "",
                    "system": "pycuda",
                    "figures": {
                        "module_load_ms": 0.55,
                        "encode_ms": 8.52,
                        "first_result_ms": 8.75,
                        "n": 1048576,
                    },
                }
            )

        self.edit_results(interpreted, "python.json")
        text = self.report()
        # In the new-source column (the column of a new process's first op is left out where empty).
        self.assertRegex(
            text,
            r"\| pycuda \| PyCUDA, no compiler: a new op as data \| (– \| )?no compile: 8.75 ms to the first"
            r" result, 8.52 ms of it writing the program, 0.55 ms of it loading the file \| – \| – \|",
        )

    def test_without_the_optional_files_the_report_says_what_is_missing(self):
        for name in ("resources.json", "build_facts.json", "repeat.json", "jit_cache_disabled.json"):
            os.remove(os.path.join(self.results, name))
        text = self.report()
        self.assertIn("No `resources.json` beside the results", text)
        self.assertNotIn("A kernel may call other kernels", text)
        self.assertNotIn("CUDA_CACHE_DISABLE=1` ms", text)

    def test_a_second_run_gives_the_run_to_run_spread(self):
        def slower(doc):
            for b in doc["benchmarks"]:
                if (
                    b["run_name"].startswith("map/01_template_functor/vec/")
                    and b.get("aggregate_name") == "median"
                ):
                    b["real_time"] *= 1.05

        shutil.copy(os.path.join(self.results, "bench.json"), os.path.join(self.results, "repeat.json"))
        self.edit_results(slower, "repeat.json")
        text = self.report()
        self.assertIn("## Run to run", text)
        self.assertIn("5.00% at most", text)


class OutlineTest(FixtureTest):
    def test_the_findings_and_the_page_follow_one_list_of_sections(self):
        """outline.SECTIONS is read by both stages: each section that finds has its key in the findings,
        a `last` section's find sees every other's findings already, and a section's add is called in
        the outline's order with its own findings."""
        from unittest import mock

        from cdl_report import build, findings, outline
        from cdl_report.results import Results

        results = Results(self.results)
        seen = {}  # each section's key: the keys found before its find ran

        def spy(section):
            def find(run):
                seen[section.key] = set(run.found)
                return section.find(run)

            return outline.Section(
                section.key, section.name, section.find and find, section.add, section.last
            )

        spied = [spy(s) for s in outline.SECTIONS]
        with mock.patch.object(findings, "SECTIONS", tuple(spied)):
            found, run = findings.compute(results, build.guarded)
        keys = {s.key for s in outline.SECTIONS if s.find}
        self.assertEqual(set(found), keys | {"noise", "noise_how"})
        for s in outline.SECTIONS:
            if s.last:
                self.assertGreaterEqual(seen[s.key], keys - {x.key for x in outline.SECTIONS if x.last})
        added = []
        rendered = [
            outline.Section(s.key, s.name, s.find, lambda doc, r, f, s=s: added.append((s.name, f)), s.last)
            for s in outline.SECTIONS
        ]
        with mock.patch.object(build, "SECTIONS", tuple(rendered)), mock.patch.object(
            findings, "compute", lambda *a: (found, run)
        ):
            build.write_report(results, self.out, figures=False)
        self.assertEqual([n for n, _ in added], [s.name for s in outline.SECTIONS])
        for (name, f), s in zip(added, outline.SECTIONS):
            self.assertIs(f, found.get(s.key), name)


if __name__ == "__main__":
    unittest.main()
