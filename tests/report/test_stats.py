"""Statistics (reports/cdl_report/stats.py): the Mann-Whitney U test, exact where it can be, the
paired t-test, and what it takes to call two benchmarks different."""
import unittest

import helpers  # noqa: F401  (puts reports/ on the path)
from cdl_report.stats import paired_p, spearman, mark, can_decide, compare, mann_whitney_p, quantile


class MannWhitneyTest(unittest.TestCase):
    def test_exact_p_values_match_the_counted_orderings(self):
        # Fully separated 5 and 5: 2 of the 252 orderings are as extreme, two-sided.
        self.assertAlmostEqual(mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]), 2 / 252)
        self.assertAlmostEqual(mann_whitney_p([1, 3, 5, 7, 9], [2, 4, 6, 8, 10]), 174 / 252)
        self.assertEqual(mann_whitney_p([1, 2], []), None)

    def test_ties_fall_back_to_the_normal_approximation(self):
        p = mann_whitney_p([1, 1, 2, 2, 3], [2, 3, 3, 4, 4])
        self.assertTrue(0.05 < p < 0.2, p)

    def test_three_repetitions_each_cannot_decide(self):
        self.assertFalse(can_decide(3, 3))
        self.assertTrue(can_decide(5, 5))

    def test_a_difference_needs_the_noise_and_the_test(self):
        a = {"median": 100.0, "reps": [99, 100, 100.5, 101, 100.2]}
        far = {"median": 110.0, "reps": [109, 110, 110.5, 111, 110.2]}
        near = {"median": 101.0, "reps": [100, 101, 101.5, 102, 101.2]}
        overlapping = {"median": 110.0, "reps": [95, 110, 112, 99, 111]}
        self.assertEqual(compare(a, far, 0.02)[2], True)
        self.assertEqual(compare(a, near, 0.02)[2], False)  # within the noise
        self.assertEqual(compare(a, overlapping, 0.02)[2], False)  # beyond it, but not told apart
        three = {"median": 110.0, "reps": [109, 110, 111]}
        # three repetitions each cannot decide: beyond the noise, neither a difference nor none
        self.assertEqual(compare({"median": 100.0, "reps": [99, 100, 101]}, three, 0.02), (1.1, None, None))
        self.assertEqual(mark(1.1, None), "1.10?")
        self.assertEqual(mark(1.1, True), "1.10")
        self.assertEqual(mark(1.01, False), "(1.01)")

    def test_the_significance_threshold_is_005_on_both_sides(self):
        # Five against five, one side's repetitions all but two (or three) pairs below the other's: the
        # exact p is 8/252 = 0.032 (between 0.01 and 0.05: a difference) and 14/252 = 0.056 (between
        # 0.05 and 0.10: none); a threshold moved to 0.01 or to 0.10 turns one of them over.
        a = [101, 102, 103, 105, 106]
        told = [104, 107, 108, 109, 110]
        self.assertAlmostEqual(mann_whitney_p(a, told), 8 / 252)
        self.assertEqual(
            compare({"median": 103.0, "reps": a}, {"median": 108.0, "reps": told}, 0.01)[2], True
        )
        a = [101, 102, 104, 105, 106]
        not_told = [103, 107, 108, 109, 110]
        self.assertAlmostEqual(mann_whitney_p(a, not_told), 14 / 252)
        self.assertEqual(
            compare({"median": 104.0, "reps": a}, {"median": 108.0, "reps": not_told}, 0.01)[2], False
        )

    def test_the_noise_band_is_inclusive_and_no_wider(self):
        reps = lambda m: {"median": m, "reps": [m * (1 + 0.0001 * i) for i in range(5)]}  # noqa: E731
        self.assertEqual(compare(reps(100.0), reps(101.99), 0.02)[2], False)  # just inside: no difference
        self.assertEqual(
            compare(reps(100.0), reps(102.01), 0.02)[2], True
        )  # just outside: tested, told apart
        self.assertEqual(compare(reps(100.0), reps(98.01), 0.02)[2], False)
        self.assertEqual(compare(reps(100.0), reps(97.99), 0.02)[2], True)

    def test_quantiles_interpolate(self):
        self.assertEqual(quantile([0, 10], 0.95), 9.5)
        self.assertEqual(quantile([3, 1, 2], 0.5), 2)


class PairedTTest(unittest.TestCase):
    def test_p_values_match_students_t(self):
        # scipy.stats.ttest_1samp(d, 0).pvalue for each: odd and even degrees of freedom, 1 to 6
        for d, p in (
            ([1.0, 3.0], 0.2951672353008664),
            ([1.0, 2.0, 4.0], 0.11808289631180306),
            ([0.5, 1.5, 1.0, 2.0], 0.030466291662170977),
            ([-1.6, -14.5, -3.5, -3.2, -6.9], 0.06170399676063134),
            ([0.9, 1.6, 0.9, 0.4, 0.7], 0.010359822551671477),
            ([1, -1, 2, -0.5, 0.5, 0.3, 1.2], 0.24354686003984602),
        ):
            self.assertAlmostEqual(paired_p(d), p, places=12, msg=d)

    def test_spearman_matches_scipys_with_ties(self):
        # scipy.stats.spearmanr(x, y)'s correlation; its p-value by scipy.stats.permutation_test over
        # every pairing (permutation_type="pairings", n_resamples=np.inf) up to 8 pairs, where the t
        # approximation would claim p = 0 for four pairs in order; spearmanr's own (t) beyond
        for x, y, rho, p in (
            ([1, 2, 3, 4, 5], [5, 6, 7, 8, 7], 0.8207826816681233, 0.13333333333333333),
            (
                [1.375, 1.375, 1.625, 1.72, 1.84, 1.156],
                [0.77, 0.769, 0.72, 0.71, 0.708, 0.78],
                -0.9856107606091624,
                0.005555555555555556,
            ),
            ([1, 2, 3, 4], [4, 3, 2, 1], -1.0, 1 / 12),
            (list(range(9)), [8, 7, 6, 5, 4, 3, 2, 0, 1], -0.9833333333333333, 1.9361963037459243e-06),
        ):
            got = spearman(x, y)
            self.assertAlmostEqual(got[0], rho, places=12)
            self.assertAlmostEqual(got[1], p, places=12)
        self.assertIsNone(spearman([1, 2, 3], [3, 2, 1]))  # too few
        self.assertIsNone(spearman([1, 1, 1, 1], [1, 2, 3, 4]))  # one value

    def test_one_sign_in_five_is_not_enough(self):
        self.assertGreater(paired_p([-1.6, -14.5, -3.5, -3.2, -6.9]), 0.05)
        self.assertIsNone(paired_p([1.0]))
        self.assertEqual(paired_p([2.0, 2.0, 2.0]), 0.0)
        self.assertEqual(paired_p([0.0, 0.0]), 1.0)


if __name__ == "__main__":
    unittest.main()
