"""The results model (reports/cdl_report/results.py): files that are missing, malformed or foreign
are refused with a message and exit status 2, and no report is written."""
import json
import os
import unittest

from helpers import FixtureTest
from cdl_report.results import parse_name, ResultsError


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


class NamingTest(unittest.TestCase):
    def test_a_benchmark_name_is_workload_entry_and_fields(self):
        self.assertEqual(
            parse_name(
                "map/04_function_pointer.table/vec/op:sine/type:f32/n:4194304/k:16/iterations:5/manual_time"
            ),
            (
                "map",
                "04_function_pointer.table/vec",
                {"op": "sine", "type": "f32", "n": "4194304", "k": "16"},
            ),
        )
        self.assertEqual(
            parse_name("image/01_template_functor/tiled/op:box_blur/3840x2160/r:8")[2],
            {"op": "box_blur", "shape": "3840x2160", "r": "8"},
        )

    def test_a_name_without_a_form_is_refused(self):
        with self.assertRaises(ResultsError):
            parse_name("map/01_template_functor")


if __name__ == "__main__":
    unittest.main()
