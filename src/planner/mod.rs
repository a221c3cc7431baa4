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

pub fn define_gucs() {
    GucRegistry::define_bool_guc(
        c"pgcolumnar.enable_columnar_scan",
        c"Enables the ColumnarScan path, which reads only the columns a query uses.",
        c"When off, columnar tables are read by a sequential scan that decodes every column.",
        &ENABLE_COLUMNAR_SCAN,
        GucContext::Userset,
        GucFlags::default(),
    );
}
