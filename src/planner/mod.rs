//! Planner integration: the hooks (`hooks`), the paths they offer for columnar
//! relations (`scan_path`), the quals zone maps can check (`quals`), and the cost model
//! that prices them against core's plans (`cost`). Imports `exec` (the nodes it plans) and `storage`.

pub mod agg_args;
pub mod agg_path;
pub mod aggregates;
pub mod column_decode;
pub mod column_stats;
pub mod cost;
pub mod custompath;
pub mod having_selectivity;
pub mod hooks;
pub mod jit;
pub mod join_filter;
pub mod last_point_path;
pub mod pushed_seq_scan_path;
pub mod quals;
pub mod relation;
pub mod scan_path;
pub mod upper_scan;

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

/// `pgcolumnar.parallel_core_scaling`: how much of each further core a parallel
/// ColumnarScan or ColumnarAgg gets (`cost::CORE_SCALING`).
pub static PARALLEL_CORE_SCALING: GucSetting<f64> = GucSetting::<f64>::new(cost::CORE_SCALING);

/// `pgcolumnar.parallel_cores`: the cores parallel columnar plans count on (0: what the
/// OS lets this process use).
pub static PARALLEL_CORES: GucSetting<i32> = GucSetting::<i32>::new(0);

/// The cores parallel plans are planned for.
pub fn cores() -> usize {
    match PARALLEL_CORES.get() {
        n if n > 0 => n as usize,
        _ => cost::machine_cores(),
    }
}

/// The workers a parallel columnar path over `pages` of `rel` asks for: core's rule for
/// a table of that size (as for its Parallel Seq Scan), as many as there are cores for
/// (`cost::useful_workers`).
///
/// # Safety
/// `rel` is the planner's live base relation; on the backend thread (core's parallel
/// settings are read).
pub unsafe fn parallel_workers(rel: *mut pgrx::pg_sys::RelOptInfo, pages: f64) -> i32 {
    // SAFETY: this fn's contract; GUC variables, read on the backend thread.
    unsafe {
        use pgrx::pg_sys;
        let workers =
            pg_sys::compute_parallel_worker(rel, pages, -1.0, pg_sys::max_parallel_workers_per_gather);
        cost::useful_workers(workers, pg_sys::parallel_leader_participation, cores())
    }
}

/// PostgreSQL's cost settings the cost model prices with (`cost::CostParams`).
pub fn cost_params() -> cost::CostParams {
    // SAFETY: PostgreSQL's cost GUCs, read on the backend thread (the planner's).
    unsafe {
        cost::CostParams {
            seq_page_cost: pgrx::pg_sys::seq_page_cost,
            random_page_cost: pgrx::pg_sys::random_page_cost,
            cpu_tuple_cost: pgrx::pg_sys::cpu_tuple_cost,
            cpu_operator_cost: pgrx::pg_sys::cpu_operator_cost,
        }
    }
}

/// How a plan with `workers` parallel workers (0: serial) over a columnar table is
/// priced: the share of the rows each participant takes (core's divisor, at most this
/// machine's cores), how many times faster than serial they run together
/// (`pgcolumnar.parallel_core_scaling`), and what starting the workers costs.
pub struct Parallelism {
    pub share: f64,
    pub speedup: f64,
    pub startup: f64,
}

/// # Safety
/// On the backend thread (core's parallel settings are read).
pub unsafe fn parallelism(workers: i32) -> Parallelism {
    // SAFETY: PostgreSQL's GUC variables, read on the backend thread (this fn's contract).
    let (leader, setup) =
        unsafe { (pgrx::pg_sys::parallel_leader_participation, pgrx::pg_sys::parallel_setup_cost) };
    let share = cost::parallel_share(workers, leader, cores());
    Parallelism {
        share,
        speedup: cost::parallel_speedup(share, PARALLEL_CORE_SCALING.get()),
        startup: cost::parallel_startup(workers, setup),
    }
}

/// `pgcolumnar.enable_columnar_scan`: offer the ColumnarScan path (on by default).
pub static ENABLE_COLUMNAR_SCAN: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pgcolumnar.quals_push_down`: whether ColumnarScans evaluate the quals they can
/// (on by default), for tables whose `quals_push_down` option is not set.
pub static QUALS_PUSH_DOWN: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pgcolumnar.enable_vector_agg`, `enable_grouped_vector_agg`,
/// `enable_parallel_vector_agg`: offer ColumnarAgg paths (the batch fold) for
/// aggregates without GROUP BY, with GROUP BY, and as a parallel partial aggregate (all
/// on by default: the fold is exact and costed against core's Agg).
pub static ENABLE_VECTOR_AGG: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static ENABLE_GROUPED_VECTOR_AGG: GucSetting<bool> = GucSetting::<bool>::new(true);
pub static ENABLE_PARALLEL_VECTOR_AGG: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pgcolumnar.enable_last_point`: offer LastPoint paths (each key's best row by
/// zone maps or a btree skip scan) for DISTINCT ON and per-key max / min.
pub static ENABLE_LAST_POINT: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pgcolumnar.enable_eager_agg`: offer eagerly aggregated joins (a ColumnarAgg folds
/// the columnar side by its join key, the other side's rows probe its groups) for
/// queries grouped by the unique key of the other side (on by default: costed against
/// core's join and Agg).
pub static ENABLE_EAGER_AGG: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pgcolumnar.enable_join_filter`: offer hash joins whose outer ColumnarScan drops the
/// rows whose key is not among the hash table's keys (on by default).
pub static ENABLE_JOIN_FILTER: GucSetting<bool> = GucSetting::<bool>::new(true);

pub fn define_gucs() {
    jit::define_gucs();
    GucRegistry::define_float_guc(
        c"pgcolumnar.parallel_core_scaling",
        c"How much of each further core a parallel columnar scan or fold gets, from 0 to 1.",
        c"1 prices parallel plans as core does (every core at full speed); the default suits machines whose cores slow each other down, as virtual machines' often do. bench/calibrate.py measures it.",
        &PARALLEL_CORE_SCALING,
        0.0,
        1.0,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"pgcolumnar.parallel_cores",
        c"The cores parallel columnar scans and folds are planned for (0: the machine's).",
        c"A parallel columnar plan starts no more processes, its leader included, than there are cores, and prices its speed-up by them. 0 counts the cores the operating system lets PostgreSQL use.",
        &PARALLEL_CORES,
        0,
        1024,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_eager_agg",
        c"Enables eager aggregation of a columnar table below a join.",
        c"For GROUP BY the unique key of a table joined (inner or LEFT) to a columnar table on that key, aggregating the columnar table's columns: a ColumnarAgg folds the columnar table by its join key and the other table's rows find their group.",
        &ENABLE_EAGER_AGG,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_join_filter",
        c"Enables join filters: a hash join's inner keys tested inside the outer ColumnarScan.",
        c"For inner and semi joins on an integer, date or timestamp column of a columnar table: rows whose key the hash table does not hold are dropped before their other columns are decoded.",
        &ENABLE_JOIN_FILTER,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_last_point",
        c"Enables LastPoint, which finds each key's best row without reading the whole table.",
        c"For SELECT DISTINCT ON (g) ... ORDER BY g, t [DESC] and SELECT g, max(t) / min(t) ... GROUP BY g: zone maps on columnar tables, a btree skip scan on (g, t) indexes of any table.",
        &ENABLE_LAST_POINT,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_vector_agg",
        c"Enables ColumnarAgg, which folds aggregates over columnar vectors.",
        c"When off, aggregates over columnar tables run on PostgreSQL's Agg node.",
        &ENABLE_VECTOR_AGG,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_grouped_vector_agg",
        c"Enables ColumnarAgg for queries with GROUP BY (hash grouping on vectors).",
        c"Needs pgcolumnar.enable_vector_agg too.",
        &ENABLE_GROUPED_VECTOR_AGG,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_parallel_vector_agg",
        c"Enables parallel partial ColumnarAgg under Gather and Finalize Aggregate.",
        c"Needs pgcolumnar.enable_vector_agg too.",
        &ENABLE_PARALLEL_VECTOR_AGG,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.quals_push_down",
        c"Evaluates WHERE clauses inside ColumnarScans, on vectors, once.",
        c"The default for columnar tables whose quals_push_down option is not set. When off, the executor evaluates every qual on every row the scan returns; zone maps still skip data.",
        &QUALS_PUSH_DOWN,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_columnar_scan",
        c"Enables the ColumnarScan path, which reads only the columns a query uses.",
        c"When off, columnar tables are read by a sequential scan that decodes every column.",
        &ENABLE_COLUMNAR_SCAN,
        GucContext::Userset,
        GucFlags::default(),
    );
}
