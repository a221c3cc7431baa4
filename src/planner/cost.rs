//! Cost formulas for columnar plans. Pure: the planner hook gathers the inputs (from
//! metadata and PostgreSQL's cost GUCs) and these functions price the alternatives.

/// Relative CPU cost of decoding one value, in units of `cpu_operator_cost`:
/// vectorized decoding of a few bytes per value is cheaper than one operator call.
pub const DECODE_PER_VALUE: f64 = 0.25;

#[derive(Debug, Clone, Copy)]
pub struct CostParams {
    pub seq_page_cost: f64,
    pub cpu_tuple_cost: f64,
    pub cpu_operator_cost: f64,
}

#[derive(Debug, Clone, Copy)]
pub struct ScanInput {
    /// Pages of the relation (all columns).
    pub pages: f64,
    /// Stored bytes of all columns and of the columns the scan decodes.
    pub bytes_all: f64,
    pub bytes_read: f64,
    /// Rows stored and columns decoded.
    pub rows: f64,
    pub columns_read: usize,
    /// Per-row cost of the quals evaluated on the scan's output.
    pub qual_per_row: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    pub startup: f64,
    pub total: f64,
}

/// Pages a scan reads: the projected columns' share of the relation.
pub fn pages_read(input: &ScanInput) -> f64 {
    if input.bytes_all <= 0.0 {
        return input.pages.min(1.0);
    }
    (input.pages * (input.bytes_read / input.bytes_all).min(1.0)).ceil()
}

/// CPU cost of decoding `columns` columns of `rows` rows.
pub fn decode_cost(rows: f64, columns: usize, p: &CostParams) -> f64 {
    rows * columns as f64 * DECODE_PER_VALUE * p.cpu_operator_cost
}

/// Extra CPU cost of fetching `rows` rows one by one through an index: each fetch may
/// need a vector of every column it reads decoded (`vector_rows` values each), and
/// rows an index returns rarely arrive in storage order, so every fetch is priced as a
/// fresh decode. This is pessimistic for indexes that follow the storage order; the
/// ColumnarScan with zone maps serves those ranges well anyway.
pub fn index_fetch_decode_cost(rows: f64, columns: usize, vector_rows: usize, p: &CostParams) -> f64 {
    decode_cost(rows * vector_rows as f64, columns.max(1), p)
}

/// A scan that reads and decodes only `columns_read` columns.
pub fn columnar_scan(input: &ScanInput, p: &CostParams) -> Cost {
    let io = pages_read(input) * p.seq_page_cost;
    let decode = decode_cost(input.rows, input.columns_read, p);
    let cpu = input.rows * (p.cpu_tuple_cost + input.qual_per_row);
    Cost { startup: 0.0, total: io + decode + cpu }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: CostParams = CostParams { seq_page_cost: 1.0, cpu_tuple_cost: 0.01, cpu_operator_cost: 0.0025 };

    fn input(bytes_read: f64, columns_read: usize) -> ScanInput {
        ScanInput {
            pages: 1000.0,
            bytes_all: 8.0e6,
            bytes_read,
            rows: 1.0e6,
            columns_read,
            qual_per_row: 0.0,
        }
    }

    #[test]
    fn io_scales_with_projected_bytes() {
        assert_eq!(pages_read(&input(8.0e6, 12)), 1000.0);
        assert_eq!(pages_read(&input(1.0e6, 1)), 125.0);
        assert_eq!(pages_read(&ScanInput { bytes_all: 0.0, pages: 1.0, ..input(0.0, 0) }), 1.0);
    }

    #[test]
    fn index_fetches_pay_a_vector_decode_each() {
        let one = index_fetch_decode_cost(1.0, 3, 2048, &P);
        assert!((one - 3.0 * 2048.0 * DECODE_PER_VALUE * 0.0025).abs() < 1e-9);
        // Fetching a large share of a table through an index costs more than scanning it.
        let scan = columnar_scan(&input(8.0e6, 12), &P);
        assert!(index_fetch_decode_cost(1.0e5, 12, 2048, &P) > scan.total);
        // A handful of rows stays cheap.
        assert!(index_fetch_decode_cost(10.0, 3, 2048, &P) < scan.total / 100.0);
    }

    #[test]
    fn fewer_columns_cost_less() {
        let one = columnar_scan(&input(1.0e6, 1), &P);
        let all = columnar_scan(&input(8.0e6, 12), &P);
        assert!(one.total < all.total);
        // Full projection: 1000 pages + 12 values/row decode + tuple cost.
        let expected = 1000.0 + 1.0e6 * 12.0 * DECODE_PER_VALUE * 0.0025 + 1.0e6 * 0.01;
        assert!((all.total - expected).abs() < 1e-6);
    }
}
