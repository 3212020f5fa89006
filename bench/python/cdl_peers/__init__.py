"""The source articles' own systems, measured beside the C++ strategies.

The articles (reports/cdl_report/claims/articles.md) hand a function to a GPU kernel from
Python: with Numba, with CuPy, and with runtime-compiled CUDA C (PyCUDA's SourceModule). This
package writes the suite's workloads those ways, one module per system:

    cupy_peers.py         CuPy: a ufunc chain, ElementwiseKernel, RawKernel
    numba_peers.py        numba.cuda: inline kernel, device function, op-id switch, kernel
                          factory; and the articles' "pass a function as a kernel argument"
                          experiments, recorded with the exact error where one fails;
                          its op-id switch kernels in numba_switch.py
    cuda_python_peers.py  NVIDIA's cuda-python (cuda.bindings): NVRTC + the driver API, what
                          PyCUDA's SourceModule does underneath
    pycuda_peers.py       PyCUDA's SourceModule itself, where PyCUDA is installed

Every peer runs on the inputs and is checked against the float64 reference that cdl_problem
(bench/problem.cpp) writes from the C++ workloads, with the same tolerance (problem.py); it is timed with
its own library's CUDA events under the C++ suite's protocol (harness.py), and the results are
written in cdl_bench's result schema, so reports/report.py puts them beside the strategies.

    python3 -m cdl_peers --cdl-problem build/release/bench/cdl_problem --out python.json [--quick]

A system whose package is missing, fails to import or finds no GPU is skipped with one line
saying why. The articles' own experiments (experiments/, one module a system) run here too, each
called by its system's module; the rules that read their records are the report's
(reports/cdl_report/claims/).
"""
