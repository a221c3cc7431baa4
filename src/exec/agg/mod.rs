//! ColumnarAgg's fold (`exec::columnar_agg` is the node): what it computes (`spec`, the
//! planner's interface), the aggregate table (`fold`) and its kernels (`kernels`), what
//! an aggregate outputs (`output`, made a Datum by `datum`), grouping (`groups`, group
//! keys in `keys`, time buckets in `bucket`) and the grouping policies that drive the
//! fold a vector at a time (`grouping`, over the `aggregates` being folded). `spec`,
//! `fold`, `kernels`, `output`, `groups`, `bucket`, `numeric` and `u256` are pure.

pub mod aggregates;
pub mod bucket;
pub mod datum;
pub mod extract;
pub mod fold;
pub mod func;
pub mod grouping;
pub mod groups;
pub mod kernels;
pub mod keys;
pub mod numeric;
pub mod numeric_fallback;
pub mod output;
pub mod spec;
pub mod u256;
