//! Execution: the custom scan nodes (`customscan` generates their PostgreSQL method
//! tables; `columnar_scan` is the ColumnarScan node). Imports `storage`, never
//! `planner`: what a node needs of the planner's decisions comes in its plan.

pub mod agg;
pub mod columnar_agg;
pub mod columnar_scan;
pub mod customscan;
pub mod fetch_columns;
pub mod filter;
pub mod last_point;
pub mod pushed_seq_scan;
pub mod row_group_claims;
