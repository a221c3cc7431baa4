//! The main data of a `ROW_GROUP_WRITE` WAL record (`logical_record::ROW_GROUP_WRITE`),
//! written at `wal_level = logical` instead of a row group's page writes and the
//! change record of its rows: the record's blocks carry the row group's bytes into its
//! pages (`page_write::block_payload`, replayed by redo like a page write), and this says
//! how decoding finds the rows in those same bytes, so that the rows reach the WAL once,
//! encoded, as heap's insert records carry each tuple once.
//!
//! It names the relation, the transaction the rows belong to, the row group's row count,
//! which of its rows to decode (those not already logged: runs of offsets in insertion
//! order), and where each column's chunk and the order column (a `sort_by` table's row
//! group is stored in key order) lie in the group's bytes with their vectors. Decoding
//! (`images`) reads the vectors back and lays each row out as `tuple_image` does, in
//! insertion order: the change records the rows would have had. Integers in the
//! machine's byte order, as everything in the WAL. Pure.

use super::column_builder::ColumnBuilder;
use super::column_kind::ColumnKind;
use super::directory::VectorEntry;
use super::encoding::{decode_vector, DecodedValues, DecodedVector, PhysicalKind};
use super::logical_record::{Cursor, FileNode, Malformed, RecordBuilder, Xids};
use super::row_images;
use super::tuple_image::AttrShape;

const VERSION: u8 = 1;

/// Where a chunk lies in the row group's bytes, and its vectors: `(rows, offset in the
/// chunk, length)` each, in row order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkPlace {
    pub offset: u32,
    pub vectors: Vec<(u32, u32, u32)>,
}

/// One attribute: its layout in a tuple, its stored kind, and its chunk (None for a
/// dropped column).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupColumn {
    pub shape: AttrShape,
    pub kind: ColumnKind,
    pub chunk: Option<ChunkPlace>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupRows {
    pub node: FileNode,
    pub xids: Xids,
    /// Rows in the row group.
    pub rows: u32,
    /// The rows to decode, as runs `(first, count)` of offsets in insertion order,
    /// ascending.
    pub logged: Vec<(u32, u32)>,
    /// The order column of a row group stored in key order: the insertion offset of the
    /// row at each stored position.
    pub order: Option<ChunkPlace>,
    pub columns: Vec<GroupColumn>,
}

fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_ne_bytes());
}

fn put_place(out: &mut Vec<u8>, offset: u32, vectors: impl ExactSizeIterator<Item = (u32, u32, u32)>) {
    put_u32(out, offset);
    put_u32(out, vectors.len() as u32);
    for (rows, offset, len) in vectors {
        put_u32(out, rows);
        put_u32(out, offset);
        put_u32(out, len);
    }
}

/// A chunk of the row group being written: its offset in the group's bytes and its
/// vectors' directory entries.
pub type WrittenChunk<'a> = (u32, &'a [VectorEntry]);

/// Appends to `out` the record of a row group being written, as `GroupRows::encode`
/// would from the same parts, without making a `GroupRows` (this runs for every small
/// row group written at `wal_level = logical`): `columns` gives each attribute's shape,
/// kind and chunk.
pub fn encode_written<'a>(
    node: FileNode,
    xids: Xids,
    rows: u32,
    logged: &[(u32, u32)],
    order: Option<WrittenChunk<'a>>,
    columns: impl ExactSizeIterator<Item = (AttrShape, ColumnKind, Option<WrittenChunk<'a>>)>,
    out: &mut Vec<u8>,
) {
    let entries = |v: &'a [VectorEntry]| v.iter().map(|e| (e.rows, e.offset, e.len));
    out.reserve(64 + columns.len() * 24 + logged.len() * 8);
    out.push(VERSION);
    for v in [node.tablespace, node.database, node.relation, xids.top, xids.own, rows, logged.len() as u32] {
        put_u32(out, v);
    }
    for &(first, count) in logged {
        put_u32(out, first);
        put_u32(out, count);
    }
    out.push(order.is_some() as u8);
    if let Some((offset, vectors)) = order {
        put_place(out, offset, entries(vectors));
    }
    out.extend_from_slice(&(columns.len() as u16).to_ne_bytes());
    for (shape, kind, chunk) in columns {
        put_column_head(out, shape, kind, chunk.is_some());
        if let Some((offset, vectors)) = chunk {
            put_place(out, offset, entries(vectors));
        }
    }
}

fn put_column_head(out: &mut Vec<u8>, shape: AttrShape, kind: ColumnKind, has_chunk: bool) {
    let (tag, len) = kind_code(kind);
    out.extend_from_slice(&shape.len.to_ne_bytes());
    out.extend_from_slice(&[shape.align, shape.by_value as u8, shape.packable as u8, tag]);
    out.extend_from_slice(&len.to_ne_bytes());
    out.push(has_chunk as u8);
}

/// A column kind as one tag byte and its length.
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
        4 => ColumnKind::Fixed { len },
        5 => ColumnKind::Varlena,
        6 => ColumnKind::CString,
        _ => return Err(Malformed("unknown column kind")),
    })
}

/// A chunk's place, as `put_place` wrote it.
fn read_place(c: &mut Cursor<'_>) -> Result<ChunkPlace, Malformed> {
    let offset = c.u32("chunk")?;
    let n = c.count(12, "chunk vectors")?;
    let mut vectors = Vec::with_capacity(n);
    for _ in 0..n {
        vectors.push((c.u32("vector")?, c.u32("vector")?, c.u32("vector")?));
    }
    Ok(ChunkPlace { offset, vectors })
}

impl GroupRows {
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
        let order = match c.u8("order")? {
            0 => None,
            _ => Some(read_place(&mut c)?),
        };
        let natts = c.u16("columns")? as usize;
        let mut columns = Vec::with_capacity(natts.min(c.bytes.len() / 9));
        for _ in 0..natts {
            let len = c.u16("column")? as i16;
            let (align, by_value, packable, tag) =
                (c.u8("column")?, c.u8("column")?, c.u8("column")?, c.u8("column")?);
            if !matches!(align, 1 | 2 | 4 | 8) {
                return Err(Malformed("column alignment"));
            }
            let kind = kind_of(tag, c.u16("column")?)?;
            let chunk = match c.u8("column")? {
                0 => None,
                _ => Some(read_place(&mut c)?),
            };
            if chunk.is_none() != (kind == ColumnKind::Dropped) {
                return Err(Malformed("a column without a chunk or a dropped one with one"));
            }
            let shape = AttrShape { len, align, by_value: by_value != 0, packable: packable != 0 };
            columns.push(GroupColumn { shape, kind, chunk });
        }
        if !c.bytes.is_empty() {
            return Err(Malformed("bytes after the columns"));
        }
        Ok(GroupRows { node, xids, rows, logged, order, columns })
    }

    /// How many rows decoding makes.
    pub fn logged_rows(&self) -> u64 {
        self.logged.iter().map(|&(_, n)| n as u64).sum()
    }

    /// The change records of the logged rows, read from `group` (the row group's bytes,
    /// as the record's blocks carry them), in insertion order.
    pub fn records(&self, group: &[u8]) -> Result<Vec<RecordBuilder>, Malformed> {
        let rows = self.rows as usize;
        // Stored position of each insertion offset.
        let position: Option<Vec<u32>> = match &self.order {
            None => None,
            Some(place) => {
                let DecodedColumn { values: DecodedValues::Int(order), .. } =
                    decode_chunk(place, PhysicalKind::Int, group, rows)?
                else {
                    return Err(Malformed("order column of another kind"));
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
        let logged = || self.logged.iter().flat_map(|&(first, n)| first as usize..(first + n) as usize);
        let mut builders = Vec::with_capacity(self.columns.len());
        for col in &self.columns {
            let (Some(place), Some(kind)) = (&col.chunk, col.kind.physical()) else {
                builders.push(None);
                continue;
            };
            let decoded = decode_chunk(place, kind, group, rows)?;
            let mut b = ColumnBuilder::new(kind);
            b.reserve_rows(self.logged_rows() as usize);
            for offset in logged() {
                let at = position.as_ref().map_or(offset, |p| p[offset] as usize);
                decoded.push_row(at, &mut b);
            }
            builders.push(Some(b));
        }
        let shapes: Vec<AttrShape> = self.columns.iter().map(|c| c.shape).collect();
        let kinds: Vec<ColumnKind> = self.columns.iter().map(|c| c.kind).collect();
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

/// Decodes the chunk at `place` in `group`, which must hold `rows` rows of `kind`.
fn decode_chunk(
    place: &ChunkPlace,
    kind: PhysicalKind,
    group: &[u8],
    rows: usize,
) -> Result<DecodedColumn, Malformed> {
    let chunk = group.get(place.offset as usize..).ok_or(Malformed("chunk outside the row group"))?;
    let mut validity = Vec::with_capacity(rows);
    let mut values = match kind {
        PhysicalKind::Int => DecodedValues::Int(Vec::with_capacity(rows)),
        PhysicalKind::Float32 => DecodedValues::Float32(Vec::with_capacity(rows)),
        PhysicalKind::Float64 => DecodedValues::Float64(Vec::with_capacity(rows)),
        PhysicalKind::Bytes => DecodedValues::Bytes { offsets: vec![0], data: Vec::new() },
    };
    let mut out = DecodedVector::default();
    for &(n, offset, len) in &place.vectors {
        let bytes = chunk
            .get(offset as usize..offset as usize + len as usize)
            .ok_or(Malformed("vector outside the row group"))?;
        decode_vector(bytes, kind, &mut out).map_err(|e| Malformed(e.0))?;
        if out.rows != n {
            return Err(Malformed("vector row count differs from the record"));
        }
        match &out.validity {
            Some(v) => validity.extend_from_slice(v),
            None => validity.extend(std::iter::repeat_n(true, n as usize)),
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
    if validity.len() != rows || len != rows {
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
        let mut place = |chunk: crate::storage::format::chunk_encoder::EncodedChunk| {
            let offset = bytes.len() as u32;
            bytes.extend_from_slice(&chunk.bytes);
            ChunkPlace { offset, vectors: chunk.vectors.iter().map(|v| (v.rows, v.offset, v.len)).collect() }
        };
        let mut out_columns = Vec::new();
        for (i, c) in stored.iter().enumerate() {
            let chunk = c.as_ref().map(|c| place(encode_chunk(c, 0..rows, policy, false)));
            out_columns.push(GroupColumn { shape: shapes[i], kind: kinds[i], chunk });
        }
        let order = order.map(|o| {
            let mut b = ColumnBuilder::new(PhysicalKind::Int);
            o.iter().for_each(|&x| b.push_int(x as i64));
            place(encode_chunk(&b, 0..o.len(), policy, false))
        });
        (bytes, GroupRows { node: NODE, xids: XIDS, rows: rows as u32, logged, order, columns: out_columns })
    }

    /// `encode_written` of the parts `desc` holds.
    fn encode(desc: &GroupRows) -> Vec<u8> {
        let entries = |p: &ChunkPlace| -> Vec<VectorEntry> {
            p.vectors
                .iter()
                .map(|&(rows, offset, len)| VectorEntry {
                    rows,
                    offset,
                    len,
                    null_count: 0,
                    encoding: 0,
                    compression: 0,
                    zone: crate::storage::format::zonemap::ZoneMap::None,
                })
                .collect()
        };
        let order = desc.order.as_ref().map(|p| (p.offset, entries(p)));
        let columns: Vec<_> = desc
            .columns
            .iter()
            .map(|c| (c.shape, c.kind, c.chunk.as_ref().map(|p| (p.offset, entries(p)))))
            .collect();
        let mut out = Vec::new();
        encode_written(
            desc.node,
            desc.xids,
            desc.rows,
            &desc.logged,
            order.as_ref().map(|(o, v)| (*o, v.as_slice())),
            columns.iter().map(|(s, k, c)| (*s, *k, c.as_ref().map(|(o, v)| (*o, v.as_slice())))),
            &mut out,
        );
        out
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
                        let parsed = GroupRows::parse(&encode(&desc)).unwrap();
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
    fn damaged_records_are_refused() {
        let (shapes, kinds, columns) = table(50);
        let (bytes, desc) =
            group(&shapes, &kinds, &columns, true, vec![(0, 50)], &CompressionPolicy::default());
        let encoded = encode(&desc);
        for cut in 0..encoded.len() {
            assert!(GroupRows::parse(&encoded[..cut]).is_err(), "cut at {cut}");
        }
        // Logged rows past the group's end, or out of order.
        for logged in [vec![(40, 11)], vec![(10, 5), (12, 1)]] {
            let bad = GroupRows { logged, ..desc.clone() };
            assert!(GroupRows::parse(&encode(&bad)).is_err());
        }
        // The group's bytes cut short, or an order that is not a permutation.
        assert!(desc.records(&bytes[..bytes.len() - 1]).is_err());
        let mut twice = desc.clone();
        twice.order = twice.columns[0].chunk.clone();
        assert!(twice.records(&bytes).is_err());
    }
}
