//! What decoding one value of each column costs a scan (`cost::decode_per_value`), from
//! how the column is stored: its kind, and the bytes its values take stored.

use super::cost::{self, StoredAs};
use crate::storage::format::encoding::PhysicalKind;
use crate::storage::relation::datum;
use pgrx::pg_sys;

/// Per-value decode costs of a relation's columns, by attribute index (0 for a dropped
/// column), in units of `cpu_operator_cost`.
pub struct DecodeCosts {
    per_value: Vec<f64>,
    /// Of each, the part paid for whole vectors (`cost::decoded_whole`).
    whole: Vec<f64>,
}

impl DecodeCosts {
    /// The costs of `relation`'s columns, whose `tuples` rows take `bytes` (stored bytes
    /// by attribute index, `plan_sizes::column_bytes`).
    ///
    /// # Safety
    /// `relation` is open and locked; backend thread, inside a transaction.
    pub unsafe fn of(relation: pg_sys::Relation, bytes: &[u64], tuples: f64) -> DecodeCosts {
        // SAFETY: this fn's contract: rd_att is valid, and its kinds may be looked up.
        let (kinds, desc) = unsafe { (datum::relation_kinds(relation), (*relation).rd_att) };
        let (per_value, whole) = kinds
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let per_row = bytes.get(i).map_or(0.0, |&b| b as f64 / tuples.max(1.0));
                // SAFETY: `i` < natts: `kinds` was made from this descriptor.
                let numeric = unsafe { datum::attr(desc, i).atttypid } == pg_sys::NUMERICOID;
                match stored_as(kind.physical(), numeric, per_row) {
                    Some(stored) => {
                        (cost::decode_per_value(stored, per_row), cost::decoded_whole(stored, per_row))
                    }
                    None => (0.0, 0.0),
                }
            })
            .unzip();
        DecodeCosts { per_value, whole }
    }

    /// What a scan reading `read` (attribute indexes) with a pushed filter on `filter`
    /// (attribute indexes, of `read`) decodes, as `ScanInput` takes it: the costs summed
    /// over the filter's columns, over the others, and the others' parts paid for whole
    /// vectors.
    pub fn of_scan(&self, read: impl IntoIterator<Item = usize>, filter: &[usize]) -> ScanDecode {
        let at = |v: &[f64], a: usize| v.get(a).copied().unwrap_or(0.0);
        let mut d = ScanDecode {
            filter: filter.iter().map(|&a| at(&self.per_value, a)).sum(),
            other: 0.0,
            other_whole: 0.0,
        };
        for a in read.into_iter().filter(|a| !filter.contains(a)) {
            d.other += at(&self.per_value, a);
            d.other_whole += at(&self.whole, a);
        }
        d
    }

    /// The costs summed over every column.
    pub fn all(&self) -> f64 {
        self.per_value.iter().sum()
    }
}

/// `DecodeCosts::of_scan`: `ScanInput`'s `filter_decode`, `other_decode` and `other_whole`.
pub struct ScanDecode {
    pub filter: f64,
    pub other: f64,
    pub other_whole: f64,
}

/// How a column of physical kind `physical` is stored; `numeric` for a numeric column,
/// whose values take `stored_bytes` each: numerics that fit 64-bit mantissas are stored
/// as scaled integers.
fn stored_as(physical: Option<PhysicalKind>, numeric: bool, stored_bytes: f64) -> Option<StoredAs> {
    Some(match physical? {
        PhysicalKind::Int => StoredAs::Integers,
        PhysicalKind::Float32 | PhysicalKind::Float64 => StoredAs::Floats,
        PhysicalKind::Bytes if cost::numeric_opens_as_integers(numeric, stored_bytes * cost::VECTOR_ROWS) => {
            StoredAs::Integers
        }
        PhysicalKind::Bytes => StoredAs::ByteStrings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_decodes_its_filter_columns_and_the_others() {
        let costs = DecodeCosts { per_value: vec![0.2, 0.75, 12.0, 0.0], whole: vec![0.0, 0.75, 11.8, 0.0] };
        let d = costs.of_scan([0, 1, 2], &[1]);
        assert_eq!((d.filter, d.other, d.other_whole), (0.75, 12.2, 11.8));
        // Columns past the descriptor (none) and a dropped one cost nothing.
        let d = costs.of_scan([3, 9], &[]);
        assert_eq!((d.filter, d.other, d.other_whole), (0.0, 0.0, 0.0));
        assert_eq!(costs.all(), 12.95);
    }

    #[test]
    fn numerics_that_fit_mantissas_decode_as_integers() {
        assert_eq!(stored_as(Some(PhysicalKind::Bytes), true, 2.0), Some(StoredAs::Integers));
        assert_eq!(stored_as(Some(PhysicalKind::Bytes), true, 20.0), Some(StoredAs::ByteStrings));
        assert_eq!(stored_as(Some(PhysicalKind::Bytes), false, 2.0), Some(StoredAs::ByteStrings));
        assert_eq!(stored_as(Some(PhysicalKind::Float64), false, 7.0), Some(StoredAs::Floats));
        assert_eq!(stored_as(None, false, 0.0), None);
    }
}
