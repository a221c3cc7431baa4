//! Reading rows: `reader` (sequential, both directions; `group_claim`: which row group next, shared
//! out in parallel scans), the `row_batch` it stores rows
//! from and the `vector_filter` it asks of a pushed filter, `fetch` (by TID), `decode` (checked decoding), `bitmap_scan`,
//! `sample_scan` (TABLESAMPLE), `vector_pages` (a vector's bytes
//! where they lie, for fetches that read a value of it), `plan_sizes` (what the planner reads: cached sizes), `read_ahead` (which pages a scan asks
//! the operating system for before reading them) and
//! `index_delete` (which index entries point at rows no snapshot sees); `analyze_sample`
//! (which rows ANALYZE samples).

pub mod analyze_sample;
pub mod bitmap_scan;
pub mod decode;
pub mod fetch;
pub mod group_claim;
pub mod handed_groups;
pub mod index_delete;
pub mod plan_sizes;
pub mod read_ahead;
pub mod reader;
pub mod row_batch;
pub mod sample_scan;
pub mod vector_filter;
pub mod vector_pages;
