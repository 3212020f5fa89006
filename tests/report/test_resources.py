"""The resource collector (reports/resources.py): ptxas's report and the SASS, read per kernel."""
import json
import os
import stat
import subprocess
import tempfile
import textwrap
import unittest
from unittest import mock

import helpers  # noqa: F401  (puts reports/ on the path)
import resources
from cdl_report.sections import resources as section


class ResourcesTest(unittest.TestCase):
    PTXAS = """ptxas info    : 296 bytes gmem
ptxas info    : Compiling entry function '_Z1kPf' for 'sm_90'
ptxas info    : Function properties for _Z1kPf
    64 bytes stack frame, 32 bytes spill stores, 48 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 64 bytes cumulative stack size, 4096 bytes smem
ptxas info    : Function properties for __internal_trig_reduction_slowpathd
    40 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z1gPf' for 'sm_90'
ptxas info    : Function properties for _Z1gPf
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 38 registers, used 0 barriers
"""
    SASS = """
        Function : _Z1kPf
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   CALL.REL.NOINC R6 0x0 ;
        /*0020*/                   BRX R4 -0x30 ;
        /*0030*/                   CALL.REL.NOINC 0x100 ;
        Function : _Z1gPf
        /*0000*/                   EXIT ;
"""

    def test_ptxas_reports_are_read_per_kernel(self):
        k = resources.parse_ptxas(self.PTXAS, "strategies/x.cu")
        self.assertEqual(set(k), {"_Z1kPf", "_Z1gPf"})
        self.assertEqual(
            (
                k["_Z1kPf"]["registers"],
                k["_Z1kPf"]["stack"],
                k["_Z1kPf"]["spill_stores"],
                k["_Z1kPf"]["spill_loads"],
                k["_Z1kPf"]["smem"],
            ),
            (32, 64, 32, 48, 4096),
        )
        self.assertEqual((k["_Z1gPf"]["registers"], k["_Z1gPf"]["stack"], k["_Z1gPf"]["smem"]), (38, 0, 0))

    def test_the_kernels_compiled_at_run_time_are_records_of_their_own(self):
        """reports/resources.py --jit: cdl_jit_resources's records (here a script printing two), each
        read from its compiler's -v text and named by its registry entry, op and type; a record whose
        text does not report its kernel is an error naming it."""
        with tempfile.TemporaryDirectory() as tmp:
            records = [
                {
                    "entry": e,
                    "op": "quadratic",
                    "type": "f32",
                    "kernel": "_Z1kPf",
                    "cubin": "x",
                    "ptxas": self.PTXAS,
                }
                for e in ("06_nvrtc_jit.fast_compile/vec", "08_expression_jit/vec")
            ]
            program = os.path.join(tmp, "cdl_jit_resources")
            with open(program, "w") as f:
                f.write(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(records)}\nEOF\n")
            os.chmod(program, os.stat(program).st_mode | stat.S_IEXEC)
            made, _ = resources.jit_kernels(program, "90", None, None)  # no occupancy, no cuobjdump
            self.assertEqual([k["entry"] for k in made], [r["entry"] for r in records])
            k = made[0]
            self.assertEqual(
                (k["registers"], k["stack"], k["spill_stores"], k["op"], k["type"]),
                (32, 64, 32, "quadratic", "f32"),
            )
            self.assertEqual(k["source"], "jit 06_nvrtc_jit.fast_compile/vec op:quadratic type:f32")
            self.assertIsNone(k["occupancy"])
            self.assertEqual(section.map_kernel({"kernels": made}, "06_nvrtc_jit.fast_compile/vec"), k)
            records[1]["kernel"] = "_Z7missingv"
            with open(program, "w") as f:
                f.write(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(records)}\nEOF\n")
            with self.assertRaises(SystemExit) as refused:
                resources.jit_kernels(program, "90", None, None)
            self.assertIn("08_expression_jit/vec", str(refused.exception))

    def test_sass_counts_calls_through_registers_not_direct_calls(self):
        counts = resources.parse_sass(self.SASS)
        self.assertEqual(counts["_Z1kPf"], [1, 1])
        self.assertEqual(counts["_Z1gPf"], [0, 0])

    def test_the_build_keeps_the_sass_lines_the_counts_need_and_they_are_read_while_fresh(self):
        """cmake/ptxas_report.sh as the build runs it (CDL_KEEP_SASS=1, a fake compiler and
        cuobjdump): its <object>.sass gives the counts the whole SASS gives; an older one is not read."""
        with tempfile.TemporaryDirectory() as tmp:
            whole = os.path.join(tmp, "whole.sass")
            with open(whole, "w") as f:
                f.write(self.SASS)
            for name, body in (("cuobjdump", f'cat "{whole}"'), ("fake_nvcc", 'touch "$2"')):
                with open(os.path.join(tmp, name), "w") as f:
                    f.write(f"#!/bin/sh\n{body}\n")
                os.chmod(os.path.join(tmp, name), 0o755)
            obj = os.path.join(tmp, "k.cu.o")
            launcher = os.path.join(helpers.ROOT, "cmake", "ptxas_report.sh")
            env = dict(os.environ, PATH=tmp + os.pathsep + os.environ["PATH"])
            env.pop("CDL_KEEP_SASS", None)  # not asked for, whatever the caller's environment says
            subprocess.run([launcher, "fake_nvcc", "-o", obj], env=env, check=True)
            self.assertFalse(os.path.exists(obj + ".sass"), "kept only when asked for")
            subprocess.run([launcher, "fake_nvcc", "-o", obj], env=dict(env, CDL_KEEP_SASS="1"), check=True)
            with open(obj + ".sass") as f:
                kept = f.read()
            self.assertLess(len(kept.splitlines()), len(self.SASS.splitlines()))
            self.assertEqual(resources.parse_sass(kept), resources.parse_sass(self.SASS))
            with mock.patch.object(resources, "cuobjdump_run", return_value="asked cuobjdump"):
                self.assertEqual(resources.object_sass("cuobjdump", obj), kept)
                os.utime(obj + ".sass", (0, 0))  # older than the object: not this object's
                self.assertEqual(resources.object_sass("cuobjdump", obj), "asked cuobjdump")

    def test_occupancy_per_kernel_an_error_named_and_the_others_kept(self):
        """A fake build: two objects defining the same kernel name, one of relocatable device code
        with its target's device link, and a kernel the driver cannot be asked about."""
        with tempfile.TemporaryDirectory() as tmp:
            build = os.path.join(tmp, "build")

            def obj(target, name, kernels, folder=""):  # folder: the source's, under strategies/
                d = os.path.join(build, "strategies", "CMakeFiles", target + ".dir", folder)
                os.makedirs(d, exist_ok=True)
                path = os.path.join(d, name + ".cu.o")
                open(path, "w").close()
                with open(path + ".ptxas", "w") as f:
                    for k in kernels:
                        f.write(f"ptxas info    : Compiling entry function '{k}' for 'sm_90'\n")
                        f.write("ptxas info    : Used 20 registers, used 0 barriers\n")
                return path

            a = obj("lib", "a", ["_Z4samev", "_Z3badv"])
            b = obj("lib", "b", ["_Z4samev"])
            rdc = obj("rdc", "c", ["_Z5childv"], folder="suite")  # as strategies/suite/15_device_launch.cu
            link = os.path.join(build, "CMakeFiles", "rdc.dir", "cmake_device_link.o")
            os.makedirs(os.path.dirname(link))
            open(link, "w").close()

            def script(name, body):
                path = os.path.join(tmp, name)
                with open(path, "w") as f:
                    f.write("#!/usr/bin/env python3\n" + textwrap.dedent(body))
                os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
                return path

            # cuobjdump -xelf all OBJ writes one CUBIN named after the object; -sass prints nothing.
            script(
                "cuobjdump",
                """
                import os, sys
                if sys.argv[1] == "-xelf":
                    open(os.path.basename(sys.argv[-1]) + ".sm_90.cubin", "w").close()
                """,
            )
            # Answers each kernel with the number of its candidate CUBINs as its block count (7 for
            # the first object's), or an error for _Z3badv.
            program = script(
                "occupancy",
                """
                import json, sys
                out = []
                for line in sys.stdin.read().splitlines():
                    name, *cubins = line.split("\t")
                    if name == "_Z3badv":
                        out.append({"kernel": name, "error": "cuKernelGetFunction failed: CUresult 500"})
                    else:
                        blocks = 7 if "/a.cu.o." in cubins[0] else len(cubins)
                        out.append({"kernel": name, "block": 256, "blocks_per_sm": blocks,
                                    "occupancy": 0.5, "registers": 20})
                print(json.dumps(out))
                """,
            )
            with mock.patch.dict(os.environ, {"PATH": tmp + os.pathsep + os.environ["PATH"]}):
                doc = resources.collect(build, program)
        self.assertNotIn("occupancy_missing", doc)
        got = {(k["source"], k["kernel"]): k for k in doc["kernels"]}
        self.assertEqual(got[("strategies/a.cu", "_Z4samev")]["blocks_per_sm"], 7, "each object's own answer")
        self.assertEqual(got[("strategies/b.cu", "_Z4samev")]["blocks_per_sm"], 1)
        self.assertEqual(
            got[("strategies/suite/c.cu", "_Z5childv")]["blocks_per_sm"],
            2,
            "its object, then the device link",
        )
        bad = got[("strategies/a.cu", "_Z3badv")]
        self.assertIsNone(bad["blocks_per_sm"])
        self.assertIn("CUresult 500", bad["occupancy_error"])
        self.assertNotIn("occupancy_error", got[("strategies/a.cu", "_Z4samev")])


class ReferenceTest(unittest.TestCase):
    def test_every_reference_has_the_occupancy_of_every_kernel_its_report_cites(self):
        root = os.path.join(helpers.ROOT, "reports", "reference")
        for device in sorted(os.listdir(root)):
            with open(os.path.join(root, device, "resources.json")) as f:
                doc = json.load(f)
            cited = section.cited(doc)
            self.assertGreaterEqual(len(cited), 20, f"{device}: the report cites its strategies' map kernels")
            without = [
                k["name"] for k in cited if k.get("blocks_per_sm") is None or k.get("occupancy") is None
            ]
            self.assertEqual(without, [], f"{device}: cited kernels without occupancy")


if __name__ == "__main__":
    unittest.main()
