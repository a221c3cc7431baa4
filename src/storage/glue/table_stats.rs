//! `pgcolumnar.table_stats`: one row per columnar table the current role may SELECT
//! from — its row groups (and how many are small, waiting for a merge), rows, deleted
//! rows, bytes per column, compression ratio and when VACUUM (which merges) last ran.
//! The view calls `table_summary` for each columnar table in `pg_class`.

use crate::storage::catalog;
use crate::storage::change::vacuum::SMALL_GROUP_ROWS;
use crate::storage::format::delete_mask;
use crate::storage::relation::am;
use crate::storage::relation::datum::attr;
use crate::storage::relation::pages;
use pgrx::prelude::*;

pgrx::extension_sql!(
    r#"
-- Tables of other sessions' temporary schemas are left out (their pages are not ours
-- to read); so are tables the role may not SELECT from (table_summary returns no row).
CREATE VIEW pgcolumnar.table_stats AS
SELECT c.oid::regclass AS relation, t.row_groups, t.small_row_groups, t.rows, t.deleted_rows,
       t.deleted_fraction, t.stored_bytes, t.raw_bytes, t.compression_ratio, t.column_bytes,
       greatest(s.last_vacuum, s.last_autovacuum) AS last_vacuum
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_am a ON a.oid = c.relam AND a.amhandler = 'pgcolumnar.columnar_handler'::regproc
  CROSS JOIN LATERAL pgcolumnar.table_summary(c.oid) t
  LEFT JOIN pg_catalog.pg_stat_all_tables s ON s.relid = c.oid
 WHERE c.relkind IN ('r', 'm') AND (c.relpersistence <> 't' OR c.relnamespace = pg_catalog.pg_my_temp_schema());
GRANT SELECT ON pgcolumnar.table_stats TO PUBLIC;
"#,
    name = "table_stats_view",
    requires = [table_summary]
);

/// The row of `pgcolumnar.table_stats` for the table `relid`: none if the role may not
/// SELECT from it, or it is not (or no longer) a columnar table. Rows and deletes are as
/// the current snapshot sees them (rows this transaction has not written out yet, which
/// `pgcolumnar.stats` counts, are not); `rows` counts stored rows, deleted ones included;
/// a row group is small when fewer than 51,200 of its rows are live.
// The row type is spelled out for pgrx, which derives the SQL result columns from it.
#[allow(clippy::type_complexity)]
#[pg_extern(stable)]
fn table_summary(
    relid: pg_sys::Oid,
) -> TableIterator<
    'static,
    (
        name!(row_groups, i64),
        name!(small_row_groups, i64),
        name!(rows, i64),
        name!(deleted_rows, i64),
        name!(deleted_fraction, Option<f64>),
        name!(stored_bytes, i64),
        name!(raw_bytes, i64),
        name!(compression_ratio, Option<f64>),
        name!(column_bytes, pgrx::JsonB),
    ),
> {
    // SAFETY: a SQL-callable function, so we run on the backend thread inside a
    // transaction; the relation is opened (and locked) here and closed before returning,
    // and read only while open.
    unsafe {
        if !super::role_may_select(relid) {
            return TableIterator::new(Vec::new());
        }
        // Dropped since the caller read pg_class: no row.
        let rel = pg_sys::try_relation_open(relid, pg_sys::AccessShareLock as i32);
        if rel.is_null() {
            return TableIterator::new(Vec::new());
        }
        // Another session's temporary table: its pages are in that session's memory.
        let other_temp = (*(*rel).rd_rel).relpersistence == pg_sys::RELPERSISTENCE_TEMP as std::ffi::c_char
            && !(*rel).rd_islocaltemp;
        if !am::is_columnar(rel) || other_temp {
            pg_sys::relation_close(rel, pg_sys::AccessShareLock as i32);
            return TableIterator::new(Vec::new());
        }
        let row = summary(rel);
        pg_sys::relation_close(rel, pg_sys::AccessShareLock as i32);
        TableIterator::new(vec![row])
    }
}

type Summary = (i64, i64, i64, i64, Option<f64>, i64, i64, Option<f64>, pgrx::JsonB);

/// The summary of the open columnar relation `rel`.
unsafe fn summary(rel: pg_sys::Relation) -> Summary {
    // SAFETY: the caller guarantees `rel` is open and locked, on the backend thread inside a
    // transaction, so its metapage and metadata may be read.
    unsafe {
        let snapshot = pg_sys::GetActiveSnapshot();
        let (groups, deleted) = if pages::nblocks(rel) == 0 {
            (Vec::new(), Vec::new())
        } else {
            let storage_id = pages::storage_id(rel);
            (
                catalog::load_row_groups(storage_id, snapshot, true),
                catalog::load_deleted_rows(storage_id, snapshot),
            )
        };
        let (mut rows, mut deleted_rows, mut small) = (0u64, 0u64, 0u64);
        for g in &groups {
            let dead = delete_mask::group_mask(g.deleted.as_deref(), &deleted, g.first_row, g.row_count)
                .map_or(0, |m| m.count());
            rows += g.row_count;
            deleted_rows += dead;
            small += (g.row_count - dead < SMALL_GROUP_ROWS) as u64;
        }
        let desc = (*rel).rd_att;
        let mut columns = serde_json::Map::new();
        let (mut stored, mut raw) = (0u64, 0u64);
        for i in 0..(*desc).natts as usize {
            let a = attr(desc, i);
            if a.attisdropped {
                continue;
            }
            let chunks = groups.iter().filter_map(|g| g.chunk(i as i16 + 1));
            let (bytes, raw_bytes) = chunks.fold((0u64, 0u64), |(s, r), c| (s + c.length, r + c.raw_bytes));
            stored += bytes;
            raw += raw_bytes;
            columns.insert(pgrx::name_data_to_str(&a.attname).to_string(), bytes.into());
        }
        // The order columns (sort_by tables) are stored bytes too.
        stored += groups.iter().filter_map(|g| g.chunks.order.as_ref()).map(|c| c.length).sum::<u64>();
        (
            groups.len() as i64,
            small as i64,
            rows as i64,
            deleted_rows as i64,
            (rows > 0).then(|| deleted_rows as f64 / rows as f64),
            stored as i64,
            raw as i64,
            (stored > 0).then(|| raw as f64 / stored as f64),
            pgrx::JsonB(serde_json::Value::Object(columns)),
        )
    }
}
