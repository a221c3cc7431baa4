//! The pure parts of ColumnarAgg (`exec::columnar_agg`): what it computes (`spec`),
//! grouping (`groups`), aggregate states (`fold`) and time buckets (`bucket`).

pub mod bucket;
pub mod fold;
pub mod groups;
pub mod numeric;
pub mod spec;
