"""The report's pages as a reader meets them (issue 64): a run that cannot decide says so, the contents
and terms, no table wider than 8 columns, the details page, each committed reference within its word
budget, the launches axis, and the dispatch penalty's cause."""
import json
import os
import re
import shutil
import tempfile
import unittest
from types import SimpleNamespace

from helpers import ROOT, FixtureTest, renamed, run_report

from cdl_report import document, queries
from cdl_report.sections import header, launches


class UndecidedTest(FixtureTest):
    def test_a_run_of_three_repetitions_says_it_cannot_decide_and_marks_its_ratios(self):
        def three(doc):  # every benchmark cut to its first three repetitions, as the quick mode runs
            doc["benchmarks"] = [b for b in doc["benchmarks"] if b.get("repetition_index", 0) < 3]

        self.edit_results(three)
        text = self.report()
        self.assertIn("**This run cannot decide.** Most benchmarks ran 3 repetitions", text)
        self.assertRegex(text, r"\| [0-9]+\.[0-9]{2}\? \|")  # a dispatch ratio beyond the noise, not decided
        first_line = next(
            line for line in text.splitlines() if line.startswith("**") and "copy bandwidth" in line
        )
        self.assertIn("· **not decided**: 3 repetitions a benchmark are too few", first_line)

    def test_a_quick_run_names_what_it_left_to_a_full_run_and_the_command_for_each(self):
        def quick(doc):  # as the quick mode runs: three repetitions, no stream over 100 launches
            doc["context"]["cdl_mode"] = "quick"
            doc["benchmarks"] = [
                b
                for b in doc["benchmarks"]
                if b.get("repetition_index", 0) < 3
                and not re.search(r"^tiered/.*/launches:[0-9]{4,}/", b["run_name"])
            ]

        def peers(doc):  # as cdl_peers --quick writes it (results_file.merge)
            doc["context"]["cdl_mode"] = "quick"
            doc["cdl_python"]["experiments"] = []
            doc["cdl_python"]["experiments_left_out"] = "not run in the quick mode"
            doc["cdl_python"]["systems"]["jax"] = {"status": "skipped", "reason": "not run in the quick mode"}

        self.edit_results(quick)
        self.edit_results(peers, "python.json")
        os.remove(os.path.join(self.results, "jit_cache_disabled.json"))
        text = self.report()
        left = next(line for line in text.splitlines() if line.startswith("**Left to a full run**"))
        for what in (
            "the JIT stages with the compilers' caches off (`--phases noise`)",
            "the articles' experiments",
            "jax (`--phases peers,today`)",
        ):
            self.assertIn(what, left)
        self.assertIn("this quick run left the articles' experiments to a full run", text)
        # The fixture has no tiered streams: the rule on a quick run's streams, and on a full run.
        streams = [({"launches": "10"}, {}), ({"launches": "100"}, {})]
        quick_run = SimpleNamespace(context={"cdl_mode": "quick"}, select=lambda workload: streams)
        self.assertEqual(
            header.left_out(quick_run, None, {}),
            ["the tiered streams of more than 100 launches (`--phases suite`)"],
        )
        streams.append(({"launches": "10000"}, {}))
        self.assertEqual(header.left_out(quick_run, None, {}), [])
        full_run = SimpleNamespace(context={"cdl_mode": "full"}, select=lambda workload: [])
        self.assertEqual(header.left_out(full_run, None, None), [])

    def test_a_full_run_does_not_say_so(self):
        text = self.report()
        self.assertNotIn("This run cannot decide", text)
        self.assertNotIn("Left to a full run", text)
        self.assertNotIn("left the articles' experiments", text)
        first_line = next(
            line for line in text.splitlines() if line.startswith("**") and "copy bandwidth" in line
        )
        self.assertNotIn("not decided", first_line)


class ContentsAndTermsTest(FixtureTest):
    def test_the_first_screen_lists_the_sections_and_the_report_defines_its_terms(self):
        pages = self.pages()
        for page in pages.values():  # each page lists its own sections, before the first
            contents = next(line for line in page.splitlines() if line.startswith("**Contents.**"))
            for heading in (line[3:] for line in page.splitlines() if line.startswith("## ")):
                self.assertIn(f"[{heading}](", contents)
            self.assertLess(page.index("**Contents.**"), page.index("\n## "))
        self.assertIn("[the details page](details.md)", pages["report.md"])
        terms = pages["report.md"].split("\n## Terms\n", 1)[1]
        for term in ("k", "vec, scalar", "copy bandwidth", "of copy", "noise", "not decided", "p10–p90"):
            self.assertIn(f"- **{term}**: ", terms)


class TableWidthTest(FixtureTest):
    def test_no_table_is_wider_than_eight_columns_and_a_wide_one_keeps_its_keys(self):
        widths = [line.count("|") - 1 for line in self.report().splitlines() if line.startswith("|---")]
        self.assertTrue(widths)
        self.assertLessEqual(max(widths), document.MAX_COLUMNS)
        wide = document.table(
            ["op", "k"] + [f"c{i}" for i in range(10)], [["q", 1] + list(range(10))], keys=2
        )
        parts = wide.strip().split("\n\n")
        self.assertEqual(len(parts), 2)
        self.assertTrue(all(p.startswith("| op | k |") for p in parts))
        self.assertIn("| q | 1 | 6 | 7 | 8 | 9 |", parts[1])


class DetailsPageTest(FixtureTest):
    def test_what_the_answer_does_not_need_is_on_the_details_page_and_every_link_lands(self):
        pages = self.pages()
        anchors = {
            name: {
                document.anchor(line.lstrip("#").strip())
                for line in text.splitlines()
                if line.startswith("##")
            }
            for name, text in pages.items()
        }
        self.assertIn("## The articles' claims, checked", pages["details.md"])
        self.assertNotIn("## The articles' claims, checked", pages["report.md"])
        self.assertIn("## The dispatch penalty", pages["report.md"])
        self.assertLess(len(pages["report.md"].split()), len(pages["details.md"].split()))
        # A full table of a section that stays (doc.detail) moves, and the section links to it.
        self.assertIn("### Every implementation of the map", pages["details.md"])
        self.assertNotIn("| implementation | median µs |", pages["report.md"])
        self.assertIn("](details.md#every-implementation-of-the-map", pages["report.md"])
        for name, text in pages.items():
            for target, anchor in re.findall(r"\]\(((?:report|details)\.md)?(#[^)]+)\)", text):
                with self.subTest(page=name, link=target + anchor):
                    self.assertIn(anchor, anchors[target or name])


class ReferencePagesTest(unittest.TestCase):
    def test_each_reference_report_is_short_and_opens_with_the_answer(self):
        """The committed references' report.md (reports/report.py regenerates them): at most 6,000 words,
        opening with the device line, the answer, its table and figure, then the contents."""
        root = os.path.join(ROOT, "reports", "reference")
        for device in sorted(os.listdir(root)):
            with open(os.path.join(root, device, "report.md")) as f:
                text = f.read()
            with self.subTest(device=device):
                self.assertLessEqual(len(text.split()), 6000)
                order = [
                    text.index(m)
                    for m in ("copy bandwidth", "**The answer.**", "| the op is", "![", "**Contents.**")
                ]
                self.assertEqual(order, sorted(order))
                answer = text.split("**The answer.**", 1)[1].split("\n\n", 1)[0]
                self.assertLessEqual(len(answer.split()), 250)

    def test_each_committed_page_is_what_the_report_writes_from_the_files_beside_it(self):
        """A reference's pages are the report's, not an older report code's: rendered again (text only)
        into another folder, each Markdown page is the same but for the path of the articles' page,
        which is relative to where a page is written."""
        root = os.path.join(ROOT, "reports", "reference")
        articles = os.path.join(ROOT, "reports", "cdl_report", "claims", "articles.md")
        for device in sorted(os.listdir(root)):
            committed = os.path.join(root, device)
            with self.subTest(device=device), tempfile.TemporaryDirectory() as out:
                run = run_report(committed, out)
                self.assertEqual(run.returncode, 0, run.stderr)
                for page in sorted(p for p in os.listdir(out) if p.endswith(".md")):
                    with open(os.path.join(out, page)) as f:
                        written = f.read().replace(
                            os.path.relpath(articles, out), os.path.relpath(articles, committed)
                        )
                    with open(os.path.join(committed, page)) as f:
                        self.assertEqual(
                            written,
                            f.read(),
                            f"{device}/{page} is not what reports/report.py writes now: regenerate it"
                            f" (reports/report.py reports/reference/{device})",
                        )

    def test_the_strategies_readmes_tables_are_what_the_report_writes_from_its_reference(self):
        """strategies/README.md's answer and results table, from the reference its first line names,
        rendered again into a copy of it: the same but for the links, which lead to where the report
        was written."""
        readme = os.path.join(ROOT, "strategies", "README.md")
        with open(readme) as f:
            committed_text = f.read()
        device = re.search(r"\(\.\./reports/reference/([^/]+)/report\.md\)", committed_text).group(1)
        reference = os.path.join(ROOT, "reports", "reference", device)
        with tempfile.TemporaryDirectory() as work:
            out, copy = os.path.join(work, "out"), os.path.join(work, "README.md")
            shutil.copy(readme, copy)
            run = run_report(reference, out, "--readme", copy)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(copy) as f:
                written = f.read().replace(
                    f"]({os.path.relpath(out, work)}/",
                    f"]({os.path.relpath(reference, os.path.join(ROOT, 'strategies'))}/",
                )
        self.assertEqual(
            written,
            committed_text,
            f"strategies/README.md is not what reports/report.py writes now: regenerate it"
            f" (reports/report.py reports/reference/{device} --readme strategies/README.md)",
        )


class LaunchesTest(FixtureTest):
    def test_the_cheapest_route_by_launches_names_two_only_where_their_ranges_overlap(self):
        self.assertEqual(launches.total((1.0, 2.0, 3.0), (10.0, 20.0, 30.0), 100), (2.0, 4.0, 6.0))
        apart = {"a": (1.0, 2.0, 3.0), "b": (3.5, 4.0, 5.0)}
        self.assertEqual(launches.cheapest(apart), ["a"])
        close = {"a": (1.0, 2.0, 3.0), "b": (2.5, 2.6, 5.0), "c": (9.0, 9.5, 10.0)}
        self.assertEqual(launches.cheapest(close), ["a", "b"])
        self.assertEqual(launches.cheapest({"a": (5.0, 6.0, 7.0), "b": (1.0, 2.0, 3.0)}), ["b"])

    def test_the_sums_picks_are_checked_against_streams_of_one_op(self):
        """06's streams run the built-in op and the others a text of 08's language: a route is set
        against another only within one; a pick counts where the route that measured least is among
        those the sum names."""

        class Streams:
            per_route = {"16_interpreter": 50.0, "17_copy_and_patch": 45.0, "08_expression_jit": 44.0}

            def select(self, workload, **fields):
                if workload == "map":  # each route's kernel, µs: min, median, max alike
                    kernels = dict(self.per_route, **{"06_nvrtc_jit": 44.0})
                    return [({}, {f"{r}/vec": {"min": t, "median": t, "max": t} for r, t in kernels.items()})]
                measured = {  # ms, each stream's total as timed whole
                    100: {"16_interpreter": 6.0, "17_copy_and_patch": 5.0, "08_expression_jit": 29.0},
                    10_000: {"16_interpreter": 510.0, "17_copy_and_patch": 480.0, "08_expression_jit": 470.0},
                }
                return [
                    (
                        {"n": "16777216", "k": "1", "launches": str(n)},
                        {
                            f"{r}/vec": {"median": 1000 * ms}
                            for r, ms in dict(m, **{"06_nvrtc_jit": 1.0}).items()
                        },
                    )
                    for n, m in measured.items()
                ]

        fixed = {
            "16_interpreter": (0.05, 0.08, 0.1),
            "17_copy_and_patch": (0.4, 0.5, 0.6),
            "08_expression_jit": (20.0, 24.0, 30.0),
            "06_nvrtc_jit": (40.0, 48.0, 60.0),
        }
        ratios, agree, pairs, missed = launches.streams_check(Streams(), fixed)
        self.assertEqual(len(ratios), 8)  # every route's stream against its own sum, 06's too
        # 100 launches: 17 (5.0 ms) and 16 (5.08 ms) overlap in the sum, and 17 measured least;
        # 10,000: the sum names 17 alone (450.5 ms against 08's 464.4), and 08 measured least.
        # 06's 1 ms, least of all, is of another op: no pair of its own.
        self.assertEqual((agree, pairs), (1, 2))
        self.assertEqual(len(missed), 1)
        least, picked, ratio = missed[0]
        self.assertEqual((least, picked), ("08_expression_jit", "17_copy_and_patch"))
        self.assertAlmostEqual(ratio, 480.0 / 470.0)

    def test_the_first_screen_names_the_command_and_gives_the_launches_axis(self):
        text = self.report()
        first = text.split("\n## ", 1)[0]
        self.assertIn("`cdl_run --expr 'your op' --n N --launches L`", first)
        table = first.split("**Your own op, by how many times it runs.**", 1)[1]
        self.assertIn("| launches | n = 2^24 |", table)
        for launches_ in ("| 1 |", "| 10 |", "| 100 |", "| 10,000 |"):
            self.assertIn(launches_, table)
        # The fixture's one-time and per-launch figures decide each cell: 08's compile is the cheapest,
        # and its total is its new op's compile plus 10,000 of its kernel's median, from bench.json.
        with open(os.path.join(self.results, "bench.json")) as f:
            medians = {
                b["run_name"].split("/iterations:")[0]: b["real_time"]
                * {"us": 1e-3, "ms": 1.0}[b["time_unit"]]
                for b in json.load(f)["benchmarks"]
                if b.get("aggregate_name") == "median"
            }
        total = (
            medians["jit/compile/08/new_op/map/op:quadratic/type:f32"]
            + 10_000 * medians["map/08_expression_jit/vec/op:quadratic/type:f32/n:16777216/k:1"]
        )
        self.assertIn(f"| 10,000 | `08_expression_jit` ({total:.3g} ms) |", table)
        self.assertIn("The run timed no stream of launches to set the sum against.", table)

    def test_copy_and_patch_is_a_route_where_the_run_has_it(self):
        """17 beside the others: with its kernel as fast as 08's and a new op at a hundredth of 08's
        compile, its total is the least at 10,000 launches, and its one-time cost is listed."""

        def add_copy_and_patch(doc):
            added = []
            for b in doc["benchmarks"]:
                if b["run_name"].startswith("map/08_expression_jit/vec/op:quadratic/"):
                    added.append(renamed(b, "08_expression_jit/", "17_copy_and_patch/"))
                elif b["run_name"].startswith("jit/compile/08/new_op"):
                    scale = {"real_time": b["real_time"] / 100, "cpu_time": b["cpu_time"] / 100}
                    added.append(renamed(b, "jit/compile/08/new_op", "jit/first_result/17/new_op", **scale))
            doc["benchmarks"] += added

        self.edit_results(add_copy_and_patch)
        first = self.report().split("\n## ", 1)[0]
        table = first.split("**Your own op, by how many times it runs.**", 1)[1]
        self.assertRegex(table, r"\| 10,000 \| `17_copy_and_patch` \(")
        self.assertRegex(table, r"One-time: .*`17_copy_and_patch` [0-9.]+ ms")
        self.assertIn("`17_copy_and_patch` runs only the ops its stencils hold", table)


class DispatchCauseTest(FixtureTest):
    def test_the_indirect_ways_cost_is_set_beside_their_counted_calls_or_left_unexplained(self):
        """The penalty's cause is the kernels' calls through a register, counted in their SASS
        (resources.json) beside the template's; without those counts the report gives no cause."""
        text = self.report()
        self.assertRegex(
            text,
            r"function pointers and virtual calls take [0-9.–]+× the template's time \(their vec kernels make"
            r" [0-9]+(–[0-9]+)? calls through a register where the template's makes 0, by their SASS\)",
        )
        self.assertNotIn("the arguments go through the ABI", text)
        os.remove(os.path.join(self.results, "resources.json"))
        self.assertNotIn("calls through a register where the template's", self.report())


if __name__ == "__main__":
    unittest.main()


class KernelFactsTest(unittest.TestCase):
    def test_two_kernels_resources_name_what_differs_first_then_what_both_share(self):
        kernel = dict(indirect_calls=0, registers=30, blocks_per_sm=8, block=256, occupancy=1.0, stack=32)
        other = dict(kernel, registers=32, stack=8, spill_stores=4)
        self.assertEqual(
            queries.kernels_facts([("a", kernel), ("b", other)]),
            "`a`: 30 registers, 0 B of spill stores, 32 B stack frame; `b`: 32 registers, 4 B of spill"
            " stores, 8 B stack frame; both 0 calls through a register, 8 blocks of 256 per SM (1.00"
            " occupancy)",
        )
        self.assertEqual(
            queries.kernels_facts([("a", kernel), ("b", kernel), ("c", dict(kernel, registers=40))]),
            "`a`: 30 registers; `b`: 30 registers; `c`: 40 registers; each 0 calls through a register, 8"
            " blocks of 256 per SM (1.00 occupancy), 0 B of spill stores, 32 B stack frame",
        )
