//! The main data of a `ROW_GROUP_WRITE` WAL record (`logical_record::ROW_GROUP_WRITE`),
//! written at `wal_level = logical` instead of a row group's page writes and the
//! change record of its rows: the record's blocks carry the row group's bytes into its
//! pages (`page_write::block_payload`, replayed by redo like a page write), and this says
//! how decoding finds the rows in those same bytes, so that the rows reach the WAL once,
//! encoded, as heap's insert records carry each tuple once.
//!
//! It names the relation, the transaction the rows belong to, the row group's row count,
//! which of its rows to decode (those not already logged: runs of offsets in insertion
//! order), each attribute's layout in a tuple and stored kind, and whether the group
//! carries an order column (a `sort_by` table's row group is stored in key order). Where
//! the chunks lie it does not say: a row group's bytes are its columns' chunks one after
//! another (the order column's last), each its vectors one after another, and a vector's
//! header gives its rows and length, so decoding (`records`) walks them, checking that
//! each chunk holds the group's rows and that they end where the bytes do. It lays each
//! row out as `tuple_image` does, in insertion order: the change records the rows would
//! have had. Integers in the machine's byte order, as everything in the WAL. Pure.

use super::column_builder::ColumnBuilder;
use super::column_kind::ColumnKind;
use super::encoding::{decode_vector, DecodedValues, DecodedVector, PhysicalKind};
use super::logical_record::{Cursor, FileNode, Malformed, RecordBuilder, Xids};
use super::row_images;
use super::tuple_image::AttrShape;

/// The layout of this module's records. Version 1 (builds before this one, never
/// released) also gave each chunk's place and vectors, and each column's head in 9
/// bytes; it is refused.
const VERSION: u8 = 2;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRows {
    pub node: FileNode,
    pub xids: Xids,
    /// Rows in the row group.
    pub rows: u32,
    /// The rows to decode, as runs `(first, count)` of offsets in insertion order,
    /// ascending.
    pub logged: Vec<(u32, u32)>,
    /// Whether the group's bytes end with an order column: the insertion offset of the
    /// row at each stored position (the group is stored in key order).
    pub ordered: bool,
    /// Each attribute's layout in a tuple and stored kind (a dropped one has no chunk).
    pub columns: Vec<(AttrShape, ColumnKind)>,
}

/// Bytes of the fixed part: version, then node, xids, rows and the count of runs.
const HEAD_BYTES: usize = 1 + 7 * 4;

/// Appends to `out` the record of a row group being written, up to its column heads,
/// which the caller appends (`column_heads`: it keeps them from one record to the
/// next). This runs for every small row group written at `wal_level = logical`.
pub fn encode_written(
    node: FileNode,
    xids: Xids,
    rows: u32,
    logged: &[(u32, u32)],
    ordered: bool,
    out: &mut Vec<u8>,
) {
    out.reserve(HEAD_BYTES + logged.len() * 8 + 1);
    let mut head = [0u8; HEAD_BYTES];
    head[0] = VERSION;
    let fields =
        [node.tablespace, node.database, node.relation, xids.top, xids.own, rows, logged.len() as u32];
    for (i, v) in fields.into_iter().enumerate() {
        head[1 + 4 * i..5 + 4 * i].copy_from_slice(&v.to_ne_bytes());
    }
    out.extend_from_slice(&head);
    for &(first, count) in logged {
        let mut run = [0u8; 8];
        run[..4].copy_from_slice(&first.to_ne_bytes());
        run[4..].copy_from_slice(&count.to_ne_bytes());
        out.extend_from_slice(&run);
    }
    out.push(ordered as u8);
}

/// Appends to `out` the heads of `columns` (each attribute's shape and kind), as a
/// record gives them: their count, then three bytes each. A kind's length (an
/// integer's or a fixed-size type's) must be the attribute's.
pub fn column_heads(columns: impl ExactSizeIterator<Item = (AttrShape, ColumnKind)>, out: &mut Vec<u8>) {
    out.reserve(2 + columns.len() * 3);
    out.extend_from_slice(&(columns.len() as u16).to_ne_bytes());
    for (shape, kind) in columns {
        let (tag, len) = kind_code(kind);
        assert!(len == 0 || len as i16 == shape.len, "a column kind's length is its attribute's");
        let len = shape.len.to_ne_bytes();
        out.extend_from_slice(&[len[0], len[1], column_bits(shape, tag)]);
    }
}

/// A column head's third byte: the alignment (as log2), whether the type is passed by
/// value and may be packed, and the kind's tag.
fn column_bits(shape: AttrShape, tag: u8) -> u8 {
    shape.align.trailing_zeros() as u8 | (shape.by_value as u8) << 2 | (shape.packable as u8) << 3 | tag << 4
}

/// A column kind as its tag and its length (that of an integer or fixed-size type).
fn kind_code(kind: ColumnKind) -> (u8, u16) {
    match kind {
        ColumnKind::Dropped => (0, 0),
        ColumnKind::Int { len } => (1, len as u16),
        ColumnKind::Float4 => (2, 0),
        ColumnKind::Float8 => (3, 0),
        ColumnKind::Fixed { len } => (4, len),
        ColumnKind::Varlena => (5, 0),
        ColumnKind::CString => (6, 0),
    }
}

fn kind_of(tag: u8, len: u16) -> Result<ColumnKind, Malformed> {
    Ok(match tag {
        0 => ColumnKind::Dropped,
        1 if (1..=8).contains(&len) => ColumnKind::Int { len: len as u8 },
        2 => ColumnKind::Float4,
        3 => ColumnKind::Float8,
        4 if len > 0 => ColumnKind::Fixed { len },
        5 => ColumnKind::Varlena,
        6 => ColumnKind::CString,
        _ => return Err(Malformed("unknown column kind")),
    })
}

impl GroupRows {
    /// The record's bytes (`encode_written`'s).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        encode_written(self.node, self.xids, self.rows, &self.logged, self.ordered, &mut out);
        column_heads(self.columns.iter().copied(), &mut out);
        out
    }

    pub fn parse(bytes: &[u8]) -> Result<GroupRows, Malformed> {
        let mut c = Cursor { bytes };
        if c.u8("version")? != VERSION {
            return Err(Malformed("row group record of an unknown version"));
        }
        let node =
            FileNode { tablespace: c.u32("header")?, database: c.u32("header")?, relation: c.u32("header")? };
        let xids = Xids { top: c.u32("header")?, own: c.u32("header")? };
        let rows = c.u32("header")?;
        let n = c.count(8, "logged rows")?;
        let mut logged = Vec::with_capacity(n);
        let mut end = 0u64;
        for _ in 0..n {
            let (first, count) = (c.u32("logged rows")?, c.u32("logged rows")?);
            if (first as u64) < end || first as u64 + count as u64 > rows as u64 {
                return Err(Malformed("logged rows outside the row group or out of order"));
            }
            end = first as u64 + count as u64;
            logged.push((first, count));
        }
        let ordered = c.u8("order")? != 0;
        let natts = c.u16("columns")? as usize;
        let mut columns = Vec::with_capacity(natts.min(c.bytes.len() / 3));
        for _ in 0..natts {
            let len = c.u16("column")? as i16;
            let bits = c.u8("column")?;
            let kind = kind_of((bits >> 4) & 7, len as u16)?;
            let shape =
                AttrShape { len, align: 1 << (bits & 3), by_value: bits & 4 != 0, packable: bits & 8 != 0 };
            columns.push((shape, kind));
        }
        if !c.bytes.is_empty() {
            return Err(Malformed("bytes after the columns"));
        }
        Ok(GroupRows { node, xids, rows, logged, ordered, columns })
    }

    /// How many rows decoding makes.
    pub fn logged_rows(&self) -> u64 {
        self.logged.iter().map(|&(_, n)| n as u64).sum()
    }

    /// The change records of the logged rows, read from `group` (the row group's bytes,
    /// as the record's blocks carry them), in insertion order.
    pub fn records(&self, group: &[u8]) -> Result<Vec<RecordBuilder>, Malformed> {
        let rows = self.rows as usize;
        let mut at = 0;
        let mut decoded = Vec::with_capacity(self.columns.len());
        for (_, kind) in &self.columns {
            decoded.push(match kind.physical() {
                None => None,
                Some(kind) => Some((kind, decode_chunk(group, &mut at, kind, rows)?)),
            });
        }
        // Stored position of each insertion offset.
        let position: Option<Vec<u32>> = match self.ordered {
            false => None,
            true => {
                let DecodedColumn { values: DecodedValues::Int(order), .. } =
                    decode_chunk(group, &mut at, PhysicalKind::Int, rows)?
                else {
                    unreachable!("an Int chunk decodes to integers")
                };
                let mut position = vec![u32::MAX; rows];
                for (at, &offset) in order.iter().enumerate() {
                    let slot = usize::try_from(offset).ok().and_then(|o| position.get_mut(o));
                    match slot {
                        Some(p) if *p == u32::MAX => *p = at as u32,
                        _ => return Err(Malformed("order column is not a permutation")),
                    }
                }
                Some(position)
            }
        };
        if at != group.len() {
            return Err(Malformed("row group bytes after its chunks"));
        }
        let logged = || self.logged.iter().flat_map(|&(first, n)| first as usize..(first + n) as usize);
        let builders: Vec<Option<ColumnBuilder>> = decoded
            .into_iter()
            .map(|d| {
                d.map(|(kind, column)| {
                    let mut b = ColumnBuilder::new(kind);
                    b.reserve_rows(self.logged_rows() as usize);
                    for offset in logged() {
                        let at = position.as_ref().map_or(offset, |p| p[offset] as usize);
                        column.push_row(at, &mut b);
                    }
                    b
                })
            })
            .collect();
        let shapes: Vec<AttrShape> = self.columns.iter().map(|c| c.0).collect();
        let kinds: Vec<ColumnKind> = self.columns.iter().map(|c| c.1).collect();
        let n = self.logged_rows() as usize;
        Ok(row_images::records(&shapes, &kinds, &builders, std::iter::once(0..n), || {
            RecordBuilder::of_transaction(self.node, self.xids)
        }))
    }
}

/// A chunk's vectors decoded one after another: a value (or placeholder) and a validity
/// flag per row.
struct DecodedColumn {
    validity: Vec<bool>,
    values: DecodedValues,
}

impl DecodedColumn {
    fn push_row(&self, row: usize, b: &mut ColumnBuilder) {
        if !self.validity[row] {
            b.push_null();
            return;
        }
        match &self.values {
            DecodedValues::Int(v) => b.push_int(v[row]),
            DecodedValues::Float32(v) => b.push_f32(v[row]),
            DecodedValues::Float64(v) => b.push_f64(v[row]),
            DecodedValues::Bytes { offsets, data } => {
                b.push_bytes(&data[offsets[row] as usize..offsets[row + 1] as usize])
            }
        }
    }
}

/// Decodes the chunk at `*at` in `group`, which must hold `rows` rows of `kind`: vectors
/// one after another until they hold them; `*at` moves past it.
fn decode_chunk(
    group: &[u8],
    at: &mut usize,
    kind: PhysicalKind,
    rows: usize,
) -> Result<DecodedColumn, Malformed> {
    let mut validity = Vec::with_capacity(rows);
    let mut values = match kind {
        PhysicalKind::Int => DecodedValues::Int(Vec::with_capacity(rows)),
        PhysicalKind::Float32 => DecodedValues::Float32(Vec::with_capacity(rows)),
        PhysicalKind::Float64 => DecodedValues::Float64(Vec::with_capacity(rows)),
        PhysicalKind::Bytes => DecodedValues::Bytes { offsets: vec![0], data: Vec::new() },
    };
    let mut out = DecodedVector::default();
    while validity.len() < rows {
        let bytes = group.get(*at..).ok_or(Malformed("chunk outside the row group"))?;
        *at += decode_vector(bytes, kind, &mut out).map_err(|e| Malformed(e.0))?;
        let n = out.rows as usize;
        if n == 0 || validity.len() + n > rows {
            return Err(Malformed("vector rows past the row group's"));
        }
        match &out.validity {
            Some(v) => validity.extend_from_slice(v),
            None => validity.extend(std::iter::repeat_n(true, n)),
        }
        match (&mut values, &out.values) {
            (DecodedValues::Int(all), DecodedValues::Int(v)) => all.extend_from_slice(v),
            (DecodedValues::Float32(all), DecodedValues::Float32(v)) => all.extend_from_slice(v),
            (DecodedValues::Float64(all), DecodedValues::Float64(v)) => all.extend_from_slice(v),
            (
                DecodedValues::Bytes { offsets: all_o, data: all_d },
                DecodedValues::Bytes { offsets, data },
            ) => {
                let base = *all_o.last().unwrap();
                let start = offsets[0];
                all_o.extend(offsets[1..].iter().map(|o| base + (o - start)));
                all_d.extend_from_slice(&data[start as usize..offsets[offsets.len() - 1] as usize]);
            }
            _ => return Err(Malformed("vector of another kind")),
        }
    }
    let len = match &values {
        DecodedValues::Int(v) => v.len(),
        DecodedValues::Float32(v) => v.len(),
        DecodedValues::Float64(v) => v.len(),
        DecodedValues::Bytes { offsets, .. } => offsets.len() - 1,
    };
    if len != rows {
        return Err(Malformed("chunk row count differs from the row group's"));
    }
    Ok(DecodedColumn { validity, values })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::chunk_encoder::encode_chunk;
    use crate::storage::format::encoding::CompressionPolicy;
    use crate::storage::format::flush_order::{flush_order, permuted};

    const INT8: AttrShape = AttrShape { len: 8, align: 8, by_value: true, packable: false };
    const INT4: AttrShape = AttrShape { len: 4, align: 4, by_value: true, packable: false };
    const TEXT: AttrShape = AttrShape { len: -1, align: 4, by_value: false, packable: true };
    const FLOAT8: AttrShape = AttrShape { len: 8, align: 8, by_value: true, packable: false };
    const NODE: FileNode = FileNode { tablespace: 1663, database: 5, relation: 16384 };
    const XIDS: Xids = Xids { top: 700, own: 701 };

    /// `rows` rows: an id, a dropped column, a text with NULLs and repeats, a float.
    fn table(rows: usize) -> (Vec<AttrShape>, Vec<ColumnKind>, Vec<Option<ColumnBuilder>>) {
        let mut id = ColumnBuilder::new(PhysicalKind::Int);
        let mut t = ColumnBuilder::new(PhysicalKind::Bytes);
        let mut f = ColumnBuilder::new(PhysicalKind::Float64);
        for i in 0..rows {
            id.push_int((rows - i) as i64 * 7 % 1000);
            match i % 5 {
                0 => t.push_null(),
                k => t.push_bytes(format!("host_{}", k * 3 + i % 2).as_bytes()),
            }
            f.push_f64(i as f64 * 0.25);
        }
        (
            vec![INT8, INT4, TEXT, FLOAT8],
            vec![ColumnKind::Int { len: 8 }, ColumnKind::Dropped, ColumnKind::Varlena, ColumnKind::Float8],
            vec![Some(id), None, Some(t), Some(f)],
        )
    }

    fn int_chunk(values: impl Iterator<Item = i64>, policy: &CompressionPolicy) -> Vec<u8> {
        let mut b = ColumnBuilder::new(PhysicalKind::Int);
        values.for_each(|v| b.push_int(v));
        encode_chunk(&b, 0..b.rows(), policy, false).bytes
    }

    /// The row group `write_buffer` would write of `columns` (sorted by column 0 if
    /// `sorted`), as its bytes and the record that describes it.
    fn group(
        shapes: &[AttrShape],
        kinds: &[ColumnKind],
        columns: &[Option<ColumnBuilder>],
        sorted: bool,
        logged: Vec<(u32, u32)>,
        policy: &CompressionPolicy,
    ) -> (Vec<u8>, GroupRows) {
        let rows = columns[0].as_ref().unwrap().rows();
        let order = sorted.then(|| flush_order(&[columns[0].as_ref().unwrap()], 0..rows).unwrap());
        let stored: Vec<Option<ColumnBuilder>> = match &order {
            Some(o) => columns.iter().map(|c| c.as_ref().map(|c| permuted(c, 0..rows, o))).collect(),
            None => columns.to_vec(),
        };
        let mut bytes = Vec::new();
        for c in stored.iter().flatten() {
            bytes.extend_from_slice(&encode_chunk(c, 0..rows, policy, false).bytes);
        }
        if let Some(o) = &order {
            bytes.extend_from_slice(&int_chunk(o.iter().map(|&x| x as i64), policy));
        }
        let columns = shapes.iter().copied().zip(kinds.iter().copied()).collect();
        (bytes, GroupRows { node: NODE, xids: XIDS, rows: rows as u32, logged, ordered: sorted, columns })
    }

    /// What the rows' change records would have been, laid out from the rows as inserted.
    fn want(
        shapes: &[AttrShape],
        kinds: &[ColumnKind],
        columns: &[Option<ColumnBuilder>],
        logged: &[(u32, u32)],
    ) -> Vec<Vec<u8>> {
        let ranges = logged.iter().map(|&(f, n)| f as usize..(f + n) as usize);
        row_images::records(shapes, kinds, columns, ranges, || RecordBuilder::of_transaction(NODE, XIDS))
            .into_iter()
            .map(|r| r.into_bytes())
            .collect()
    }

    #[test]
    fn decoding_gives_the_rows_change_records_in_insertion_order() {
        for rows in [1usize, 100, 3000] {
            let (shapes, kinds, columns) = table(rows);
            for sorted in [false, true] {
                if sorted && rows == 1 {
                    continue;
                }
                for policy in [CompressionPolicy::QUICK, CompressionPolicy::default()] {
                    let all = vec![(0, rows as u32)];
                    let some = match rows {
                        1 => vec![(0, 1)],
                        _ => vec![(0, 1), (rows as u32 / 2, 3), (rows as u32 - 2, 2)],
                    };
                    for logged in [all, some] {
                        let (bytes, desc) = group(&shapes, &kinds, &columns, sorted, logged.clone(), &policy);
                        let parsed = GroupRows::parse(&desc.encode()).unwrap();
                        assert_eq!(parsed, desc);
                        let got: Vec<Vec<u8>> =
                            parsed.records(&bytes).unwrap().into_iter().map(|r| r.into_bytes()).collect();
                        assert_eq!(
                            got,
                            want(&shapes, &kinds, &columns, &logged),
                            "{rows} rows, sorted {sorted}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_record_is_a_few_bytes_a_column() {
        let (_, desc) =
            group(&table(1).0, &table(1).1, &table(1).2, false, vec![(0, 1)], &CompressionPolicy::QUICK);
        assert_eq!(desc.encode().len(), HEAD_BYTES + 8 + 3 + 3 * 4);
    }

    #[test]
    fn damaged_records_are_refused() {
        let policy = CompressionPolicy::default();
        let (shapes, kinds, columns) = table(3000);
        let (bytes, desc) = group(&shapes, &kinds, &columns, true, vec![(0, 3000)], &policy);
        let encoded = desc.encode();
        for cut in 0..encoded.len() {
            assert!(GroupRows::parse(&encoded[..cut]).is_err(), "cut at {cut}");
        }
        // Logged rows past the group's end, or out of order.
        for logged in [vec![(2990, 11)], vec![(10, 5), (12, 1)]] {
            let bad = GroupRows { logged, ..desc.clone() };
            assert!(GroupRows::parse(&bad.encode()).is_err());
        }
        // The group's bytes cut short or longer, more or fewer rows than its chunks hold.
        assert!(desc.records(&bytes[..bytes.len() - 1]).is_err());
        assert!(desc.records(&[&bytes[..], &[0]].concat()).is_err());
        for rows in [2999, 3001] {
            assert!(GroupRows { rows, ..desc.clone() }.records(&bytes).is_err(), "{rows} rows");
        }
        // A column of another kind than its chunk's, a missing order column.
        let mut other = desc.clone();
        other.columns[3].1 = ColumnKind::Int { len: 8 };
        assert!(other.records(&bytes).is_err());
        let (unsorted, _) = group(&shapes, &kinds, &columns, false, vec![(0, 3000)], &policy);
        assert!(desc.records(&unsorted).is_err());
        // An order column that is not a permutation.
        let twice = [&unsorted[..], &int_chunk((0..3000).map(|i| i / 2), &policy)].concat();
        assert!(desc.records(&twice).is_err());
        let (_, unsorted_desc) = group(&shapes, &kinds, &columns, false, vec![(0, 3000)], &policy);
        let once = [&unsorted[..], &int_chunk(0..3000, &policy)].concat();
        assert!(GroupRows { ordered: true, ..unsorted_desc }.records(&once).is_ok());
    }
}
