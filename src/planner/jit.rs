//! JIT for plans over columnar tables. PostgreSQL decides whether to JIT-compile a
//! plan (and whether to inline and optimize) by comparing the whole plan's cost with
//! `jit_above_cost` and its siblings. The work of ColumnarScan, ColumnarAgg and
//! LastPoint is compiled Rust that JIT cannot touch, yet their cost pushed plans over
//! the threshold: TPC-H q13 on columnar tables paid JIT's compilation where the same
//! query on heap did not, and every parallel worker of a ColumnarAgg loaded LLVM
//! (~30 ms a worker on the benchmark machine) to compile a handful of expressions. So
//! after planning the thresholds are compared with the plan's cost without those nodes:
//! what core's expressions and tuple deforming carry.

use crate::exec::{columnar_agg, columnar_scan, last_point};
use pgrx::pg_sys;
use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};
use std::ffi::CStr;

/// `pgcolumnar.jit_excludes_columnar`: compare JIT's thresholds with the plan's cost
/// without pgcolumnar's nodes (on by default; off restores core's rule).
pub static JIT_EXCLUDES_COLUMNAR: GucSetting<bool> = GucSetting::<bool>::new(true);

pub fn define_gucs() {
    GucRegistry::define_bool_guc(
        c"pgcolumnar.jit_excludes_columnar",
        c"Compares jit_above_cost and its siblings with a plan's cost without pgcolumnar's scan and aggregate nodes.",
        c"Their work runs as compiled code JIT cannot improve; when off, the whole plan's cost decides, as in core.",
        &JIT_EXCLUDES_COLUMNAR,
        GucContext::Userset,
        GucFlags::default(),
    );
}

/// JIT's thresholds (PostgreSQL's settings; negative disables that step).
#[derive(Debug, Clone, Copy)]
pub struct Thresholds {
    pub above: f64,
    pub inline: f64,
    pub optimize: f64,
}

/// The JIT flags core gave a plan (`flags`), kept for a plan whose JIT-able cost is
/// `cost`: the steps whose threshold that cost still passes. Only ever removes steps, so
/// whatever disabled JIT (jit = off, jit_expressions = off, ...) stays in force.
pub fn flags_for_cost(flags: u32, cost: f64, t: Thresholds) -> u32 {
    if flags & pg_sys::PGJIT_PERFORM == 0 {
        return flags;
    }
    if t.above < 0.0 || cost <= t.above {
        return pg_sys::PGJIT_NONE;
    }
    let mut kept = flags;
    if t.optimize < 0.0 || cost <= t.optimize {
        kept &= !pg_sys::PGJIT_OPT3;
    }
    if t.inline < 0.0 || cost <= t.inline {
        kept &= !pg_sys::PGJIT_INLINE;
    }
    kept
}

/// Lowers `stmt`'s JIT flags to what the plan's cost outside pgcolumnar's nodes earns.
///
/// # Safety
/// `stmt` is the live PlannedStmt the planner just returned; on the backend thread (JIT's
/// settings are read).
pub unsafe fn discount(stmt: *mut pg_sys::PlannedStmt) {
    // SAFETY: `stmt` and its plan tree are live (this fn's contract); the settings are
    // PostgreSQL's GUC variables, read on the backend thread.
    unsafe {
        if stmt.is_null()
            || (*stmt).jitFlags as u32 & pg_sys::PGJIT_PERFORM == 0
            || !JIT_EXCLUDES_COLUMNAR.get()
        {
            return;
        }
        let top = (*stmt).planTree;
        if top.is_null() {
            return;
        }
        let own = columnar_cost(top);
        if own <= 0.0 {
            return;
        }
        let t = Thresholds {
            above: pg_sys::jit_above_cost,
            inline: pg_sys::jit_inline_above_cost,
            optimize: pg_sys::jit_optimize_above_cost,
        };
        (*stmt).jitFlags =
            flags_for_cost((*stmt).jitFlags as u32, ((*top).total_cost - own).max(0.0), t) as i32;
    }
}

/// The summed cost of pgcolumnar's scan and aggregate nodes in `plan`'s tree: a node's
/// cost includes its inputs', so ours count their total less their child plans', and
/// the walk goes on into those children for ours.
///
/// # Safety
/// `plan` is a live plan node (or NULL).
unsafe fn columnar_cost(plan: *mut pg_sys::Plan) -> f64 {
    // SAFETY: `plan` is live (this fn's contract); its tag says which struct it is, and
    // the child lists hold live plan nodes.
    unsafe {
        if plan.is_null() {
            return 0.0;
        }
        let children: Vec<*mut pg_sys::Plan> = match (*plan).type_ {
            pg_sys::NodeTag::T_CustomScan => {
                let custom = plan as *mut pg_sys::CustomScan;
                let methods = (*custom).methods;
                let children = plans((*custom).custom_plans);
                if !methods.is_null() && is_columnar(CStr::from_ptr((*methods).CustomName)) {
                    // Its own work, and its children's columnar nodes (an eagerly
                    // aggregated join's other side is any plan, which JIT may serve).
                    let own = (*plan).total_cost - children.iter().map(|&c| (*c).total_cost).sum::<f64>();
                    return own.max(0.0) + children.into_iter().map(|c| columnar_cost(c)).sum::<f64>();
                }
                children
            }
            pg_sys::NodeTag::T_Append => plans((*(plan as *mut pg_sys::Append)).appendplans),
            pg_sys::NodeTag::T_MergeAppend => plans((*(plan as *mut pg_sys::MergeAppend)).mergeplans),
            pg_sys::NodeTag::T_SubqueryScan => vec![(*(plan as *mut pg_sys::SubqueryScan)).subplan],
            _ => Vec::new(),
        };
        children.into_iter().chain([(*plan).lefttree, (*plan).righttree]).map(|p| columnar_cost(p)).sum()
    }
}

fn is_columnar(name: &CStr) -> bool {
    name == columnar_scan::NAME || name == columnar_agg::NAME || name == last_point::NAME
}

/// # Safety
/// `list` is a live List of plan nodes (or NIL).
unsafe fn plans(list: *mut pg_sys::List) -> Vec<*mut pg_sys::Plan> {
    // SAFETY: as this fn's contract says.
    unsafe { crate::pg_list::ptrs::<pg_sys::Plan>(list).collect() }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Thresholds = Thresholds { above: 100_000.0, inline: 500_000.0, optimize: 500_000.0 };
    const ALL: u32 = pg_sys::PGJIT_PERFORM
        | pg_sys::PGJIT_OPT3
        | pg_sys::PGJIT_INLINE
        | pg_sys::PGJIT_EXPR
        | pg_sys::PGJIT_DEFORM;

    #[test]
    fn below_the_threshold_no_jit() {
        assert_eq!(flags_for_cost(ALL, 99_999.0, T), pg_sys::PGJIT_NONE);
        assert_eq!(flags_for_cost(ALL, 100_000.0, T), pg_sys::PGJIT_NONE);
    }

    #[test]
    fn between_thresholds_no_inlining_or_optimization() {
        let kept = flags_for_cost(ALL, 200_000.0, T);
        assert_eq!(kept, pg_sys::PGJIT_PERFORM | pg_sys::PGJIT_EXPR | pg_sys::PGJIT_DEFORM);
    }

    #[test]
    fn above_every_threshold_keeps_core_flags() {
        assert_eq!(flags_for_cost(ALL, 600_000.0, T), ALL);
        // A step core left out (jit_tuple_deforming = off) stays out.
        let no_deform = ALL & !pg_sys::PGJIT_DEFORM;
        assert_eq!(flags_for_cost(no_deform, 600_000.0, T), no_deform);
    }

    #[test]
    fn plans_core_did_not_jit_stay_so() {
        assert_eq!(flags_for_cost(pg_sys::PGJIT_NONE, 1e9, T), pg_sys::PGJIT_NONE);
    }

    #[test]
    fn disabled_steps_are_dropped() {
        let t = Thresholds { above: 100_000.0, inline: -1.0, optimize: -1.0 };
        assert_eq!(
            flags_for_cost(ALL, 1e9, t),
            pg_sys::PGJIT_PERFORM | pg_sys::PGJIT_EXPR | pg_sys::PGJIT_DEFORM
        );
        let off = Thresholds { above: -1.0, ..t };
        assert_eq!(flags_for_cost(ALL, 1e9, off), pg_sys::PGJIT_NONE);
    }
}
