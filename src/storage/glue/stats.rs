//! `pgcolumnar.stats(regclass)`: what is stored per column, how it is encoded, and how
//! well it compresses.

use crate::storage::catalog;
use crate::storage::format::encoding::{Compression, EncodingId};
use crate::storage::relation::am;
use crate::storage::relation::datum::attr;
use crate::storage::relation::pages;
use crate::storage::write::write_buffer;
use pgrx::prelude::*;
use pgrx::PgRelation;
use std::collections::BTreeMap;

fn count_summary(counts: &BTreeMap<String, u64>) -> String {
    counts.iter().map(|(k, n)| format!("{k}:{n}")).collect::<Vec<_>>().join(" ")
}

/// One row per live column of a columnar table: row groups and rows visible to the
/// current snapshot, bytes stored and before encoding, and the vectors' encodings
/// (`encoding:count`, then `+compression:count` for vectors compressed further).
/// Anyone with SELECT on the table may call it.
// The row type is spelled out for pgrx, which derives the SQL result columns from it.
#[allow(clippy::type_complexity)]
#[pg_extern(stable)]
fn stats(
    rel: PgRelation,
) -> TableIterator<
    'static,
    (
        name!(attname, String),
        name!(row_groups, i64),
        name!(rows, i64),
        name!(null_count, i64),
        name!(stored_bytes, i64),
        name!(raw_bytes, i64),
        name!(compression_ratio, Option<f64>),
        name!(encodings, String),
    ),
> {
    // SAFETY: a SQL-callable function, so we run on the backend thread inside a transaction;
    // `rel` is a PgRelation pgrx opened (and locked) from the regclass argument, so its
    // pointer stays valid for the whole call.
    unsafe {
        let raw = rel.as_ptr();
        let relid = rel.oid();
        if !super::role_may_select(relid) {
            pg_sys::aclcheck_error(
                pg_sys::AclResult::ACLCHECK_NO_PRIV,
                pg_sys::get_relkind_objtype((*(*raw).rd_rel).relkind),
                pg_sys::get_rel_name(relid),
            );
        }
        if !am::is_columnar(raw) {
            pgrx::ereport!(
                ERROR,
                PgSqlErrorCode::ERRCODE_WRONG_OBJECT_TYPE,
                format!("\"{}\" is not a columnar table", rel.name())
            );
        }
        let desc = (*raw).rd_att;
        let natts = (*desc).natts as usize;
        // Rows this transaction still buffers count too, as a scan would see them (the
        // statement's range table does not name the table, so nothing wrote them out).
        write_buffer::flush_before_reading(raw);
        let storage_id = pages::storage_id(raw);
        let groups = catalog::load_row_groups(storage_id, pg_sys::GetActiveSnapshot(), true);
        let mut out = Vec::new();
        for i in 0..natts {
            let a = attr(desc, i);
            if a.attisdropped {
                continue;
            }
            let (mut row_groups, mut rows, mut nulls, mut stored, mut raw_bytes) =
                (0i64, 0i64, 0i64, 0i64, 0i64);
            let mut encodings = BTreeMap::new();
            let mut compressions = BTreeMap::new();
            for g in &groups {
                let Some(c) = g.chunk(i as i16 + 1) else { continue };
                row_groups += 1;
                rows += g.row_count as i64;
                nulls += c.null_count as i64;
                stored += c.length as i64;
                raw_bytes += c.raw_bytes as i64;
                for v in c.vectors.iter() {
                    let encoding =
                        EncodingId::from_u8(v.encoding).map_or("unknown".into(), |e| format!("{e:?}"));
                    *encodings.entry(encoding.to_lowercase()).or_insert(0u64) += 1;
                    match Compression::from_u8(v.compression) {
                        Some(Compression::None) => {}
                        c => {
                            let name = c.map_or("unknown".into(), |c| format!("{c:?}"));
                            *compressions.entry(name.to_lowercase()).or_insert(0u64) += 1
                        }
                    }
                }
            }
            let ratio = (stored > 0).then(|| raw_bytes as f64 / stored as f64);
            let mut summary = count_summary(&encodings);
            if !compressions.is_empty() {
                summary = format!("{summary} +{}", count_summary(&compressions));
            }
            let name = pgrx::name_data_to_str(&a.attname).to_string();
            out.push((name, row_groups, rows, nulls, stored, raw_bytes, ratio, summary));
        }
        TableIterator::new(out)
    }
}

/// How many column vectors row fetches (index, bitmap and TID scans, triggers, row
/// locks) have decoded in this backend: a fetch decodes the vector holding its row only
/// for the columns up to the last one the query reads, and neighbouring fetches share
/// it.
#[pg_extern(volatile, parallel_safe)]
fn fetch_decoded_vectors() -> i64 {
    crate::storage::read::fetch::decoded_vectors() as i64
}

/// How many of the vectors `fetch_decoded_vectors` counts were read where they lie in
/// shared buffers, a value at a time, by the first fetches from their stripe (plain,
/// bit-packed and ALP_rd values that are not compressed), instead of being copied and
/// decoded whole.
#[pg_extern(volatile, parallel_safe)]
fn fetch_vectors_read_in_place() -> i64 {
    crate::storage::read::fetch::vectors_read_in_place() as i64
}

/// How many stripes (a row group's vectors of the same rows) row fetches have made rows
/// in this backend: a stripe fetched from four times keeps its fixed-width columns
/// row by row, a fetched row's values side by side.
#[pg_extern(volatile, parallel_safe)]
fn fetch_stripes_made_rows() -> i64 {
    crate::storage::read::fetch::stripes_made_rows() as i64
}

/// How many column chunks' vector directories (their vectors' places and zone maps, a
/// `pgcolumnar.chunk` row each) this backend has parsed. A backend parses a chunk's once
/// and keeps it; a scan parses those of its filter's columns for every row group and
/// those of its other columns only for the row groups the zone maps leave it.
#[pg_extern(volatile, parallel_safe)]
fn chunk_directories_parsed() -> i64 {
    crate::storage::catalog::directories_parsed() as i64
}

/// How many rows COPY FROM has loaded into columnar tables in this backend through
/// pgcolumnar's parallel parse (`pgcolumnar.enable_parallel_copy`), rather than
/// PostgreSQL's row-by-row COPY.
#[pg_extern(volatile, parallel_safe)]
fn parallel_copy_rows() -> i64 {
    super::copy_from::copied_rows() as i64
}
