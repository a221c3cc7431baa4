//! Planner integration: the hooks (`hooks`), the paths they offer for columnar
//! relations (`scan_path`), the quals zone maps can check (`quals`), and the cost model
//! that prices them against core's plans (`cost`). Imports `exec` (the nodes it plans) and `storage`.

pub mod cost;
pub mod hooks;
pub mod quals;
pub mod scan_path;

use pgrx::{GucContext, GucFlags, GucRegistry, GucSetting};

/// `pgcolumnar.enable_columnar_scan`: offer the ColumnarScan path (on by default).
pub static ENABLE_COLUMNAR_SCAN: GucSetting<bool> = GucSetting::<bool>::new(true);

/// `pgcolumnar.quals_push_down`: whether ColumnarScans evaluate the quals they can
/// (on by default), for tables whose `quals_push_down` option is not set.
pub static QUALS_PUSH_DOWN: GucSetting<bool> = GucSetting::<bool>::new(true);

pub fn define_gucs() {
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
