// What the programs in bench/ (cdl_run, cdl_bench, cdl_jit_resources) reach of the strategies
// beyond the registry's entries: the routes a user's op takes (common/registry.hpp's op_route,
// each registered by its strategy: 06, 07, 08, 16, 17), and the stages of those routes the
// benchmarks time apart: 06's and 07's generated programs and builds, 08's modules, 10's tiers over
// the routes, 13's plugin files, and a user's op built for the host (its float64 reference).
#pragma once

#include "common/registry.hpp"
#include "strategies/suite/expression_jit.hpp"
#include "strategies/suite/jit_kernels.hpp"
#include "strategies/suite/plugin.hpp"
#include "strategies/suite/tiered_dispatch.hpp"
#include "strategies/suite/user_op.hpp"
