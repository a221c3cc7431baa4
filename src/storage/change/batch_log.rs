//! Logical change records of the rows a COPY batch inserts (`wal_level = logical`), laid
//! out from the batch's parsed columns instead of from a slot per row.
//!
//! `logical_log::InsertLog` lays out each row from a slot on the backend thread, after
//! the row's index entries: at `logical`, that was a tenth of a COPY's time on the
//! backend thread while rayon's threads had nothing to do. The values a COPY parsed are
//! owned Rust data, so `BatchLayout::records` (pure) lays the rows out on a rayon thread
//! while the backend thread makes their index entries, and the backend thread only
//! writes the records. They hold exactly what `InsertLog` would have written.

use crate::storage::change::logical_log;
use crate::storage::format::column_builder::ColumnBuilder;
use crate::storage::format::logical_record::{self, FileNode, RecordBuilder, Xids};
use crate::storage::format::row_images;
use crate::storage::format::tuple_image::AttrShape;
use crate::storage::relation::datum::{self, ColumnKind};
use crate::storage::relation::pages::file_node;
use crate::storage::shared::transaction_state;
use pgrx::pg_sys;
use std::sync::Arc;

/// What laying out a relation's new rows needs, for any thread: the relation's file
/// node, the transaction the rows belong to and its attributes' layout.
#[derive(Clone)]
pub struct BatchLayout {
    node: FileNode,
    xids: Xids,
    shapes: Arc<[AttrShape]>,
}

impl BatchLayout {
    /// # Safety
    /// `rel` must be an open relation with `logical_log::wanted(rel)`; on the backend
    /// thread inside the transaction (and subtransaction) that inserts the rows.
    pub unsafe fn new(rel: pg_sys::Relation) -> BatchLayout {
        // SAFETY: this fn's contract; the xid is assigned here if it was not yet.
        unsafe {
            let xids = transaction_state::current_xids();
            BatchLayout { node: file_node(rel), xids, shapes: datum::attr_shapes(rel).into() }
        }
    }

    /// The records of the rows `columns` holds (one builder per attribute, of the
    /// attribute's `kinds`, None for a dropped one), in the order `runs` numbered them
    /// (`write_buffer::insert_columns`: `(first row in columns, first row number,
    /// rows)`), cut at `RECORD_BYTES_TARGET` bytes as `InsertLog` cuts them. Pure.
    pub fn records(
        &self,
        kinds: &[ColumnKind],
        columns: &[Option<ColumnBuilder>],
        runs: &[(usize, u64, usize)],
    ) -> Vec<RecordBuilder> {
        let ranges = runs.iter().map(|&(start, _, n)| start..start + n);
        row_images::records(&self.shapes, kinds, columns, ranges, || {
            RecordBuilder::of_transaction(self.node, self.xids)
        })
    }
}

/// The bytes of `records` (made by `BatchLayout::records`) to write, each compressed if
/// `compress` and it is big enough for that to pay (`COMPRESS_FROM_BYTES`): where they
/// are laid out off the backend thread, which then writes fewer bytes. Pure.
pub fn finish(records: Vec<RecordBuilder>, compress: bool) -> Vec<Vec<u8>> {
    records
        .into_iter()
        .map(|r| match compress && r.len() >= logical_record::COMPRESS_FROM_BYTES {
            true => r.compressed().unwrap_or_else(|| r.into_bytes()),
            false => r.into_bytes(),
        })
        .collect()
}

/// Writes `records` (`finish`'s), after any rows gathered before them
/// (`logical_log::flush_inserts`), so that the stream keeps the statements' order.
///
/// # Safety
/// On the backend thread inside the transaction the records' rows belong to.
pub unsafe fn write(records: &[Vec<u8>]) {
    // SAFETY: this fn's contract.
    unsafe {
        logical_log::flush_inserts();
        for r in records {
            logical_log::write_record(logical_record::INSERT, r, false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::PhysicalKind;
    use crate::storage::format::tuple_image;

    const INT8: AttrShape = AttrShape { len: 8, align: 8, by_value: true, packable: false };
    const INT2: AttrShape = AttrShape { len: 2, align: 2, by_value: true, packable: false };
    const FLOAT4: AttrShape = AttrShape { len: 4, align: 4, by_value: true, packable: false };
    const TEXT: AttrShape = AttrShape { len: -1, align: 4, by_value: false, packable: true };
    const UUID: AttrShape = AttrShape { len: 16, align: 1, by_value: false, packable: false };

    /// Three rows: (1, 'a', -1.5, NULL, -2), (NULL, NULL, 2.5, uuid, 7), (3, 200 x's, 0, uuid, 0).
    fn batch() -> (Vec<ColumnKind>, Vec<Option<ColumnBuilder>>) {
        let uuid = [9u8; 16];
        let mut id = ColumnBuilder::new(PhysicalKind::Int);
        id.push_int(1);
        id.push_null();
        id.push_int(3);
        let mut t = ColumnBuilder::new(PhysicalKind::Bytes);
        t.push_bytes(b"a");
        t.push_null();
        t.push_bytes(&[b'x'; 200]);
        let mut f = ColumnBuilder::new(PhysicalKind::Float32);
        f.push_f32(-1.5);
        f.push_f32(2.5);
        f.push_f32(0.0);
        let mut u = ColumnBuilder::new(PhysicalKind::Bytes);
        u.push_null();
        u.push_bytes(&uuid);
        u.push_bytes(&uuid);
        let mut s = ColumnBuilder::new(PhysicalKind::Int);
        s.push_int(-2);
        s.push_int(7);
        s.push_int(0);
        let kinds = vec![
            ColumnKind::Int { len: 8 },
            ColumnKind::Varlena,
            ColumnKind::Float4,
            ColumnKind::Dropped,
            ColumnKind::Fixed { len: 16 },
            ColumnKind::Int { len: 2 },
        ];
        (kinds, vec![Some(id), Some(t), Some(f), None, Some(u), Some(s)])
    }

    #[test]
    fn rows_are_laid_out_as_their_datums_would_be() {
        let (kinds, columns) = batch();
        let shapes: Arc<[AttrShape]> = vec![INT8, TEXT, FLOAT4, INT2, UUID, INT2].into();
        let node = FileNode { tablespace: 1663, database: 5, relation: 16384 };
        let xids = Xids { top: 700, own: 701 };
        let layout = BatchLayout { node, xids, shapes: shapes.clone() };
        // The rows in two runs (as a batch split over two row groups).
        let records = layout.records(&kinds, &columns, &[(0, 10, 1), (1, 20, 2)]);
        assert_eq!(records.len(), 1);
        // The same rows as datums, laid out by `tuple_image::append`.
        let text_a = [(2u8 << 1) | 1, b'a'];
        let mut long = ((204u32) << 2).to_le_bytes().to_vec();
        long.extend_from_slice(&[b'x'; 200]);
        let uuid = [9u8; 16];
        let rows: [([usize; 6], [bool; 6]); 3] = [
            (
                [1, text_a.as_ptr() as usize, (-1.5f32).to_bits() as usize, 0, 0, (-2i64) as usize],
                [false, false, false, true, true, false],
            ),
            (
                [0, 0, 2.5f32.to_bits() as usize, 0, uuid.as_ptr() as usize, 7],
                [true, true, false, true, false, false],
            ),
            (
                [3, long.as_ptr() as usize, 0, 0, uuid.as_ptr() as usize, 0],
                [false, false, false, true, false, false],
            ),
        ];
        let mut want = RecordBuilder::of_transaction(node, xids);
        for (values, nulls) in &rows {
            // SAFETY: the by-reference datums point at live values of their kinds.
            want.push_new_filled(|out| unsafe { tuple_image::append(&shapes, values, |i| nulls[i], out) });
        }
        assert_eq!(records[0].bytes(), want.bytes());
        assert_eq!(records[0].new_tuples(), 3);
    }

    #[test]
    fn big_records_laid_out_off_the_backend_are_compressed() {
        let mut t = ColumnBuilder::new(PhysicalKind::Bytes);
        let rows = 8 * logical_record::COMPRESS_FROM_BYTES / 50;
        for i in 0..rows {
            t.push_bytes(format!("host_{}", i % 100).as_bytes());
        }
        let layout = BatchLayout {
            node: FileNode { tablespace: 1, database: 2, relation: 3 },
            xids: Xids { top: 1, own: 1 },
            shapes: vec![TEXT].into(),
        };
        let records = || layout.records(&[ColumnKind::Varlena], &[Some(t.clone())], &[(0, 1, rows)]);
        let plain: Vec<Vec<u8>> = records().into_iter().map(RecordBuilder::into_bytes).collect();
        assert_eq!(finish(records(), false), plain);
        let packed = finish(records(), true);
        assert_eq!(packed.len(), plain.len());
        assert!(packed[0].len() * 4 < plain[0].len(), "{} of {} bytes", packed[0].len(), plain[0].len());
        assert_eq!(&*logical_record::expand(&packed[0]).unwrap(), &plain[0][..]);
        // A small record is written as it is.
        let small = layout.records(&[ColumnKind::Varlena], &[Some(t.clone())], &[(0, 1, 10)]);
        let small_bytes = small[0].bytes().to_vec();
        assert_eq!(finish(small, true), vec![small_bytes]);
    }

    #[test]
    fn records_are_cut_at_their_target_size() {
        let mut t = ColumnBuilder::new(PhysicalKind::Bytes);
        let rows = 3 * logical_record::RECORD_BYTES_TARGET / 1000;
        for _ in 0..rows {
            t.push_bytes(&[b'v'; 990]);
        }
        let layout = BatchLayout {
            node: FileNode { tablespace: 1, database: 2, relation: 3 },
            xids: Xids { top: 1, own: 1 },
            shapes: vec![TEXT].into(),
        };
        let records = layout.records(&[ColumnKind::Varlena], &[Some(t)], &[(0, 1, rows)]);
        assert!(records.len() >= 3, "{} records", records.len());
        assert_eq!(records.iter().map(|r| r.new_tuples() as usize).sum::<usize>(), rows);
        assert!(records.iter().all(|r| r.len() < logical_record::RECORD_BYTES_TARGET + 1100));
    }
}
