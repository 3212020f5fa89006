"""The resource collector (reports/resources.py): ptxas's report and the SASS, read per kernel."""
import unittest

import helpers  # noqa: F401  (puts reports/ on the path)
import resources


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

    def test_sass_counts_calls_through_registers_not_direct_calls(self):
        counts = resources.parse_sass(self.SASS)
        self.assertEqual(counts["_Z1kPf"], [1, 1])
        self.assertEqual(counts["_Z1gPf"], [0, 0])


if __name__ == "__main__":
    unittest.main()
