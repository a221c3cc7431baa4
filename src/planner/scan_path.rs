//! Paths for scans of columnar relations (from `hooks`' `set_rel_pathlist`): a
//! `ColumnarScan` priced by the bytes of the columns the query uses, and core's own scan
//! paths repriced with what a columnar table costs.

use super::column_decode::DecodeCosts;
use super::cost::{self, CostParams, ScanInput};
use super::custompath::{self, CustomPathKind};
use super::quals;
use super::relation::{plan_time_pruning, push_down_enabled, scanned_plainly, Pruning};
use crate::exec::columnar_scan::{ColumnarScan, ScanPlan};
use crate::exec::customscan::{Methods, PlanPrivate};
use crate::exec::join_filter::JoinFilterPlan;
use crate::pg_list;
use crate::storage::{read::plan_sizes, relation::am};
use pgrx::pg_sys;
use std::rc::Rc;

/// The ColumnarScan path.
pub struct ScanPath;

/// What `add_paths` worked out for one ColumnarScan path.
#[derive(Clone)]
pub struct Scan {
    /// Attribute numbers (1-based) the scan decodes.
    attnums: Vec<i32>,
    /// The relation's clauses translated into the scan's filter (shared by its paths),
    /// or None if `quals_push_down` is off.
    translations: Option<Rc<quals::Translations>>,
    /// The EXPLAIN fields (costs, plan-time pruning).
    explain: Vec<(String, String)>,
    /// The path's cost by component, what it was computed from (the whole scan's), and
    /// the share of its CPU work each participant does (1 when serial): what a join
    /// filter changes.
    cost: cost::ScanCost,
    input: ScanInput,
    share: f64,
    /// The hash join keys the scan drops rows by (`join_filtered`).
    join_filter: Option<JoinFilterPlan>,
}

/// Attribute numbers (1-based) of the columns the relation's output and quals use;
/// every column when the whole row is referenced.
unsafe fn used_attnums(rel: *mut pg_sys::RelOptInfo, natts: usize) -> Vec<i32> {
    // SAFETY: `rel` is the planner's live base relation (from `add_paths`): reltarget,
    // baserestrictinfo and joininfo are valid (lists of RestrictInfos), and pull_varattnos
    // builds `attrs` in the planner's memory context.
    unsafe {
        let mut attrs: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        let relid = (*rel).relid;
        pg_sys::pull_varattnos((*(*rel).reltarget).exprs as *mut pg_sys::Node, relid, &mut attrs);
        for ri in pg_list::ptrs::<pg_sys::RestrictInfo>((*rel).baserestrictinfo) {
            pg_sys::pull_varattnos((*ri).clause as *mut pg_sys::Node, relid, &mut attrs);
        }
        // Join clauses a LATERAL reference moves into the scan.
        if !(*rel).lateral_relids.is_null() {
            for ri in pg_list::ptrs::<pg_sys::RestrictInfo>((*rel).joininfo) {
                pg_sys::pull_varattnos((*ri).clause as *mut pg_sys::Node, relid, &mut attrs);
            }
        }
        let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
        let mut out = Vec::new();
        let mut member = -1;
        loop {
            member = pg_sys::bms_next_member(attrs, member);
            if member < 0 {
                break;
            }
            let attno = member + offset;
            if attno == 0 {
                return (1..=natts as i32).collect();
            }
            if attno > 0 {
                out.push(attno);
            }
        }
        out
    }
}

/// The attributes of `attnums` that the plan's target list or its (executor) quals
/// use: the ones the scan puts into its slot.
unsafe fn output_attnums(
    attnums: &[i32],
    tlist: *mut pg_sys::List,
    quals: *mut pg_sys::List,
    relid: u32,
) -> Vec<i32> {
    // SAFETY: `tlist` and `quals` are the plan's valid (possibly NIL) lists over range
    // table entry `relid` (from `plan`); the bitmapset is built in the current memory context.
    unsafe {
        let mut attrs: *mut pg_sys::Bitmapset = std::ptr::null_mut();
        pg_sys::pull_varattnos(tlist as *mut pg_sys::Node, relid, &mut attrs);
        pg_sys::pull_varattnos(quals as *mut pg_sys::Node, relid, &mut attrs);
        let offset = pg_sys::FirstLowInvalidHeapAttributeNumber;
        if pg_sys::bms_is_member(-offset, attrs) {
            // A whole-row reference needs every column.
            return attnums.to_vec();
        }
        attnums.iter().copied().filter(|&a| pg_sys::bms_is_member(a - offset, attrs)).collect()
    }
}

/// Offers our paths for base relation `rel` (range table entry `rte`) if it is a
/// columnar table scanned plainly.
///
/// # Safety
/// From `set_rel_pathlist_hook`, on the backend thread: `root`, `rel` and `rte` are the
/// planner's live nodes for one base relation, whose table the query already locked.
pub unsafe fn add_paths(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    rte: *mut pg_sys::RangeTblEntry,
) {
    // SAFETY: `root`, `rel` and `rte` are the planner's live nodes (this fn's contract); the
    // table of a plain RTE_RELATION entry is locked by the query, so table_open with NoLock is
    // valid, and it is closed before returning (an ERROR in between releases it at abort).
    // The cost GUCs are read on the backend thread.
    unsafe {
        if !scanned_plainly(rte) {
            return;
        }
        let relation = pg_sys::table_open((*rte).relid, pg_sys::NoLock as i32);
        if am::is_columnar(relation) {
            let params = super::cost_params();
            let attnums = used_attnums(rel, (*(*relation).rd_att).natts as usize);
            // Where the rows the quals want can be, by zone maps: what a ColumnarScan reads,
            // and the vectors index fetches decode.
            let mut translations = quals::Translations::default();
            translations.add(root, rel, (*rel).baserestrictinfo);
            let analysis = translations.pushdown(root, rel, (*rel).baserestrictinfo);
            let pruning = match &analysis.filter {
                Some(f) => plan_time_pruning(root, relation, f, &analysis.operands),
                None => Pruning::none(rel),
            };
            let bytes = plan_sizes::column_bytes(relation, (*(*relation).rd_att).natts as usize);
            let decode = DecodeCosts::of(relation, &bytes, (*rel).tuples);
            // Core's own paths get the costs a columnar table really has, whether or not
            // ColumnarScan is offered.
            reprice_seq_scans(rel, &decode, &params);
            // A fetch decodes the columns the plan reads of it (exec::fetch_columns).
            let fetched = fetch_columns(relation, &attnums, (*rel).tuples);
            let dropped = index_paths_core_dropped(root, rel);
            reprice_index_scans(root, rel, fetched, &params, &pruning);
            for path in dropped {
                reprice_index_path(root, rel, path, fetched, &params, &pruning);
                if (*path).parallel_aware {
                    pg_sys::add_partial_path(rel, path);
                } else {
                    pg_sys::add_path(rel, path);
                }
            }
            if super::ENABLE_COLUMNAR_SCAN.get() {
                let sizes = Sizes { bytes: &bytes, decode: &decode };
                add_scan_path(root, rel, sizes, attnums, &params, translations, analysis, &pruning);
            }
        }
        pg_sys::table_close(relation, pg_sys::NoLock as i32);
    }
}

/// A columnar relation's stored bytes by column (`plan_sizes::column_bytes`) and what
/// decoding a value of each costs.
struct Sizes<'a> {
    bytes: &'a [u64],
    decode: &'a DecodeCosts,
}

/// Offers the ColumnarScan paths: `translations` holds the base relation's clauses
/// translated, `base` the pushdown they make and `base_pruning` what zone maps rule out
/// of it.
#[allow(clippy::too_many_arguments)]
unsafe fn add_scan_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    sizes: Sizes<'_>,
    attnums: Vec<i32>,
    params: &CostParams,
    translations: quals::Translations,
    base: quals::Pushdown,
    base_pruning: &Pruning,
) {
    let bytes = sizes.bytes;
    // SAFETY: `root` and `rel` are the planner's live nodes (from `add_paths`), and
    // `translations` and `base` were made for `rel`.
    let q = unsafe { path_quals(root, rel, translations, base) };
    let filter_attributes = q.pushdown.filter.as_ref().map_or_else(Vec::new, |f| f.attributes());
    let decode = sizes.decode.of_scan(attnums.iter().map(|&a| a as usize - 1), &filter_attributes);
    // The pushed filter is the base relation's quals, and for a parameterized path
    // join clauses too (whose values are not known at plan time).
    let none = Pruning::none(rel);
    let pruning = if q.pushdown.filter.is_some() { base_pruning } else { &none };
    // SAFETY: `rel` is the planner's live base relation (from `add_paths`), and
    // `param_info` its ParamPathInfo when not NULL (checked).
    let (pages, tuples, rows, considered) = unsafe {
        let rows = if q.param_info.is_null() { (*rel).rows } else { (*q.param_info).ppi_rows };
        ((*rel).pages as f64, (*rel).tuples, rows, considered_paths(rel))
    };
    let input = ScanInput {
        zone_fraction: pruning.row_fraction,
        pages,
        bytes_all: bytes.iter().sum::<u64>() as f64,
        bytes_read: attnums.iter().map(|&a| bytes[a as usize - 1]).sum::<u64>() as f64,
        rows: tuples,
        columns_read: attnums.len(),
        filter_decode: decode.filter,
        other_decode: decode.other,
        other_whole: decode.other_whole,
        qual_per_row: q.kept_cost.per_tuple,
        filter_columns: q.filter_columns,
        filter_tests: q.filter_tests,
        filter_selectivity: q.filter_selectivity,
    };
    let metadata = params.metadata_startup();
    let paths = ScanPaths {
        input,
        rel,
        param_info: q.param_info,
        pages,
        rows,
        startup: q.kept_cost.startup + metadata,
        cost: cost::columnar_scan_components(&input, params),
        attnums,
        translations: q.translations,
        explain: ExplainFields {
            filter_tests: q.filter_tests,
            filter_selectivity: q.filter_selectivity,
            considered,
            filtered: q.pushdown.filter.is_some(),
            metadata,
            pruning,
        },
    };
    // SAFETY: `rel` is the planner's live base relation and `param_info` NULL or its
    // ParamPathInfo (from `path_quals`), on the backend thread.
    unsafe {
        paths.add_serial();
        paths.add_partial();
    }
}

/// The quals of a ColumnarScan path: those of the base relation, and for a path
/// parameterized by LATERAL references the join clauses moved down to the scan.
struct PathQuals {
    /// The path's ParamPathInfo, or NULL when it takes no parameters.
    param_info: *mut pg_sys::ParamPathInfo,
    /// What the scan evaluates itself, and what the executor does.
    pushdown: quals::Pushdown,
    /// The clauses translated (shared by the paths), or None if `quals_push_down` is off.
    translations: Option<Rc<quals::Translations>>,
    /// What the quals left to the executor cost.
    kept_cost: pg_sys::QualCost,
    /// The pushed filter's columns and tests, and the share of rows it keeps.
    filter_columns: usize,
    filter_tests: usize,
    filter_selectivity: f64,
}

/// The quals of `rel`'s ColumnarScan path: `translations` holds the base relation's
/// clauses translated and `base` the pushdown they make.
///
/// # Safety
/// Backend thread, while planning: `root` and `rel` are the planner's live nodes (from
/// `add_paths`), and `translations` and `base` were made for `rel`.
unsafe fn path_quals(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    mut translations: quals::Translations,
    base: quals::Pushdown,
) -> PathQuals {
    // SAFETY: `root` and `rel` are the planner's live nodes (this fn's contract);
    // `param_info` is checked for NULL before its clauses are read; the lists made here are
    // palloc'd in the planner's memory context.
    unsafe {
        // Like create_seqscan_path: a relation that refers to other relations' columns
        // (LATERAL) can only be scanned below a nested loop that supplies them; the path
        // says so, and createplan then replaces those references with parameters.
        let param_info = pg_sys::get_baserel_parampathinfo(root, rel, (*rel).lateral_relids);
        let mut clauses = (*rel).baserestrictinfo;
        if !param_info.is_null() {
            // Join clauses moved down to the scan are evaluated there too.
            clauses = pg_sys::list_concat_copy(clauses, (*param_info).ppi_clauses);
        }
        // `base` is the base relation's quals analysed: the scan's own unless join clauses
        // come in too, which are translated once, here, for the path and its plan.
        let enabled = push_down_enabled(root, rel);
        let pushdown = match (enabled, param_info.is_null()) {
            (false, _) => quals::Pushdown::none(clauses),
            (true, true) => base,
            (true, false) => {
                translations.add(root, rel, (*param_info).ppi_clauses);
                translations.pushdown(root, rel, clauses)
            }
        };
        let translations = enabled.then(|| Rc::new(translations));
        let kept = pg_list::from_ptrs(pushdown.kept.iter().copied());
        let mut kept_cost = pg_sys::QualCost::default();
        pg_sys::cost_qual_eval(&mut kept_cost, kept, root);
        let (filter_columns, filter_tests, filter_selectivity) = pushdown.measure(root, rel);
        PathQuals {
            param_info,
            pushdown,
            translations,
            kept_cost,
            filter_columns,
            filter_tests,
            filter_selectivity,
        }
    }
}

/// A ColumnarScan's EXPLAIN fields: costs with VERBOSE ('+'), the plan-time pruning always.
struct ExplainFields<'a> {
    filter_tests: usize,
    filter_selectivity: f64,
    /// The paths the ColumnarScan was weighed against (`considered_paths`).
    considered: String,
    /// Whether a filter is pushed (the pruning only applies to one).
    filtered: bool,
    /// The start-up cost of reading the table's metadata (`CostParams::metadata_startup`).
    metadata: f64,
    pruning: &'a Pruning,
}

impl ExplainFields<'_> {
    /// The fields of a path costing `c`, `total` in all.
    fn of(&self, c: &cost::ScanCost, total: f64) -> Vec<(String, String)> {
        let mut fields = vec![cost_components(c, self.metadata, total)];
        if self.filter_tests > 0 {
            fields.push(("+Pushed Filter Selectivity".into(), format!("{:.4}", self.filter_selectivity)));
        }
        if !self.considered.is_empty() {
            fields.push(("+Paths Considered".into(), self.considered.clone()));
        }
        let pruning = self.pruning;
        if self.filtered && pruning.computed {
            fields.push((
                "Row Groups".into(),
                format!(
                    "{} total, {} pruned at plan time (vectors: {} total, {} pruned{}){}",
                    pruning.groups,
                    pruning.pruned,
                    pruning.vectors,
                    pruning.vectors - pruning.vectors_kept,
                    match pruning.vector_sample {
                        Some((read, kept)) => format!(", estimated from {read} of {kept} row groups kept"),
                        None => String::new(),
                    },
                    match pruning.checked < pruning.groups {
                        true => format!("; estimated from {} of them", pruning.checked),
                        false => String::new(),
                    }
                ),
            ));
        }
        fields
    }
}

/// The EXPLAIN VERBOSE line of a scan's cost by part.
fn cost_components(c: &cost::ScanCost, metadata: f64, total: f64) -> (String, String) {
    (
        "+Cost Components".to_string(),
        format!(
            "io={:.2} decode={:.2} filter={:.2} output={:.2} metadata={:.2} total={:.2}",
            c.io, c.decode, c.filter, c.output, metadata, total
        ),
    )
}

/// What the serial and the partial ColumnarScan paths of a relation share.
struct ScanPaths<'a> {
    rel: *mut pg_sys::RelOptInfo,
    /// The paths' ParamPathInfo, or NULL.
    param_info: *mut pg_sys::ParamPathInfo,
    /// The relation's pages, and the rows the scan returns.
    pages: f64,
    rows: f64,
    /// The startup cost of the executor's quals.
    startup: f64,
    /// The serial scan's cost, by component.
    cost: cost::ScanCost,
    /// What the serial scan's cost was computed from.
    input: ScanInput,
    attnums: Vec<i32>,
    translations: Option<Rc<quals::Translations>>,
    explain: ExplainFields<'a>,
}

impl ScanPaths<'_> {
    /// The analysis of a path costing `c`, `total` in all.
    fn analysis(&self, c: &cost::ScanCost, total: f64, share: f64) -> Scan {
        Scan {
            attnums: self.attnums.clone(),
            translations: self.translations.clone(),
            explain: self.explain.of(c, total),
            cost: *c,
            input: self.input,
            share,
            join_filter: None,
        }
    }

    /// Offers the serial path.
    ///
    /// # Safety
    /// Backend thread, while planning: `rel` is the planner's live base relation and
    /// `param_info` NULL or its ParamPathInfo.
    unsafe fn add_serial(&self) {
        let c = &self.cost;
        // SAFETY: `rel` is the planner's live base relation and `param_info` NULL or its
        // ParamPathInfo (this fn's contract); new_path allocates the path in the planner's
        // memory context, and add_path takes it over.
        unsafe {
            let path = new_path(
                self.rel,
                self.param_info,
                self.rows,
                self.startup,
                c.total() + self.startup,
                self.analysis(c, c.total() + self.startup, 1.0),
            );
            pg_sys::add_path(self.rel, path as *mut pg_sys::Path);
        }
    }

    /// Offers a partial path for parallel plans: workers take row groups from a shared
    /// counter. CPU is shared among the participants; reading is not (as for core's Seq Scan).
    ///
    /// # Safety
    /// As `add_serial`.
    unsafe fn add_partial(&self) {
        let (rel, c) = (self.rel, &self.cost);
        // SAFETY: as `add_serial` (this fn's contract); the parallel GUCs are read on the
        // backend thread, and the partial path is the fresh CustomPath new_path returned,
        // which add_partial_path takes over.
        unsafe {
            // Row groups the zone maps keep too small for workers (core's rule for a table)
            // get no partial path: planning parallel plans over it was a good share of a
            // short query, and none of them could win.
            let kept_pages = self.pages * self.input.zone_fraction;
            let max_workers = pg_sys::max_parallel_workers_per_gather;
            if (*rel).consider_parallel
                && self.param_info.is_null()
                && pg_sys::compute_parallel_worker(rel, kept_pages, -1.0, max_workers) > 0
            {
                // Workers by the table's size, as for core's Parallel Seq Scan (decoding costs
                // per row, however few bytes the columns read take), as many as there are
                // cores to run them beside the leader.
                let workers = super::parallel_workers(rel, self.pages);
                if workers > 0 {
                    let super::Parallelism { share: divisor, speedup, startup } = super::parallelism(workers);
                    let cpu = c.decode + c.filter + c.output;
                    let startup = self.startup + startup;
                    let total = c.io + cpu / speedup + startup;
                    let shared = cost::ScanCost {
                        decode: c.decode / speedup,
                        filter: c.filter / speedup,
                        output: c.output / speedup,
                        ..*c
                    };
                    let partial = new_path(
                        rel,
                        self.param_info,
                        self.rows / divisor,
                        startup,
                        total,
                        self.analysis(&shared, total, divisor),
                    );
                    (*partial).path.parallel_aware = true;
                    (*partial).path.parallel_workers = workers;
                    (*partial).flags = 0;
                    pg_sys::add_partial_path(rel, partial as *mut pg_sys::Path);
                }
            }
        }
    }
}

/// The paths core (and earlier hooks) offered for `rel`, with their costs: what the
/// ColumnarScan is weighed against, for EXPLAIN VERBOSE.
unsafe fn considered_paths(rel: *mut pg_sys::RelOptInfo) -> String {
    // SAFETY: `rel` is the planner's live base relation (from `add_scan_path`): its
    // pathlist holds live Paths, whose tag says which struct they are (an IndexPath's
    // indexinfo is set); get_rel_name's result is checked for NULL before it is read.
    unsafe {
        let mut out = Vec::new();
        for path in pg_list::ptrs::<pg_sys::Path>((*rel).pathlist) {
            let name = match (*path).pathtype {
                pg_sys::NodeTag::T_SeqScan => "Seq Scan".to_string(),
                pg_sys::NodeTag::T_IndexScan | pg_sys::NodeTag::T_IndexOnlyScan => {
                    let index = (*(path as *mut pg_sys::IndexPath)).indexinfo;
                    let kind = if (*path).pathtype == pg_sys::NodeTag::T_IndexScan {
                        "Index Scan"
                    } else {
                        "Index Only Scan"
                    };
                    let name = pg_sys::get_rel_name((*index).indexoid);
                    let name = if name.is_null() {
                        "?".into()
                    } else {
                        std::ffi::CStr::from_ptr(name).to_string_lossy()
                    };
                    format!("{kind} using {name}")
                }
                pg_sys::NodeTag::T_BitmapHeapScan => "Bitmap Heap Scan".to_string(),
                _ => continue,
            };
            let param = if (*path).param_info.is_null() { "" } else { " (parameterized)" };
            out.push(format!("{name}{param}: {:.2}", (*path).total_cost));
        }
        out.join("; ")
    }
}

unsafe fn new_path(
    rel: *mut pg_sys::RelOptInfo,
    param_info: *mut pg_sys::ParamPathInfo,
    rows: f64,
    startup: f64,
    total: f64,
    scan: Scan,
) -> *mut pg_sys::CustomPath {
    // SAFETY: `rel` is the planner's live base relation (from `add_scan_path`), and
    // `custompath::new` returns a fresh CustomPath we may fill in.
    unsafe {
        let path = custompath::new::<ScanPath>(rel, (*rel).reltarget, rows, startup, total, scan);
        (*path).path.param_info = param_info;
        (*path).path.parallel_safe = (*rel).consider_parallel;
        // Scrollable cursors read it backward (FETCH PRIOR, LAST, BACKWARD) with no Material.
        (*path).flags = pg_sys::CUSTOMPATH_SUPPORT_BACKWARD_SCAN;
        path
    }
}

/// Core prices a sequential scan of a columnar table like one of a heap; through the
/// table AM it decodes every column and builds every row as a ColumnarScan does, so add
/// that cost to keep the comparison honest.
unsafe fn reprice_seq_scans(rel: *mut pg_sys::RelOptInfo, decode: &DecodeCosts, params: &CostParams) {
    // SAFETY: `rel` is the planner's live base relation (from `add_paths`): its path
    // lists hold live Paths, which we may reprice before add_path compares them again.
    unsafe {
        let total_rows = (*rel).tuples;
        // Every column is decoded (a dropped one costs nothing).
        let per_row = decode.all();
        let full_rows = (*rel).rows.max(1.0);
        for list in [(*rel).pathlist, (*rel).partial_pathlist] {
            for path in pg_list::ptrs::<pg_sys::Path>(list) {
                if (*path).pathtype == pg_sys::NodeTag::T_SeqScan {
                    // A partial path's rows are its share of the scan; its workers start as
                    // a partial ColumnarScan's do.
                    let share = ((*path).rows / full_rows).min(1.0);
                    let startup =
                        super::parallelism((*path).parallel_workers).startup + params.metadata_startup();
                    (*path).startup_cost += startup;
                    (*path).total_cost += cost::decode_cost(total_rows * share, per_row, params)
                        + cost::extra_output_cost(total_rows * share, params)
                        + startup;
                }
            }
        }
    }
}

/// The columns fetches of `attnums` read, and what opening a vector of each costs: byte
/// strings by the bytes a vector of theirs takes stored (`tuples` rows in the table).
unsafe fn fetch_columns(relation: pg_sys::Relation, attnums: &[i32], tuples: f64) -> cost::FetchColumns {
    // SAFETY: `relation` is open and locked (from `add_paths`), so rd_att is valid and its
    // column kinds and sizes may be read.
    let (kinds, bytes, desc) = unsafe {
        let natts = (*(*relation).rd_att).natts as usize;
        (
            crate::storage::relation::datum::relation_kinds(relation),
            plan_sizes::column_bytes(relation, natts),
            (*relation).rd_att,
        )
    };
    let vectors = (tuples / cost::VECTOR_ROWS).ceil().max(1.0);
    let is_bytes =
        |i: usize| kinds[i].physical() == Some(crate::storage::format::encoding::PhysicalKind::Bytes);
    // Every byte-string column's, whichever this fetch reads: one measurement per table.
    let byte_columns: Vec<usize> = (0..kinds.len()).filter(|&i| is_bytes(i)).collect();
    // SAFETY: `relation` is open and locked, inside the planner's transaction.
    let framed = unsafe { plan_sizes::framed_shares(relation, kinds.len(), &byte_columns) };
    let mut open = 0.0;
    for &a in attnums {
        let i = a as usize - 1;
        // SAFETY: `i` < natts: `attnums` are the relation's own columns.
        let type_oid = unsafe { crate::storage::relation::datum::attr(desc, i).atttypid };
        let per_vector = bytes[i] as f64 / vectors;
        let strings =
            is_bytes(i) && !cost::numeric_opens_as_integers(type_oid == pg_sys::NUMERICOID, per_vector);
        open += match strings {
            true => cost::framed_open_cost(per_vector, framed.get(i).copied().unwrap_or(0.0) as f64),
            false => cost::open_cost(false, per_vector),
        };
    }
    cost::FetchColumns { count: attnums.len(), open_cost: open }
}

/// How closely the table's order follows the index's: the correlation ANALYZE found
/// between the rows' order and the index's leading column (0 when there is none, or
/// for an index on an expression).
unsafe fn index_correlation(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    ipath: *mut pg_sys::IndexPath,
) -> f64 {
    // SAFETY: `root` and `rel` are the planner's live nodes and `ipath` one of `rel`'s
    // index paths (from `reprice_index_path`): `indexinfo` is checked before its first key
    // is read, `rel` is a base relation (its relid indexes simple_rte_array), and the
    // syscache tuple is released after its statistics slot is freed, inside a transaction.
    unsafe {
        let index = (*ipath).indexinfo;
        if index.is_null() || (*index).ncolumns < 1 || *(*index).indexkeys <= 0 {
            return 0.0;
        }
        let attnum = *(*index).indexkeys as i16;
        let rte = *(*root).simple_rte_array.add((*rel).relid as usize);
        let tuple = pg_sys::SearchSysCache3(
            pg_sys::SysCacheIdentifier::STATRELATTINH as i32,
            pg_sys::Datum::from((*rte).relid),
            pg_sys::Datum::from(attnum),
            pg_sys::Datum::from(false),
        );
        if tuple.is_null() {
            return 0.0;
        }
        let mut slot = pg_sys::AttStatsSlot::default();
        let mut correlation = 0.0;
        if pg_sys::get_attstatsslot(
            &mut slot,
            tuple,
            pg_sys::STATISTIC_KIND_CORRELATION as i32,
            pg_sys::InvalidOid,
            pg_sys::ATTSTATSSLOT_NUMBERS as i32,
        ) {
            if slot.nnumbers == 1 {
                correlation = *slot.numbers as f64;
            }
            pg_sys::free_attstatsslot(&mut slot);
        }
        pg_sys::ReleaseSysCache(tuple);
        correlation
    }
}

/// How many times a parameterized path is expected to run: as core's get_loop_count,
/// the fewest rows of the relations it takes parameters from.
unsafe fn loop_count(root: *mut pg_sys::PlannerInfo, path: *mut pg_sys::Path) -> f64 {
    // SAFETY: `root` is the live PlannerInfo and `path` one of its paths (from
    // `reprice_index_path`); members of ppi_req_outer are range table indexes, checked
    // against simple_rel_array_size before simple_rel_array is read, and NULL entries skipped.
    unsafe {
        let info = (*path).param_info;
        if info.is_null() {
            return 1.0;
        }
        let mut loops: Option<f64> = None;
        let mut member = -1;
        loop {
            member = pg_sys::bms_next_member((*info).ppi_req_outer, member);
            if member < 0 || member >= (*root).simple_rel_array_size {
                break;
            }
            let outer = *(*root).simple_rel_array.add(member as usize);
            if outer.is_null() || (*outer).rows <= 0.0 {
                continue;
            }
            loops = Some(loops.map_or((*outer).rows, |l: f64| l.min((*outer).rows)));
        }
        loops.unwrap_or(1.0).max(1.0)
    }
}

/// Core's index and bitmap paths of the relation, made again: core kept only those its
/// heap costs did not rule out (a bitmap scan beats an index scan on heap by reading
/// each page once, which means nothing for a columnar table), so each kind is made on
/// its own, with the other turned off, and they compete again once repriced. A kind
/// the user turned off is not made again.
unsafe fn index_paths_core_dropped(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
) -> Vec<*mut pg_sys::Path> {
    // SAFETY: `root` and `rel` are the planner's live nodes (from `add_paths`), on the
    // backend thread: the enable_* GUCs are only touched by this thread and are restored
    // (also on ERROR, by the finally) before returning, as are `rel`'s path lists, which
    // create_index_paths fills in the meantime.
    unsafe {
        if (*rel).indexlist.is_null() {
            return Vec::new();
        }
        let (index_on, index_only_on, bitmap_on) =
            (pg_sys::enable_indexscan, pg_sys::enable_indexonlyscan, pg_sys::enable_bitmapscan);
        let (pathlist, partial) = ((*rel).pathlist, (*rel).partial_pathlist);
        let mut made = Vec::new();
        for bitmaps in [false, true] {
            if (bitmaps && !bitmap_on) || (!bitmaps && !index_on && !index_only_on) {
                continue;
            }
            (*rel).pathlist = std::ptr::null_mut();
            (*rel).partial_pathlist = std::ptr::null_mut();
            pg_sys::enable_indexscan = index_on && !bitmaps;
            pg_sys::enable_indexonlyscan = index_only_on && !bitmaps;
            pg_sys::enable_bitmapscan = bitmaps;
            pgrx::PgTryBuilder::new(|| pg_sys::create_index_paths(root, rel))
                .finally(|| {
                    pg_sys::enable_indexscan = index_on;
                    pg_sys::enable_indexonlyscan = index_only_on;
                    pg_sys::enable_bitmapscan = bitmap_on;
                })
                .execute();
            for list in [(*rel).pathlist, (*rel).partial_pathlist] {
                for path in pg_list::ptrs::<pg_sys::Path>(list) {
                    let wanted = match (*path).pathtype {
                        pg_sys::NodeTag::T_BitmapHeapScan => bitmaps,
                        pg_sys::NodeTag::T_IndexScan => !bitmaps && index_on,
                        pg_sys::NodeTag::T_IndexOnlyScan => !bitmaps && index_only_on,
                        _ => false,
                    };
                    if wanted {
                        made.push(path);
                    }
                }
            }
        }
        (*rel).pathlist = pathlist;
        (*rel).partial_pathlist = partial;
        made
    }
}

/// Core prices index and bitmap scans of a columnar table like ones of a heap (a page
/// per row at worst); fetching from a columnar table opens a vector per column read
/// (kept for the next fetches), so that is priced instead.
unsafe fn reprice_index_scans(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    columns: cost::FetchColumns,
    params: &CostParams,
    pruning: &Pruning,
) {
    // SAFETY: `root` and `rel` are the planner's live nodes (from `add_paths`); each of
    // `rel`'s paths is live, as `reprice_index_path` requires.
    unsafe {
        for list in [(*rel).pathlist, (*rel).partial_pathlist] {
            for path in pg_list::ptrs::<pg_sys::Path>(list) {
                reprice_index_path(root, rel, path, columns, params, pruning);
            }
        }
    }
}

/// Reprices one index, index-only or bitmap heap path (others are left alone): core's
/// cost = the index's part + fetching the rows as heap pages; the second is replaced by
/// what fetching them from a columnar table costs. A kind the user turned off keeps its
/// disable cost.
unsafe fn reprice_index_path(
    root: *mut pg_sys::PlannerInfo,
    rel: *mut pg_sys::RelOptInfo,
    path: *mut pg_sys::Path,
    columns: cost::FetchColumns,
    params: &CostParams,
    pruning: &Pruning,
) {
    // SAFETY: `root` and `rel` are the planner's live nodes and `path` a live path of
    // `rel` (from `add_paths` / `reprice_index_scans`): its tag says which struct it is (an
    // IndexPath, or a BitmapHeapPath whose bitmapqual is a live Path), and the cost GUCs are
    // read on the backend thread.
    unsafe {
        let (index_part, fetched, columns, enabled, correlation) = match (*path).pathtype {
            pg_sys::NodeTag::T_IndexScan => {
                let ipath = path as *mut pg_sys::IndexPath;
                let fetched = index_fetched(rel, ipath, pruning);
                let correlation = index_correlation(root, rel, ipath);
                ((*ipath).indextotalcost, fetched, columns, pg_sys::enable_indexscan, correlation)
            }
            // Its values come from the index; the fetch only checks visibility.
            pg_sys::NodeTag::T_IndexOnlyScan => {
                let ipath = path as *mut pg_sys::IndexPath;
                let none = cost::FetchColumns { count: 0, open_cost: 0.0 };
                let fetched = index_fetched(rel, ipath, pruning);
                let correlation = index_correlation(root, rel, ipath);
                ((*ipath).indextotalcost, fetched, none, pg_sys::enable_indexonlyscan, correlation)
            }
            pg_sys::NodeTag::T_BitmapHeapScan => {
                let bitmap = (*(path as *mut pg_sys::BitmapHeapPath)).bitmapqual;
                // One index's bitmap is read in TID order: its rows lie as that index orders
                // them; a combination of bitmaps is taken as scattered.
                let correlation = if (*bitmap).type_ == pg_sys::NodeTag::T_IndexPath {
                    index_correlation(root, rel, bitmap as *mut pg_sys::IndexPath)
                } else {
                    0.0
                };
                ((*bitmap).total_cost, (*path).rows, columns, pg_sys::enable_bitmapscan, correlation)
            }
            _ => return,
        };
        // A partial path's participants share the fetches (at the speed-up the machine's
        // cores give, as for a partial ColumnarScan), and each worker starts with empty
        // caches: the same start-up as a ColumnarScan's workers.
        let super::Parallelism { speedup, startup, .. } = super::parallelism((*path).parallel_workers);
        let cache = crate::storage::read::fetch::fetch_cache_bytes() as f64 / cost::CACHED_VECTOR_BYTES;
        let loops = loop_count(root, path);
        let vectors = pruning.vectors_kept.max(1.0);
        let fetch = cost::index_fetch_cost(fetched, loops, columns, vectors, correlation, cache, params);
        let disabled = if enabled { 0.0 } else { pg_sys::disable_cost };
        (*path).startup_cost += startup;
        (*path).total_cost = index_part + fetch / speedup + startup + disabled;
    }
}

/// The rows an index path fetches per loop: core's estimate, and when the path's index
/// clauses include every WHERE clause of the table, at most the rows of the vectors zone
/// maps keep for those clauses (a row the index returns passes them all, so it lies in a
/// kept vector). A lookup whose key no row group's range holds fetches nothing.
///
/// # Safety
/// `rel` is the planner's live base relation and `ipath` a live IndexPath of it; `pruning`
/// was made from `rel`'s WHERE clauses.
unsafe fn index_fetched(
    rel: *mut pg_sys::RelOptInfo,
    ipath: *mut pg_sys::IndexPath,
    pruning: &Pruning,
) -> f64 {
    // SAFETY: as this fn's contract says: indexclauses is a list of IndexClauses, each with
    // the RestrictInfo it came from; baserestrictinfo a list of RestrictInfos.
    unsafe {
        let tuples = (*rel).tuples;
        let estimate = (*ipath).indexselectivity * tuples;
        if !pruning.computed || (*rel).baserestrictinfo.is_null() {
            return estimate;
        }
        let indexed: Vec<*mut pg_sys::RestrictInfo> =
            pg_list::ptrs::<pg_sys::IndexClause>((*ipath).indexclauses).map(|c| (*c).rinfo).collect();
        let covered =
            pg_list::ptrs::<pg_sys::RestrictInfo>((*rel).baserestrictinfo).all(|ri| indexed.contains(&ri));
        if covered {
            estimate.min(tuples * pruning.row_fraction)
        } else {
            estimate
        }
    }
}

/// A join-filtered ColumnarScan path (`join_filtered`).
pub struct JoinFiltered {
    pub path: *mut pg_sys::CustomPath,
    /// Of the path's startup and total costs, the part that is waiting for the hash
    /// table's build: the hash join counts the build as its inner side's cost already,
    /// and takes these off its own.
    pub waiting_startup: f64,
    pub waiting_total: f64,
}

/// A copy of `path`, if it is an unparameterized ColumnarScan path (serial or partial),
/// that drops the rows whose key `filter` names is not among its parent hash join's
/// inner keys: `fraction` of its rows are left (the join clause's semi-join
/// selectivity), and it starts only once the hash table is built, which takes
/// `build_cost` (the inner path's total cost). None for any other path.
///
/// # Safety
/// Backend thread, while planning: `path` is a live path of the planner's.
pub unsafe fn join_filtered(
    path: *mut pg_sys::Path,
    filter: JoinFilterPlan,
    fraction: f64,
    build_cost: f64,
    params: &CostParams,
) -> Option<JoinFiltered> {
    // SAFETY: `path` is a live planner path (this fn's contract); `analysis_of` checks that it
    // is one of ours before reading its analysis; the copy is a fresh CustomPath in the
    // planner's memory context, with the original's relation, target and flags.
    unsafe {
        let scan = custompath::analysis_of::<ScanPath>(path)?;
        // A pushed test that may fail runs on every row core's scan would evaluate it on,
        // not only on those the join keys let through.
        if !(*path).param_info.is_null() || scan.translations.as_ref().is_some_and(|t| t.may_fail()) {
            return None;
        }
        let whole = cost::join_filtered_scan(&scan.input, fraction, params);
        let share = scan.share.max(1.0);
        let c = cost::ScanCost {
            decode: whole.decode / share,
            filter: whole.filter / share,
            output: whole.output / share,
            ..whole
        };
        // It starts only once the hash table is built: a startup of at least the build's
        // cost keeps the hash join from pulling a first outer row before building (it does
        // when the outer side starts cheaper than the inner side finishes; the plan's
        // startup cost is the path's). The build's work is the join's inner cost already:
        // the join takes off its own costs what this path's hold of it (`JoinFiltered`),
        // or every join filter would pay for its build twice.
        let kept_startup = (*path).startup_cost;
        let own_total = kept_startup + c.total();
        let startup = kept_startup.max(build_cost);
        let total = startup.max(own_total);
        let mut analysis = scan.clone();
        analysis.explain.retain(|(l, _)| l != "+Cost Components");
        analysis.explain.insert(0, cost_components(&c, params.metadata_startup(), total));
        analysis.explain.push(("+Join Filter Selectivity".into(), format!("{fraction:.4}")));
        analysis.cost = c;
        analysis.join_filter = Some(filter);
        let original = path as *mut pg_sys::CustomPath;
        let parent = (*path).parent;
        let copy = custompath::new::<ScanPath>(
            parent,
            (*path).pathtarget,
            (*path).rows * fraction,
            startup,
            total,
            analysis,
        );
        (*copy).path.parallel_aware = (*path).parallel_aware;
        (*copy).path.parallel_safe = (*path).parallel_safe;
        (*copy).path.parallel_workers = (*path).parallel_workers;
        (*copy).flags = (*original).flags;
        Some(JoinFiltered {
            path: copy,
            waiting_startup: startup - kept_startup,
            waiting_total: total - own_total,
        })
    }
}

/// The ColumnarScan of a path: its quals, translated with the path, put in the order
/// createplan gives them.
impl CustomPathKind for ScanPath {
    type Node = ColumnarScan;
    type Analysis = Scan;
    const SCAN_METHODS: &'static pg_sys::CustomScanMethods = &Methods::<ColumnarScan>::PARALLEL_SCAN;

    unsafe fn plan(
        root: *mut pg_sys::PlannerInfo,
        rel: *mut pg_sys::RelOptInfo,
        path: *mut pg_sys::CustomPath,
        scan: &Scan,
        tlist: *mut pg_sys::List,
        clauses: *mut pg_sys::List,
    ) -> *mut pg_sys::CustomScan {
        // SAFETY: called through `plan_path` from createplan (the trait's contract): `root`,
        // `rel` and `path` are the planner's live nodes and `tlist`, `clauses` valid lists,
        // `clauses` of RestrictInfos; `new_scan` returns a fresh CustomScan we fill in, and the
        // copies and lists are palloc'd in the planner's memory context.
        unsafe {
            let cscan = custompath::new_scan();
            (*cscan).scan.plan.targetlist = tlist;
            // The quals the scan evaluates itself leave the plan's qual; zone maps still check
            // those of the others they can. The clauses were translated with the path; here they
            // are only put in the order createplan gives them.
            let pushdown = match &scan.translations {
                Some(t) => t.pushdown(root, rel, clauses),
                None => quals::Pushdown::none(clauses),
            };
            let clause_of = |ri: &*mut pg_sys::RestrictInfo| (**ri).clause as *mut pg_sys::Node;
            let quals =
                pg_sys::extract_actual_clauses(pg_list::from_ptrs(pushdown.kept.iter().copied()), false);
            (*cscan).scan.plan.qual = quals;
            (*cscan).scan.scanrelid = (*rel).relid;
            let found = quals::zone_predicates(quals, (*rel).relid);
            // custom_exprs: the zone-map quals, the pushed quals, the operands (copies, which
            // setrefs fixes up like any scan expression).
            let copy = |n: *mut pg_sys::Node| {
                pg_sys::copyObjectImpl(n as *const std::ffi::c_void) as *mut pg_sys::Node
            };
            let pushed: Vec<*mut pg_sys::Node> = pushdown.pushed.iter().map(clause_of).collect();
            let exprs = found
                .iter()
                .map(|(q, _, _)| copy(*q))
                .chain(pushed.iter().map(|&q| copy(q)))
                .chain(pushdown.operands.iter().map(|&o| copy(o)));
            (*cscan).custom_exprs = pg_list::from_ptrs(exprs);
            let output = output_attnums(&scan.attnums, tlist, quals, (*rel).relid);
            let plan = ScanPlan {
                attnums: scan.attnums.clone(),
                output,
                explain: scan.explain.clone(),
                zone_quals: found.len(),
                pushed_quals: pushed.len(),
                zone_predicates: found.into_iter().map(|(_, att, p)| (att, p)).collect(),
                filter: pushdown.filter,
                join_filter: scan.join_filter.clone(),
            };
            (*cscan).custom_private = plan.to_list();
            (*cscan).flags = (*path).flags;
            cscan
        }
    }
}
