//! pgcolumnar: a columnar table access method for PostgreSQL.
//!
//! This file only wires things together: module magic, `_PG_init`, and the SQL-visible
//! entry points. Imports run one way: `planner` → `exec` → `storage`.

// Unsafe functions state their contract in a `# Safety` doc section, and each unsafe
// operation in their bodies sits in an `unsafe {}` block whose `// SAFETY:` comment says
// why it is sound; the compiler and `make lint` (clippy) hold every module to it.
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![deny(clippy::missing_safety_doc)]

use pgrx::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};

/// The system's allocator with a reserve for refusals (`storage::format::fallible`): an
/// allocation the system refuses becomes an ERROR, not an abort of the backend.
#[global_allocator]
static ALLOCATOR: storage::format::fallible::Allocator = storage::format::fallible::Allocator;

pub mod exec;
pub mod pg_list;
pub mod planner;
pub mod storage;

::pgrx::pg_module_magic!(name, version);

/// Whether `_PG_init` ran while the postmaster was processing
/// `shared_preload_libraries`. Planner and executor hooks are only installed reliably
/// that way, so the SQL function `pgcolumnar.preloaded()` lets users and tests check it.
static LOADED_AT_STARTUP: AtomicBool = AtomicBool::new(false);

static mut PREV_EXECUTOR_START: pg_sys::ExecutorStart_hook_type = None;
static mut PREV_EXECUTOR_FINISH: pg_sys::ExecutorFinish_hook_type = None;
static mut PREV_EXECUTOR_END: pg_sys::ExecutorEnd_hook_type = None;

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    // SAFETY: runs once per backend, single-threaded, before any query; the hook chain
    // is PostgreSQL's documented way to extend the executor, and the PREV_* statics are
    // written only here, before any hook that reads them can run.
    unsafe {
        quiet_backtraces();
        detect_cpu_features();
        storage::format::fallible::on_refused(storage::shared::error::out_of_memory);
        storage::format::fallible::rearm();
        let preloading = pg_sys::process_shared_preload_libraries_in_progress;
        LOADED_AT_STARTUP.store(preloading, Ordering::Relaxed);
        if preloading {
            storage::shared::shared_memory::init();
            // Asked in the postmaster, inherited by every backend: asking reads the
            // process's cgroup files, 0.1 ms of a new connection's first plan.
            planner::cost::machine_cores();
            register_thread_local_destructors();
        }
        planner::define_gucs();
        storage::read::fetch::define_gucs();
        storage::shared::shared_vectors_memory::define_gucs();
        storage::catalog::extension_version::define_gucs();
        storage::glue::copy_from::define_gucs();
        storage::shared::worker_exit::define_gucs();
        storage::glue::tableam::register();
        storage::glue::wal_resource_manager::register();
        storage::relation::slot::init();
        storage::glue::xact_callbacks::register();
        storage::glue::invalidation::register();
        exec::register_nodes();
        planner::hooks::install();
        storage::glue::utility::install();
        storage::glue::drop_hook::install();
        PREV_EXECUTOR_START = pg_sys::ExecutorStart_hook;
        pg_sys::ExecutorStart_hook = Some(executor_start);
        PREV_EXECUTOR_FINISH = pg_sys::ExecutorFinish_hook;
        pg_sys::ExecutorFinish_hook = Some(executor_finish);
        PREV_EXECUTOR_END = pg_sys::ExecutorEnd_hook;
        pg_sys::ExecutorEnd_hook = Some(executor_end);
    }
}

/// pgrx attaches a captured Rust backtrace to the DETAIL of every ERROR that crosses a
/// guarded frame, and `std::backtrace::Backtrace::capture` captures one whenever
/// `RUST_BACKTRACE` is set in the server's environment (common on developer machines):
/// users would see twenty lines of frames under an ordinary error. `RUST_LIB_BACKTRACE`
/// takes precedence over `RUST_BACKTRACE` for captures alone (panics on other threads
/// still print theirs to the log), so setting it to 0 makes errors look like
/// PostgreSQL's own whatever the environment.
fn quiet_backtraces() {
    // SAFETY: `_PG_init` runs on the backend's (or postmaster's) only thread, before any
    // capture caches the setting; no other thread reads the environment concurrently.
    std::env::set_var("RUST_LIB_BACKTRACE", "0");
}

/// Asks the CPU which instructions it has (checksums and decoders choose their code by
/// it), once: done in the postmaster (the library is preloaded), every backend and worker
/// inherits the answer through fork. Otherwise each new connection asked again on its
/// first read, and under a hypervisor `cpuid` traps: about 80 µs of the first query.
fn detect_cpu_features() {
    #[cfg(target_arch = "x86_64")]
    std::hint::black_box(std::arch::is_x86_feature_detected!("sse4.2"));
    // The checksum picks its SIMD kernel on first use.
    std::hint::black_box(crate::storage::format::checksum::crc32c(b"pgcolumnar"));
}

/// Touches a thread-local that has a destructor, in the postmaster: the first one a
/// process touches registers it with libc (`__cxa_thread_atexit_impl`), whose first call
/// resolves a symbol of the dynamic loader lazily, a search of every loaded library's
/// symbols. Each new connection did that when its startup transaction committed (our
/// transaction callback touches one): about 0.14 ms of every connection. Done here, the
/// resolved symbol is inherited by every backend through fork.
fn register_thread_local_destructors() {
    thread_local! {
        static WITH_DESTRUCTOR: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    WITH_DESTRUCTOR.with(|v| std::hint::black_box(v.borrow().len()));
}

/// Buffered columnar rows of the tables a query reads are written out before it starts:
/// its snapshot must see them, and once it runs in parallel mode nothing can be written
/// (a parallel plan writes out all of them: a function its workers run may read any
/// table, and they cannot write). Once the plan is
/// started, bitmap scans of columnar tables are told not to prefetch, and index and
/// bitmap scans which columns they read, and join-filtered scans their hash join.
#[pg_guard]
unsafe extern "C-unwind" fn executor_start(query_desc: *mut pg_sys::QueryDesc, eflags: i32) {
    // SAFETY: called by PostgreSQL as ExecutorStart_hook on the backend thread inside a
    // transaction; `query_desc` is the live QueryDesc it passes, PREV_EXECUTOR_START was
    // set once in `_PG_init` and only read afterwards, and after the previous hook (or
    // standard_ExecutorStart) returns, `planstate` is the initialized plan state tree.
    unsafe {
        // Not for pgcolumnar's own SQL on its metadata, which can run in the middle of a
        // row change (see storage::shared::internal_sql).
        if !storage::shared::internal_sql::running() {
            let stmt = (*query_desc).plannedstmt;
            if stmt.is_null() || (*stmt).parallelModeNeeded {
                storage::write::write_buffer::flush_all();
            } else {
                let relids = pg_list::ptrs::<pg_sys::RangeTblEntry>((*stmt).rtable)
                    .filter(|&rte| (*rte).rtekind == pg_sys::RTEKind::RTE_RELATION)
                    .map(|rte| (*rte).relid);
                storage::write::write_buffer::flush_for_query(relids);
                expect_inserted_rows(stmt);
            }
            storage::write::pending_marks::statement_done();
            // Rows inserted before, which logical decoding is owed, are logged before
            // anything this statement does (any statement: a SELECT may emit a logical
            // message, or run a function that changes rows); those of the tables it reads
            // were logged with their row groups just above.
            storage::change::logical_log::flush_inserts();
        }
        match PREV_EXECUTOR_START {
            Some(prev) => prev(query_desc, eflags),
            None => pg_sys::standard_ExecutorStart(query_desc, eflags),
        }
        storage::read::bitmap_scan::disable_prefetch((*query_desc).planstate);
        exec::fetch_columns::mark_needed_columns((*query_desc).planstate);
        exec::join_filter::link::<exec::columnar_scan::ColumnarScan>(query_desc);
    }
}

/// An INSERT's plan estimate of its rows, told to the write buffer of its target table.
///
/// # Safety
/// `stmt` must be a valid planned statement of the running query.
unsafe fn expect_inserted_rows(stmt: *mut pg_sys::PlannedStmt) {
    // SAFETY: `stmt` is valid (this fn's contract): its plan tree, range table and result
    // relation list are the planner's, read only.
    unsafe {
        let plan = (*stmt).planTree;
        if (*stmt).commandType != pg_sys::CmdType::CMD_INSERT
            || plan.is_null()
            || (*plan).type_ != pg_sys::NodeTag::T_ModifyTable
            || (*plan).lefttree.is_null()
        {
            return;
        }
        let rows = (*(*plan).lefttree).plan_rows;
        for rti in pg_list::ints((*stmt).resultRelations) {
            let rte = pg_sys::list_nth((*stmt).rtable, rti - 1) as *mut pg_sys::RangeTblEntry;
            storage::write::write_buffer::expect_rows((*rte).relid, rows);
        }
    }
}

/// A statement's collected deletes are published when it has run, before its AFTER
/// triggers fire (they may wait for other transactions, which may wait for the
/// buckets this backend holds); the rows it inserted that logical decoding is owed are
/// logged if a decoder would stream them (`write_buffer::log_owed_if_streamed`).
#[pg_guard]
unsafe extern "C-unwind" fn executor_finish(query_desc: *mut pg_sys::QueryDesc) {
    // SAFETY: called by PostgreSQL as ExecutorFinish_hook on the backend thread inside a
    // transaction; `query_desc` is the live QueryDesc it passes on unchanged, and
    // PREV_EXECUTOR_FINISH was set once in `_PG_init` and is only read afterwards.
    unsafe {
        if !storage::shared::internal_sql::running() {
            storage::write::pending_marks::statement_done();
            storage::write::write_buffer::log_owed_if_streamed();
        }
        match PREV_EXECUTOR_FINISH {
            Some(prev) => prev(query_desc),
            None => pg_sys::standard_ExecutorFinish(query_desc),
        }
    }
}

/// And again at the end, for a statement whose executor was not finished normally.
#[pg_guard]
unsafe extern "C-unwind" fn executor_end(query_desc: *mut pg_sys::QueryDesc) {
    // SAFETY: called by PostgreSQL as ExecutorEnd_hook on the backend thread inside a
    // transaction; `query_desc` is the live QueryDesc it passes on unchanged, and
    // PREV_EXECUTOR_END was set once in `_PG_init` and is only read afterwards.
    unsafe {
        if !storage::shared::internal_sql::running() {
            storage::write::pending_marks::statement_done();
        }
        match PREV_EXECUTOR_END {
            Some(prev) => prev(query_desc),
            None => pg_sys::standard_ExecutorEnd(query_desc),
        }
    }
}

/// The version of the loaded shared library (which can differ from the SQL-level
/// `extversion` after an upgrade that has not run `ALTER EXTENSION ... UPDATE`).
#[pg_extern(immutable, parallel_safe)]
fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}

/// True when the library was loaded through `shared_preload_libraries`.
#[pg_extern(stable, parallel_safe)]
fn preloaded() -> bool {
    LOADED_AT_STARTUP.load(Ordering::Relaxed)
}

#[cfg(feature = "pg_test")]
#[pg_schema]
mod tests {
    use pgrx::prelude::*;

    #[pg_test]
    fn library_version_matches_extension_version() {
        let extversion =
            Spi::get_one::<String>("SELECT extversion FROM pg_extension WHERE extname = 'pgcolumnar'")
                .expect("SPI failed")
                .expect("pgcolumnar is not installed in the test database");
        assert_eq!(extversion, crate::version());
    }

    /// Each node is registered under its prefixed name, and the names other extensions
    /// use (Citus's and TimescaleDB's `ColumnarScan`) are left free.
    #[pg_test]
    fn nodes_registered_under_prefixed_names_only() {
        for name in crate::exec::REGISTERED_NAMES {
            // SAFETY: GetCustomScanMethods with missing_ok only reads the registry; the
            // name is a NUL-terminated static string, and a registered name's methods are static.
            let methods = unsafe { pg_sys::GetCustomScanMethods(name.as_ptr(), true) };
            assert!(!methods.is_null(), "{name:?} is not registered");
        }
        for name in [c"ColumnarScan", c"ColumnarAgg", c"LastPoint", c"PushedSeqScan"] {
            // SAFETY: GetCustomScanMethods with missing_ok only reads the registry; the
            // name is a NUL-terminated static string.
            let methods = unsafe { pg_sys::GetCustomScanMethods(name.as_ptr(), true) };
            assert!(methods.is_null(), "{name:?} is registered");
        }
    }

    /// The btree families the planner knows for built-in types without asking the
    /// type cache are the type cache's.
    #[pg_test]
    fn built_in_btree_families_match_the_type_cache() {
        assert!(crate::planner::quals::built_in_families_match_type_cache());
    }

    #[pg_test]
    fn loaded_through_shared_preload_libraries() {
        let sql_visible = Spi::get_one::<bool>("SELECT pgcolumnar.preloaded()")
            .expect("SPI failed")
            .expect("NULL from pgcolumnar.preloaded()");
        assert!(sql_visible, "the test cluster must preload pgcolumnar");
    }
}

/// Required by `cargo pgrx test`: settings for the throwaway test cluster.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec!["shared_preload_libraries = 'pgcolumnar'"]
    }
}
