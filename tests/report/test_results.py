"""The results model (reports/cdl_report/results.py): files that are missing, malformed or foreign
are refused with a message and exit status 2, and no report is written."""
import json
import os

from helpers import FixtureTest
from cdl_report.results import identity, ResultsError, stage_fields


class RefusalTest(FixtureTest):
    def test_a_truncated_results_file_is_refused(self):
        path = os.path.join(self.results, "bench.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text[: len(text) // 2])
        self.assert_refused("not a readable JSON file")

    def test_a_foreign_json_file_is_refused(self):
        with open(os.path.join(self.results, "bench.json"), "w") as f:
            json.dump({"hello": [1, 2, 3]}, f)
        self.assert_refused("not a Google Benchmark results file")

    def test_a_google_benchmark_file_from_another_program_is_refused(self):
        self.edit_results(lambda doc: doc["context"].pop("cdl_environment"))
        self.assert_refused("not from cdl_bench")

    def test_a_missing_results_file_is_refused(self):
        os.remove(os.path.join(self.results, "bench.json"))
        self.assert_refused("no such file")

    def test_a_benchmark_without_times_is_refused(self):
        def break_one(doc):
            row = next(b for b in doc["benchmarks"] if b.get("aggregate_name") == "median")
            del row["real_time"]

        self.edit_results(break_one)
        self.assert_refused("no usable real_time")

    def test_a_resources_file_of_another_schema_is_refused(self):
        with open(os.path.join(self.results, "resources.json"), "w") as f:
            json.dump({"schema": "something-else/1", "kernels": []}, f)
        self.assert_refused("not a cdl-resources/1 file")


class MalformedInputTest(FixtureTest):
    """Each file that lacks or garbles a field is refused, naming the file and the field."""

    def first_median(self, doc, workload="map/"):
        return next(
            b
            for b in doc["benchmarks"]
            if b.get("aggregate_name") == "median" and b["run_name"].startswith(workload)
        )

    def test_a_median_without_its_fraction_of_copy_or_bandwidth_is_refused(self):
        for field in ("frac_copy", "GB/s"):
            self.fresh()
            self.edit_results(lambda doc: self.first_median(doc).pop(field))
            self.assert_refused(f"bench.json: benchmark map/")
            self.assert_refused(f"its median has no number '{field}'")

    def test_an_aggregate_without_its_name_is_refused(self):
        self.edit_results(lambda doc: self.first_median(doc).pop("aggregate_name"))
        self.assert_refused("an aggregate without its aggregate_name")

    def test_a_kernel_without_its_occupancy_field_is_refused(self):
        self.edit_results(lambda doc: doc["kernels"][3].pop("blocks_per_sm"), "resources.json")
        self.assert_refused("resources.json: a kernel without 'blocks_per_sm'")

    def test_an_experiment_without_runs_or_figures_is_refused(self):
        for field in ("runs", "figures"):
            self.fresh()
            self.edit_results(lambda doc: doc["cdl_python"]["experiments"][0].pop(field), "python.json")
            self.assert_refused(f"python.json: experiment ")
            self.assert_refused(f"'{field}'")

    def test_a_figure_a_claim_needs_is_an_input_error_with_its_section(self):
        def drop(doc):
            e = next(e for e in doc["cdl_python"]["experiments"] if e["claim"] == "D2")
            e["figures"].pop("float32")

        self.edit_results(drop, "python.json")
        self.assert_refused(
            "the claims section: a results file lacks or garbles what it needs: KeyError: 'float32'"
        )


class ForeignFileTest(FixtureTest):
    """A file of another device, or of another revision where it must measure the same code, is set
    aside and named at the top; a missing optional file is named where its section would be."""

    def head(self, text):
        return text.split("\n## ")[0]

    def test_a_repeat_run_of_another_device_or_revision_is_set_aside(self):
        def other_device(doc):
            env = json.loads(doc["context"]["cdl_environment"])
            env["device"]["name"] = "NVIDIA H200"
            doc["context"]["cdl_environment"] = json.dumps(env)

        self.edit_results(other_device, "repeat.json")
        text = self.report()
        self.assertIn(
            "**WARNING: `repeat.json` set aside**: it is of NVIDIA H200, not NVIDIA H100 80GB HBM3",
            self.head(text),
        )
        self.assertIn("no repeat run beside the results", text)
        self.fresh()
        self.edit_results(
            lambda doc: doc["context"].update(git_revision="0000000"), "jit_cache_disabled.json"
        )
        self.assertIn(
            "`jit_cache_disabled.json` set aside**: it is of revision 0000000", self.head(self.report())
        )

    def test_peers_and_profile_of_another_device_are_set_aside(self):
        self.edit_results(lambda doc: doc["context"].update(device="NVIDIA H200"), "python.json")
        self.edit_results(lambda doc: doc["context"].update(device="NVIDIA H200"), "profile.json")
        text = self.report()
        for name in ("python.json", "profile.json"):
            self.assertIn(f"**WARNING: `{name}` set aside**: it is of NVIDIA H200", self.head(text))
        self.assertIn("No `python.json` beside the results (or it was set aside", text)
        self.assertIn("No `profile.json` beside the results (or it was set aside", text)

    def test_each_peer_form_is_named_as_its_module_describes_it(self):
        def describe(doc):
            doc["cdl_python"]["systems"]["cupy"]["forms"] = {"cupy.RawKernel": "the whole kernel as CUDA C"}

        self.edit_results(describe, "python.json")
        peers = self.report().split("## The articles' own systems")[1].split("\n## ")[0]
        self.assertIn("- `cupy.RawKernel` (CuPy): the whole kernel as CUDA C", peers)

    def test_missing_optional_files_are_named_where_their_sections_would_be(self):
        os.remove(os.path.join(self.results, "python.json"))
        os.remove(os.path.join(self.results, "profile.json"))
        text = self.report()
        peers = text.split("## The articles' own systems")[1].split("\n## ")[0]
        self.assertIn("No `python.json` beside the results", peers)
        profile = text.split("## What the hardware did (Nsight Compute)")[1].split("\n## ")[0]
        self.assertIn("No `profile.json` beside the results", profile)


LABEL_04 = {
    "workload": "map",
    "strategy": "04_function_pointer",
    "variant": "table",
    "form": "vec",
    "op": "sine",
    "type": "f32",
    "n": "4",
    "k": "16",
}


class FieldsTest(FixtureTest):
    """A record's fields (its label: docs/results_format.md) are what the report reads; a record
    without them is refused, naming the benchmark."""

    def test_a_records_fields_say_what_its_name_says(self):
        name = "map/04_function_pointer.table/vec/op:sine/type:f32/n:4/k:16"
        self.assertEqual(
            identity(name, {"label": json.dumps(LABEL_04)}),
            ("map", "04_function_pointer.table/vec", {"op": "sine", "type": "f32", "n": "4", "k": "16"}),
        )
        copy = {"label": json.dumps({"bytes": "1024", "strategy": "cudaMemcpy", "workload": "copy"})}
        self.assertEqual(
            identity("copy/cudaMemcpy/bytes:1024", copy), ("copy", "cudaMemcpy", {"bytes": "1024"})
        )

    def test_a_label_that_is_not_the_names_benchmarks_fields_is_refused(self):
        for name, label in (
            ("map/01_template_functor/vec/op:sine/type:f32/n:4/k:16", json.dumps(LABEL_04)),
            ("map/04_function_pointer.table/vec/op:sine", "op=sine"),
            ("map/04_function_pointer.table/vec/op:sine", json.dumps({"op": "sine"})),
        ):
            with self.subTest(label=label), self.assertRaises(ResultsError):
                identity(name, {"label": label})

    def test_a_record_without_its_fields_is_refused_naming_it(self):
        with self.assertRaisesRegex(
            ResultsError, "map/04_function_pointer.table/vec/op:sine: its records carry"
        ):
            identity("map/04_function_pointer.table/vec/op:sine", {})

        def unlabel(doc):  # every record of the first map benchmark
            first = next(b["run_name"] for b in doc["benchmarks"] if b["name"].startswith("map/"))
            for b in doc["benchmarks"]:
                if b["run_name"] == first:
                    b.pop("label")

        self.edit_results(unlabel)
        self.assert_refused("its records carry no fields (no label)")

    def test_a_jit_stages_fields_are_its_names_and_a_label_of_another_stage_is_refused(self):
        name = "jit/compile/06/new_op/map/op:quadratic/type:f32/iterations:3/repeats:5/manual_time"
        fields = {
            "workload": "jit",
            "stage": "compile",
            "route": "06",
            "text": "new_op",
            "problem": "map",
            "op": "quadratic",
            "type": "f32",
        }
        self.assertEqual(stage_fields(name, {"label": json.dumps(fields)}), fields)
        self.assertIsNone(stage_fields(name, {}))  # a file from before stages carried their fields
        cache = {
            "workload": "jit",
            "stage": "cache_disk_hit",
            "problem": "map",
            "op": "quadratic",
            "type": "f32",
        }
        self.assertEqual(
            stage_fields("jit/cache_disk_hit/map/op:quadratic/type:f32", {"label": json.dumps(cache)}), cache
        )
        for other in (
            dict(fields, route="07"),
            dict(fields, text="same_text"),
            dict(fields, op="sine"),
            dict(fields, problem="zip"),
            dict(fields, workload="map"),
            {"stage": "compile"},
        ):
            with self.subTest(other=other), self.assertRaises(ResultsError):
                stage_fields(name, {"label": json.dumps(other)})
        with self.assertRaises(ResultsError):
            stage_fields(name, {"label": "compile"})

        def relabel(doc):  # a stage record labelled as another stage is refused when the file is read
            for b in doc["benchmarks"]:
                if b["name"].startswith("jit/compile/06/new_op/"):
                    b["label"] = json.dumps(dict(fields, route="07"))

        self.edit_results(relabel)
        self.assert_refused("its label's fields name another stage")
