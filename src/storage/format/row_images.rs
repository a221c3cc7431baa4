//! Heap tuple images (`tuple_image`) of rows held column by column in `ColumnBuilder`s:
//! the rows a COPY parsed (`change::batch_log`), the rows a write buffer holds, and the
//! rows decoding reads back out of a row group's chunks (`row_group_record`). Each is
//! byte for byte the image `tuple_image::append` makes of the row's datums (a builder
//! holds what `relation::datum` makes of each datum). Pure.

use super::column_builder::ColumnBuilder;
use super::column_kind::ColumnKind;
use super::logical_record::{RecordBuilder, RECORD_BYTES_TARGET};
use super::tuple_image::{self, AttrShape, Value};
use std::ops::Range;

/// Dense value `dense` of `b`, a column of `kind`, as the row's tuple stores it.
pub fn value_of(kind: ColumnKind, b: &ColumnBuilder, dense: usize) -> Value<'_> {
    match kind {
        ColumnKind::Int { .. } => Value::Word(b.int_at(dense) as u64),
        ColumnKind::Float4 => Value::Word(b.f32_at(dense).to_bits() as u64),
        ColumnKind::Float8 => Value::Word(b.f64_at(dense).to_bits()),
        ColumnKind::Fixed { .. } => Value::Stored(b.bytes_at(dense)),
        ColumnKind::CString => Value::CString(b.bytes_at(dense)),
        ColumnKind::Varlena => Value::VarlenaData(b.bytes_at(dense)),
        ColumnKind::Dropped => Value::Null,
    }
}

/// Records of the rows `ranges` (row indexes into `columns`, ascending) of `columns`
/// (one builder per attribute, of the attribute's `kinds`, None for a dropped one) laid
/// out by `shapes`, each a new tuple, in the order given; a record is cut once it holds
/// `RECORD_BYTES_TARGET` bytes, and each comes from `new_record`.
pub fn records(
    shapes: &[AttrShape],
    kinds: &[ColumnKind],
    columns: &[Option<ColumnBuilder>],
    ranges: impl IntoIterator<Item = Range<usize>>,
    mut new_record: impl FnMut() -> RecordBuilder,
) -> Vec<RecordBuilder> {
    let natts = shapes.len();
    assert!(kinds.len() == natts && columns.len() == natts, "a builder and a kind per attribute");
    let mut dense = vec![0usize; natts];
    let mut valid = vec![false; natts];
    let mut next_row = 0usize;
    let mut records = Vec::new();
    let mut record = new_record();
    for range in ranges {
        if range.start != next_row {
            for (d, b) in dense.iter_mut().zip(columns) {
                *d = b.as_ref().map_or(0, |b| b.dense_index(range.start));
            }
        }
        next_row = range.end;
        for row in range {
            for (v, b) in valid.iter_mut().zip(columns) {
                *v = b.as_ref().is_some_and(|b| b.validity(row..row + 1)[0]);
            }
            let has_null = valid.iter().any(|v| !v);
            let value = |a: usize| match &columns[a] {
                Some(b) if valid[a] => value_of(kinds[a], b, dense[a]),
                _ => Value::Null,
            };
            record.push_new_filled(|out| Some(tuple_image::lay_out(shapes, has_null, value, out)));
            for (d, v) in dense.iter_mut().zip(&valid) {
                *d += *v as usize;
            }
            if record.len() >= RECORD_BYTES_TARGET {
                records.push(std::mem::replace(&mut record, new_record()));
            }
        }
    }
    if record.new_tuples() > 0 {
        records.push(record);
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::PhysicalKind;
    use crate::storage::format::logical_record::{FileNode, Record, Xids};

    const INT8: AttrShape = AttrShape { len: 8, align: 8, by_value: true, packable: false };
    const TEXT: AttrShape = AttrShape { len: -1, align: 4, by_value: false, packable: true };

    fn columns() -> Vec<Option<ColumnBuilder>> {
        let mut ids = ColumnBuilder::new(PhysicalKind::Int);
        let mut names = ColumnBuilder::new(PhysicalKind::Bytes);
        for i in 0..10i64 {
            ids.push_int(i);
            match i % 3 {
                0 => names.push_null(),
                _ => names.push_bytes(format!("n{i}").as_bytes()),
            }
        }
        vec![Some(ids), None, Some(names)]
    }

    #[test]
    fn ranges_skip_rows_and_keep_each_rows_values() {
        let node = FileNode { tablespace: 1, database: 2, relation: 3 };
        let new = || RecordBuilder::of_transaction(node, Xids { top: 7, own: 7 });
        let shapes = [INT8, INT8, TEXT];
        let kinds = [ColumnKind::Int { len: 8 }, ColumnKind::Dropped, ColumnKind::Varlena];
        let cols = columns();
        let all = records(&shapes, &kinds, &cols, std::iter::once(0..10), new);
        let some = records(&shapes, &kinds, &cols, [1..3, 5..6, 8..10], new);
        let (all, some) = (all[0].bytes().to_vec(), some[0].bytes().to_vec());
        let (all, some) = (Record::parse(&all).unwrap(), Record::parse(&some).unwrap());
        assert_eq!(all.new.len(), 10);
        let picked: Vec<_> = [1, 2, 5, 8, 9].iter().map(|&i| all.new[i]).collect();
        assert_eq!(some.new, picked);
        // Row 5: id 5, the dropped column NULL, "n5".
        assert_eq!(all.new[5].data[..1], [0b101]);
    }
}
