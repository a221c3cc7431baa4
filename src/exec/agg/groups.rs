//! Hash grouping, a vector at a time. Each key column numbers its distinct values
//! (NULL included) as they appear; a group is the tuple of its key numbers, packed into
//! an integer and numbered in turn. A dictionary-encoded byte-string vector is looked up
//! once per dictionary entry, not per row. Group numbers are dense and in order of first
//! appearance, so aggregate states are plain arrays indexed by them. Pure.

use super::numeric::{parse, Parsed};
use super::spec::MAX_KEYS;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use hashbrown::HashMap;
use std::borrow::Cow;

/// A key column's value, as a group's key.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyValue {
    Null,
    Int(i64),
    Bytes(Box<[u8]>),
}

/// One key column's values in a vector: integers (a column's, or computed from it,
/// such as `date_trunc`), or byte strings, grouped by the equality `ByteKey` gives.
pub enum KeyInput<'a> {
    Int { values: &'a [i64], valid: Option<&'a [bool]> },
    Bytes(&'a DecodedVector, ByteKey),
}

/// Which byte strings are one group. A group outputs the first value seen of it, as
/// core's hash aggregate does (its representative tuple is the group's first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteKey {
    /// Byte equality (text under a deterministic collation, bytea, uuid).
    Exact,
    /// bpchar: trailing spaces do not count (bpchareq, bcTruelen).
    TrimSpaces,
    /// A stored numeric: its value, whatever its display scale (1.0 = 1.00).
    Numeric,
}

impl ByteKey {
    /// The bytes equal keys share.
    pub fn normalize(self, b: &[u8]) -> Cow<'_, [u8]> {
        match self {
            ByteKey::Exact => Cow::Borrowed(b),
            ByteKey::TrimSpaces => {
                let len = b.iter().rposition(|&c| c != b' ').map_or(0, |p| p + 1);
                Cow::Borrowed(&b[..len])
            }
            ByteKey::Numeric => Cow::Owned(numeric_value_key(b)),
        }
    }
}

/// A numeric's value without its display scale: sign, weight and base-10000 digits with
/// no leading or trailing zero digit (zero has none and no sign), or which special
/// value it is. Bytes that are no numeric keep their own bytes.
fn numeric_value_key(b: &[u8]) -> Vec<u8> {
    match parse(b) {
        Some(Parsed::Finite { negative, mut weight, digits, .. }) => {
            let mut d: Vec<u16> = digits.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
            while d.first() == Some(&0) {
                d.remove(0);
                weight -= 1;
            }
            while d.last() == Some(&0) {
                d.pop();
            }
            if d.is_empty() {
                return vec![1];
            }
            let mut out = vec![2, negative as u8];
            out.extend_from_slice(&weight.to_le_bytes());
            d.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
            out
        }
        Some(Parsed::NaN) => vec![3],
        Some(Parsed::PosInf) => vec![4],
        Some(Parsed::NegInf) => vec![5],
        None => [&[0u8][..], b].concat(),
    }
}

/// A key column's one value in a vector whose rows all hold it, made as a one-row
/// input of the column's own form (so a group is numbered, hashed and shown exactly as
/// the vector's rows would have it).
pub enum OneKey {
    Int(i64),
    Bytes(Box<DecodedVector>, ByteKey),
}

impl OneKey {
    pub fn bytes(value: &[u8], how: ByteKey) -> OneKey {
        let (data, offsets) = (value.to_vec(), vec![0, value.len() as u32]);
        let col = DecodedVector::from_parts(1, None, DecodedValues::Bytes { offsets, data }, None);
        OneKey::Bytes(Box::new(col), how)
    }

    pub fn input(&self) -> KeyInput<'_> {
        match self {
            OneKey::Int(x) => KeyInput::Int { values: std::slice::from_ref(x), valid: None },
            OneKey::Bytes(col, how) => KeyInput::Bytes(col, *how),
        }
    }
}

#[derive(Default)]
struct KeyColumn {
    ints: HashMap<i64, u32>,
    bytes: HashMap<Box<[u8]>, u32>,
    null: Option<u32>,
    values: Vec<KeyValue>,
    /// Rows often repeat the last key (sorted or bucketed time): one compare then.
    last: Option<(i64, u32)>,
    /// Per dictionary entry of the current vector, its number (u32::MAX: not yet).
    entry_ids: Vec<u32>,
    /// The entries `entry_ids` are for (the last dictionary vector's): a vector with the
    /// same dictionary keeps its numbers.
    entries: (Vec<u32>, Vec<u8>),
    /// How many of `entry_ids` are not numbered yet: once none is, a vector's keys are
    /// one array lookup per row, with no test.
    unnumbered: usize,
    /// Bytes of the byte-string keys held.
    key_bytes: usize,
}

impl KeyColumn {
    fn number(&mut self, v: KeyValue) -> u32 {
        let next = self.values.len() as u32;
        let id = match &v {
            KeyValue::Null => *self.null.get_or_insert(next),
            KeyValue::Int(x) => *self.ints.entry(*x).or_insert(next),
            KeyValue::Bytes(b) => match self.bytes.get(b) {
                Some(&id) => id,
                None => {
                    self.bytes.insert(b.clone(), next);
                    next
                }
            },
        };
        self.keep(v, id, next)
    }

    /// Keeps `v` as the value of key number `id` if it is a new one (`next`).
    fn keep(&mut self, v: KeyValue, id: u32, next: u32) -> u32 {
        if id == next {
            if let KeyValue::Bytes(b) = &v {
                self.key_bytes += b.len() + 16;
            }
            self.values.push(v);
        }
        id
    }

    #[inline]
    fn int_id(&mut self, x: i64) -> u32 {
        if let Some((k, id)) = self.last {
            if k == x {
                return id;
            }
        }
        let next = self.values.len() as u32;
        let id = *self.ints.entry(x).or_insert(next);
        if id == next {
            self.values.push(KeyValue::Int(x));
        }
        self.last = Some((x, id));
        id
    }

    /// The numbers of the selected rows' keys, into `out`.
    fn ids(&mut self, input: &KeyInput, sel: &[u32], out: &mut Vec<u32>) {
        out.clear();
        match input {
            KeyInput::Int { values, valid: None } => {
                out.extend(sel.iter().map(|&r| self.int_id(values[r as usize])))
            }
            KeyInput::Int { values, valid: Some(valid) } => {
                for &r in sel {
                    let r = r as usize;
                    let id = if valid[r] { self.int_id(values[r]) } else { self.number(KeyValue::Null) };
                    out.push(id);
                }
            }
            KeyInput::Bytes(col, how) => self.byte_ids(col, *how, sel, out),
        }
    }

    fn byte_ids(&mut self, col: &DecodedVector, how: ByteKey, sel: &[u32], out: &mut Vec<u32>) {
        if let Some(d) = &col.dictionary {
            // Entries are numbered when a selected row first uses them, once for vectors
            // that store the same dictionary (the writer sorts entries, so vectors of the
            // same values do: TSBS's 400 hosts in every vector).
            if self.entries.0 != d.offsets || self.entries.1 != d.data {
                self.entry_ids.clear();
                self.entry_ids.resize(d.len(), u32::MAX);
                self.entries.0.clone_from(&d.offsets);
                self.entries.1.clone_from(&d.data);
                self.unnumbered = d.len();
            }
            if self.unnumbered == 0 && col.validity.is_none() {
                // Every entry has its number (TSBS's 400 hosts after the first vector).
                let (codes, ids) = (d.codes.as_slice(), self.entry_ids.as_slice());
                out.extend(sel.iter().map(|&r| ids[codes[r as usize] as usize]));
                return;
            }
            for &r in sel {
                let r = r as usize;
                if !col.is_valid(r) {
                    out.push(self.number(KeyValue::Null));
                    continue;
                }
                let e = d.codes[r] as usize;
                let mut id = self.entry_ids[e];
                if id == u32::MAX {
                    let b = &d.data[d.offsets[e] as usize..d.offsets[e + 1] as usize];
                    id = self.byte_id(b, how);
                    self.entry_ids[e] = id;
                    self.unnumbered -= 1;
                }
                out.push(id);
            }
        } else if let DecodedValues::Bytes { offsets, data } = &col.values {
            // A row with the same bytes as the row before has its number: runs of one key
            // (a table sorted by it, run-length-encoded vectors) cost a compare per row,
            // not a hash.
            let mut last: Option<(&[u8], u32)> = None;
            for &r in sel {
                let r = r as usize;
                let id = if col.is_valid(r) {
                    let b = &data[offsets[r] as usize..offsets[r + 1] as usize];
                    match last {
                        Some((prev, id)) if prev == b => id,
                        _ => {
                            let id = self.byte_id(b, how);
                            last = Some((b, id));
                            id
                        }
                    }
                } else {
                    self.number(KeyValue::Null)
                };
                out.push(id);
            }
        }
    }

    /// The number of byte string `b`'s key (`how` says which strings are one key); a
    /// new key keeps `b` as its value.
    fn byte_id(&mut self, b: &[u8], how: ByteKey) -> u32 {
        let key = how.normalize(b);
        if let Some(&id) = self.bytes.get(key.as_ref()) {
            return id;
        }
        let next = self.values.len() as u32;
        self.bytes.insert(key.into_owned().into_boxed_slice(), next);
        self.keep(KeyValue::Bytes(b.into()), next, next)
    }
}

/// Keeps the selected rows whose key (`inputs`, one per key column) hashes to share
/// `part` of `parts`: a fold past work_mem makes its groups in passes, one share each.
pub fn retain_partition(
    inputs: &[KeyInput],
    sel: &mut Vec<u32>,
    parts: u64,
    part: u64,
    hash: &impl std::hash::BuildHasher,
) {
    use std::hash::Hasher;
    sel.retain(|&r| {
        let r = r as usize;
        let mut h = hash.build_hasher();
        for input in inputs {
            match input {
                KeyInput::Int { values, valid } => match valid {
                    Some(v) if !v[r] => h.write_u8(0),
                    _ => {
                        h.write_u8(1);
                        h.write_i64(values[r]);
                    }
                },
                KeyInput::Bytes(col, how) => {
                    if !col.is_valid(r) {
                        h.write_u8(0);
                        continue;
                    }
                    h.write_u8(1);
                    let bytes = match (&col.dictionary, &col.values) {
                        (Some(d), _) => {
                            let e = d.codes[r] as usize;
                            &d.data[d.offsets[e] as usize..d.offsets[e + 1] as usize]
                        }
                        (None, DecodedValues::Bytes { offsets, data }) => {
                            &data[offsets[r] as usize..offsets[r + 1] as usize]
                        }
                        _ => &[][..],
                    };
                    let bytes = how.normalize(bytes);
                    h.write(&bytes);
                    h.write_usize(bytes.len());
                }
            }
        }
        h.finish() % parts == part
    });
}

/// Groups by up to `MAX_KEYS` key columns.
pub struct Grouper {
    columns: Vec<KeyColumn>,
    /// Key numbers of several columns, packed, to the group number.
    groups: HashMap<u128, u32>,
    /// Per group, its key numbers (`columns.len()` each); for a column in `shown`, the
    /// number of its value there.
    group_keys: Vec<u32>,
    /// With several keys, per key column whose equality is not byte equality (bpchar,
    /// numeric), its values numbered byte for byte: a group shows its own first row's
    /// value, as core's hash aggregate does, not the first of the key column's.
    shown: Vec<Option<KeyColumn>>,
    scratch: Vec<Vec<u32>>,
    shown_scratch: Vec<Vec<u32>>,
    /// Groups whose key numbers are all small (below 2^(DENSE_BITS / keys)), by those
    /// numbers side by side (u32::MAX: not looked up yet): few groups, such as TPC-H
    /// q1's, are found with an index instead of a hash.
    dense: Vec<u32>,
    /// The current vector's groups by dictionary codes (`assign_by_codes`).
    code_table: Vec<u32>,
}

/// Bits of `Grouper::dense`'s index.
const DENSE_BITS: u32 = 12;

/// Most combinations of dictionary codes `assign_by_codes` keeps a table of: a vector's
/// table is cleared per vector, so it must stay small next to the vector's rows.
const CODE_COMBINATIONS: usize = 1024;

impl Grouper {
    pub fn new(keys: usize) -> Grouper {
        assert!((1..=MAX_KEYS).contains(&keys));
        Grouper {
            columns: (0..keys).map(|_| KeyColumn::default()).collect(),
            groups: HashMap::new(),
            group_keys: Vec::new(),
            shown: (0..keys).map(|_| None).collect(),
            scratch: vec![Vec::new(); keys],
            code_table: Vec::new(),
            shown_scratch: vec![Vec::new(); keys],
            dense: Vec::new(),
        }
    }

    /// Room for about `groups` groups up front (the planner's estimate), so the table
    /// does not grow step by step.
    pub fn reserve(&mut self, groups: usize) {
        if self.columns.len() > 1 {
            self.groups.reserve(groups);
        }
    }

    pub fn len(&self) -> usize {
        if self.columns.len() == 1 {
            self.columns[0].values.len()
        } else {
            self.group_keys.len() / self.columns.len()
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The group of each selected row (`inputs`: one per key column), into `gids`.
    pub fn assign(&mut self, inputs: &[KeyInput], sel: &[u32], gids: &mut Vec<u32>) {
        if self.columns.len() == 1 {
            return self.columns[0].ids(&inputs[0], sel, gids);
        }
        if !self.assign_by_codes(inputs, sel, gids) {
            self.assign_by_keys(inputs, sel, gids);
        }
    }

    /// `assign` for several keys that are all dictionary vectors without NULLs whose entry
    /// counts multiply to at most `CODE_COMBINATIONS`: a row's group is looked up in a
    /// table indexed by its codes side by side, which the vector fills the first time a
    /// combination occurs (as `assign_by_keys` numbers that row alone, so groups are
    /// numbered and shown as ever). No per-row key numbering or hashing: TPC-H q1's two
    /// `char(1)` keys. False (nothing done) for other vectors.
    fn assign_by_codes(&mut self, inputs: &[KeyInput], sel: &[u32], gids: &mut Vec<u32>) -> bool {
        let mut columns: Vec<(&[u32], usize)> = Vec::with_capacity(inputs.len());
        let mut combinations = 1usize;
        let last = sel.iter().fold(0u32, |a, &r| a.max(r)) as usize;
        for input in inputs {
            let KeyInput::Bytes(col, _) = input else { return false };
            let (Some(d), None) = (&col.dictionary, &col.validity) else { return false };
            // Every selected row's code names an entry (checked per vector, as the
            // lookups rely on it).
            let entries = d.len();
            if (!sel.is_empty() && last >= d.codes.len()) || !d.codes_name_entries(d.codes.len()) {
                return false;
            }
            combinations = match combinations.checked_mul(entries) {
                Some(n) if n <= CODE_COMBINATIONS => n,
                _ => return false,
            };
            columns.push((d.codes.as_slice(), entries));
        }
        let mut table = std::mem::take(&mut self.code_table);
        table.clear();
        table.resize(combinations, u32::MAX);
        gids.clear();
        gids.reserve(sel.len());
        let mut one = Vec::with_capacity(1);
        for (i, &r) in sel.iter().enumerate() {
            let r = r as usize;
            let at = columns.iter().fold(0usize, |at, &(codes, entries)| at * entries + codes[r] as usize);
            let mut g = table[at];
            if g == u32::MAX {
                self.assign_by_keys(inputs, &sel[i..=i], &mut one);
                g = one[0];
                table[at] = g;
            }
            gids.push(g);
        }
        self.code_table = table;
        true
    }

    /// `assign` for several keys, row by row: each key column numbers its values, and
    /// the numbers side by side name the group.
    fn assign_by_keys(&mut self, inputs: &[KeyInput], sel: &[u32], gids: &mut Vec<u32>) {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut shown_scratch = std::mem::take(&mut self.shown_scratch);
        for (c, (column, input)) in self.columns.iter_mut().zip(inputs).enumerate() {
            column.ids(input, sel, &mut scratch[c]);
        }
        gids.clear();
        let keys = self.columns.len();
        let bits = DENSE_BITS / keys as u32;
        if self.dense.is_empty() {
            self.dense = vec![u32::MAX; 1 << DENSE_BITS];
        }
        let mut last: Option<(u128, u32)> = None;
        for i in 0..sel.len() {
            let mut packed = 0u128;
            let mut small = true;
            let mut index = 0usize;
            for ids in &scratch {
                let id = ids[i];
                packed = (packed << 32) | id as u128;
                small &= id < (1 << bits);
                index = (index << bits) | id as usize;
            }
            if small && self.dense[index] != u32::MAX {
                gids.push(self.dense[index]);
                continue;
            }
            if let Some((k, g)) = last {
                if k == packed {
                    gids.push(g);
                    continue;
                }
            }
            let next = (self.group_keys.len() / keys) as u32;
            let g = *self.groups.entry(packed).or_insert(next);
            if g == next {
                // A new group: its key values as its own row has them (the shown
                // numbering, for bpchar and numeric keys), numbered only now.
                for (c, ids) in scratch.iter().enumerate() {
                    let id = match (&mut self.shown[c], &inputs[c]) {
                        (shown, KeyInput::Bytes(col, how)) if *how != ByteKey::Exact => {
                            let shown = shown.get_or_insert_with(KeyColumn::default);
                            let exact = KeyInput::Bytes(col, ByteKey::Exact);
                            shown.ids(&exact, &sel[i..=i], &mut shown_scratch[c]);
                            shown_scratch[c][0]
                        }
                        _ => ids[i],
                    };
                    self.group_keys.push(id);
                }
            }
            if small {
                self.dense[index] = g;
            }
            last = Some((packed, g));
            gids.push(g);
        }
        self.scratch = scratch;
        self.shown_scratch = shown_scratch;
    }

    /// The numbers of the keys a vector of the one key column holds (numbering those
    /// not seen yet), into `out`, some perhaps more than once: per dictionary entry of a
    /// dictionary vector (NULL too if a row is NULL), otherwise per row. Rows that are
    /// deleted or filtered out count too: the caller wants every key a vector may hold.
    pub fn vector_keys(&mut self, input: &KeyInput, rows: usize, out: &mut Vec<u32>) {
        assert_eq!(self.columns.len(), 1);
        let column = &mut self.columns[0];
        out.clear();
        if let KeyInput::Bytes(col, how) = input {
            if let Some(d) = &col.dictionary {
                for e in 0..d.len() {
                    out.push(column.byte_id(d.entry(e), *how));
                }
                if col.validity.as_ref().is_some_and(|v| v[..rows].iter().any(|ok| !ok)) {
                    out.push(column.number(KeyValue::Null));
                }
                return;
            }
        }
        let all: Vec<u32> = (0..rows as u32).collect();
        column.ids(input, &all, out);
    }

    /// The number of the one key column's value `key` (a byte string compared exactly),
    /// if it has one.
    pub fn lookup(&self, key: &KeyValue) -> Option<u32> {
        let column = &self.columns[0];
        match key {
            KeyValue::Null => column.null,
            KeyValue::Int(x) => column.ints.get(x).copied(),
            KeyValue::Bytes(b) => column.bytes.get(b).copied(),
        }
    }

    /// Group `g`'s value of key column `c`.
    pub fn key(&self, g: usize, c: usize) -> &KeyValue {
        if self.columns.len() == 1 {
            return &self.columns[0].values[g];
        }
        let id = self.group_keys[g * self.columns.len() + c] as usize;
        match &self.shown[c] {
            Some(shown) => &shown.values[id],
            None => &self.columns[c].values[id],
        }
    }

    /// Bytes the grouping holds, roughly (keys, tables).
    pub fn memory(&self) -> usize {
        let columns: usize = self
            .columns
            .iter()
            .chain(self.shown.iter().flatten())
            .map(|c| {
                let bytes = c.key_bytes;
                c.values.capacity() * std::mem::size_of::<KeyValue>()
                    + c.ints.capacity() * 16
                    + c.bytes.capacity() * 24
                    + bytes
            })
            .sum();
        columns + self.groups.capacity() * 20 + self.group_keys.capacity() * 4 + self.dense.capacity() * 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::format::encoding::Dictionary;

    #[test]
    fn one_integer_key_numbers_values_in_order_of_appearance() {
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        let values = [7, 3, 7, 9, 3];
        let valid = [true, true, true, true, false];
        g.assign(&[KeyInput::Int { values: &values, valid: Some(&valid) }], &[0, 1, 2, 3, 4], &mut gids);
        assert_eq!(gids, vec![0, 1, 0, 2, 3]);
        assert_eq!(g.len(), 4);
        assert_eq!(g.key(2, 0), &KeyValue::Int(9));
        assert_eq!(g.key(3, 0), &KeyValue::Null);
    }

    #[test]
    fn dictionary_and_plain_byte_vectors_share_numbers() {
        let mut g = Grouper::new(2);
        let mut gids = Vec::new();
        let entries = Dictionary::new(vec![1, 0, 1], vec![0, 1, 3], b"abb".to_vec());
        let dict = DecodedVector::from_parts(
            3,
            None,
            DecodedValues::Bytes { offsets: vec![0], data: vec![] },
            Some(entries),
        );
        let hours = [10, 10, 11];
        g.assign(
            &[KeyInput::Bytes(&dict, ByteKey::Exact), KeyInput::Int { values: &hours, valid: None }],
            &[0, 1, 2],
            &mut gids,
        );
        assert_eq!(gids, vec![0, 1, 2]);
        let values = DecodedValues::Bytes { offsets: vec![0, 2, 3], data: b"bba".to_vec() };
        let plain = DecodedVector::from_parts(2, None, values, None);
        let hours = [11, 10];
        g.assign(
            &[KeyInput::Bytes(&plain, ByteKey::Exact), KeyInput::Int { values: &hours, valid: None }],
            &[0, 1],
            &mut gids,
        );
        assert_eq!(gids, vec![2, 1]);
        assert_eq!(g.len(), 3);
        assert_eq!(g.key(2, 0), &KeyValue::Bytes(b"bb"[..].into()));
        assert_eq!(g.key(2, 1), &KeyValue::Int(11));
    }

    fn dictionary_vector(codes: Vec<u32>, entries: &[&[u8]]) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for e in entries {
            data.extend_from_slice(e);
            offsets.push(data.len() as u32);
        }
        let rows = codes.len() as u32;
        let values = DecodedValues::Bytes { offsets: vec![0], data: vec![] };
        DecodedVector::from_parts(rows, None, values, Some(Dictionary::new(codes, offsets, data)))
    }

    /// Vectors that store the same dictionary keep its entries' numbers (an entry no row
    /// of the first used is numbered when a row uses it); another dictionary, also one
    /// with the same values in another order, is looked up anew.
    #[test]
    fn vectors_of_one_dictionary_share_its_entry_numbers() {
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        let hosts: [&[u8]; 3] = [b"a", b"b", b"c"];
        let first = dictionary_vector(vec![2, 2, 0], &hosts);
        g.assign(&[KeyInput::Bytes(&first, ByteKey::Exact)], &[0, 1, 2], &mut gids);
        assert_eq!(gids, vec![0, 0, 1]);
        let same = dictionary_vector(vec![1, 0, 2, 1], &hosts);
        g.assign(&[KeyInput::Bytes(&same, ByteKey::Exact)], &[0, 1, 2, 3], &mut gids);
        assert_eq!(gids, vec![2, 1, 0, 2]);
        let reordered = dictionary_vector(vec![0, 1, 2], &[b"c", b"b", b"a"]);
        g.assign(&[KeyInput::Bytes(&reordered, ByteKey::Exact)], &[0, 1, 2], &mut gids);
        assert_eq!(gids, vec![0, 2, 1]);
        let other = dictionary_vector(vec![0, 1], &[b"b", b"d"]);
        g.assign(&[KeyInput::Bytes(&other, ByteKey::Exact)], &[0, 1], &mut gids);
        assert_eq!(gids, vec![2, 3]);
        assert_eq!(g.len(), 4);
        assert_eq!(g.key(3, 0), &KeyValue::Bytes(b"d"[..].into()));
    }

    /// Once every entry of a dictionary has its number, a vector of it takes its rows'
    /// numbers by lookup alone (no test per row); a vector of it with a NULL row takes
    /// the same numbers the long way, and the NULL one of its own.
    #[test]
    fn a_fully_numbered_dictionary_keeps_its_numbers() {
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        let hosts: [&[u8]; 3] = [b"a", b"b", b"c"];
        let first = dictionary_vector(vec![2, 0, 1], &hosts);
        g.assign(&[KeyInput::Bytes(&first, ByteKey::Exact)], &[0, 1], &mut gids);
        assert_eq!(gids, vec![0, 1]);
        let rest = dictionary_vector(vec![1, 1], &hosts);
        g.assign(&[KeyInput::Bytes(&rest, ByteKey::Exact)], &[1], &mut gids);
        assert_eq!(gids, vec![2]);
        let again = dictionary_vector(vec![0, 2, 1, 1, 2], &hosts);
        g.assign(&[KeyInput::Bytes(&again, ByteKey::Exact)], &[4, 1, 0, 2], &mut gids);
        assert_eq!(gids, vec![0, 0, 1, 2]);
        let mut with_null = dictionary_vector(vec![1, 0, 2], &hosts);
        with_null.validity = Some(vec![true, false, true]);
        g.assign(&[KeyInput::Bytes(&with_null, ByteKey::Exact)], &[0, 1, 2], &mut gids);
        assert_eq!(gids, vec![2, 3, 0]);
        assert_eq!(g.len(), 4);
        assert_eq!(g.key(3, 0), &KeyValue::Null);
        assert_eq!(g.key(2, 0), &KeyValue::Bytes(b"b"[..].into()));
    }

    /// Groups of dictionary keys found by their codes are those found by their values:
    /// numbered in order of first appearance, showing each group's own first value,
    /// across vectors whose dictionaries differ.
    #[test]
    fn dictionary_keys_by_code_group_as_keys_by_value() {
        let flags1 = dictionary_vector(vec![2, 0, 1, 0, 2, 1, 1], &[b"A", b"N", b"R "]);
        let status1 = dictionary_vector(vec![0, 1, 1, 1, 0, 0, 1], &[b"F", b"O  "]);
        let flags2 = dictionary_vector(vec![0, 1, 0, 2], &[b"R", b"A", b"N "]);
        let status2 = dictionary_vector(vec![1, 0, 0, 1], &[b"O", b"F"]);
        let vectors = [(&flags1, &status1, vec![0u32, 1, 2, 4, 5, 6]), (&flags2, &status2, vec![0, 1, 2, 3])];
        let mut by_code = Grouper::new(2);
        let mut by_key = Grouper::new(2);
        for (flags, status, sel) in &vectors {
            let inputs =
                [KeyInput::Bytes(flags, ByteKey::TrimSpaces), KeyInput::Bytes(status, ByteKey::TrimSpaces)];
            let (mut a, mut b) = (Vec::new(), Vec::new());
            assert!(by_code.assign_by_codes(&inputs, sel, &mut a));
            by_key.assign_by_keys(&inputs, sel, &mut b);
            assert_eq!(a, b);
        }
        assert_eq!(by_code.len(), by_key.len());
        for g in 0..by_code.len() {
            for c in 0..2 {
                assert_eq!(by_code.key(g, c), by_key.key(g, c), "group {g} key {c}");
            }
        }
        // "R " and "R" are one group, shown as first seen.
        assert_eq!(by_code.key(0, 0), &KeyValue::Bytes(b"R "[..].into()));
        // Not taken: a key with NULLs, a code without an entry, a key that is not a dictionary.
        let mut gids = Vec::new();
        let mut nulls = dictionary_vector(vec![0, 0], &[b"A"]);
        nulls.validity = Some(vec![true, false]);
        let plain = byte_vector(&[b"F", b"O"]);
        let bad = dictionary_vector(vec![0, 3], &[b"A", b"N"]);
        for v in [&nulls, &plain, &bad] {
            let inputs = [KeyInput::Bytes(v, ByteKey::Exact), KeyInput::Bytes(&status2, ByteKey::Exact)];
            assert!(!by_code.assign_by_codes(&inputs, &[0, 1], &mut gids));
        }
    }

    #[test]
    fn byte_keys_that_differ_in_length_or_a_nul_stay_distinct() {
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        let long = "a key longer than fifteen bytes";
        let values: Vec<&[u8]> = vec![b"a", b"a\0", b"", long.as_bytes(), b"a", long.as_bytes(), b"a\0"];
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in &values {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        let col = DecodedVector::from_parts(
            values.len() as u32,
            None,
            DecodedValues::Bytes { offsets, data },
            None,
        );
        g.assign(&[KeyInput::Bytes(&col, ByteKey::Exact)], &[0, 1, 2, 3, 4, 5, 6], &mut gids);
        assert_eq!(gids, vec![0, 1, 2, 3, 0, 3, 1]);
        assert_eq!(g.key(3, 0), &KeyValue::Bytes(long.as_bytes().into()));
    }

    #[test]
    fn partitions_split_the_keys_between_them() {
        let values: Vec<i64> = (0..1000).map(|i| i % 97).collect();
        let hash = hashbrown::DefaultHashBuilder::default();
        let mut seen = vec![None; 97];
        let mut total = 0;
        for part in 0..4 {
            let mut sel: Vec<u32> = (0..1000).collect();
            retain_partition(&[KeyInput::Int { values: &values, valid: None }], &mut sel, 4, part, &hash);
            total += sel.len();
            for r in sel {
                // Every row of a key lands in the same part.
                let k = values[r as usize] as usize;
                assert!(seen[k].is_none_or(|p| p == part));
                seen[k] = Some(part);
            }
        }
        assert_eq!(total, 1000);
    }

    fn byte_vector(values: &[&[u8]]) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in values {
            data.extend_from_slice(v);
            offsets.push(data.len() as u32);
        }
        DecodedVector::from_parts(values.len() as u32, None, DecodedValues::Bytes { offsets, data }, None)
    }

    #[test]
    fn bpchar_keys_ignore_trailing_spaces_and_keep_the_first_value() {
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        let col = byte_vector(&[b"a  ", b"a", b" a", b"", b"   ", b"a "]);
        g.assign(&[KeyInput::Bytes(&col, ByteKey::TrimSpaces)], &[0, 1, 2, 3, 4, 5], &mut gids);
        assert_eq!(gids, vec![0, 0, 1, 2, 2, 0]);
        assert_eq!(g.key(0, 0), &KeyValue::Bytes(b"a  "[..].into()));
        assert_eq!(g.key(2, 0), &KeyValue::Bytes(b""[..].into()));
    }

    /// Runs of one key (a sorted table's vectors) number as any rows do: a run's rows
    /// share the number of its first, NULLs between runs are their own group.
    #[test]
    fn runs_of_one_byte_key_share_its_number() {
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        let mut col = byte_vector(&[b"h1", b"h1", b"h1", b"", b"h1", b"h2", b"h2", b"h1 ", b"h1"]);
        col.validity = Some(vec![true, true, true, false, true, true, true, true, true]);
        g.assign(&[KeyInput::Bytes(&col, ByteKey::TrimSpaces)], &[0, 1, 2, 3, 4, 5, 6, 7, 8], &mut gids);
        assert_eq!(gids, vec![0, 0, 0, 1, 0, 2, 2, 0, 0]);
        assert_eq!(g.key(1, 0), &KeyValue::Null);
        // Exact keys: "h1 " is its own group, however it lies among "h1" rows.
        let mut g = Grouper::new(1);
        g.assign(&[KeyInput::Bytes(&col, ByteKey::Exact)], &[0, 1, 2, 3, 4, 5, 6, 7, 8], &mut gids);
        assert_eq!(gids, vec![0, 0, 0, 1, 0, 2, 2, 3, 0]);
    }

    #[test]
    fn numeric_keys_group_by_value_not_scale() {
        // Stored numerics (short format: header, then base-10000 digits), as
        // numeric_in makes them: 1.0, 1.00, 1, -1.0, 0.00, 0, NaN, Infinity, 10000.
        let short = |neg: bool, weight: i8, dscale: u16, digits: &[u16]| {
            let header = 0x8000u16 | if neg { 0x2000 } else { 0 } | (dscale << 7) | (weight as u16 & 0x7F);
            let mut b = header.to_le_bytes().to_vec();
            digits.iter().for_each(|d| b.extend_from_slice(&d.to_le_bytes()));
            b
        };
        // 1.00 in the long format (as a value with a large display scale has).
        let mut long_one = 2u16.to_le_bytes().to_vec();
        long_one.extend_from_slice(&0i16.to_le_bytes());
        long_one.extend_from_slice(&1u16.to_le_bytes());
        let values = [
            short(false, 0, 1, &[1]),
            short(false, 0, 2, &[1]),
            short(false, 0, 0, &[1]),
            short(true, 0, 1, &[1]),
            short(false, 0, 2, &[]),
            short(false, 0, 0, &[]),
            0xC000u16.to_le_bytes().to_vec(),
            0xD000u16.to_le_bytes().to_vec(),
            short(false, 1, 0, &[1]),
            long_one,
        ];
        let refs: Vec<&[u8]> = values.iter().map(|v| &v[..]).collect();
        let col = byte_vector(&refs);
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        g.assign(&[KeyInput::Bytes(&col, ByteKey::Numeric)], &(0..10).collect::<Vec<u32>>(), &mut gids);
        assert_eq!(gids, vec![0, 0, 0, 1, 2, 2, 3, 4, 5, 0]);
        // The group outputs the first value seen: 1.0, not 1.00 or 1.
        assert_eq!(g.key(0, 0), &KeyValue::Bytes(values[0].clone().into()));
        assert_eq!(g.key(2, 0), &KeyValue::Bytes(values[4].clone().into()));
    }

    #[test]
    fn with_several_keys_a_group_shows_its_own_first_value() {
        let mut g = Grouper::new(2);
        let mut gids = Vec::new();
        // Keys (flag, bpchar): "a" is seen first with flag 1, "a  " first with flag 2.
        let flags = [1, 2, 1, 2];
        let col = byte_vector(&[b"a", b"a  ", b"a ", b"a"]);
        g.assign(
            &[KeyInput::Int { values: &flags, valid: None }, KeyInput::Bytes(&col, ByteKey::TrimSpaces)],
            &[0, 1, 2, 3],
            &mut gids,
        );
        assert_eq!(gids, vec![0, 1, 0, 1]);
        assert_eq!(g.key(0, 1), &KeyValue::Bytes(b"a"[..].into()));
        assert_eq!(g.key(1, 1), &KeyValue::Bytes(b"a  "[..].into()));
        assert_eq!(g.key(1, 0), &KeyValue::Int(2));
    }

    #[test]
    fn selection_skips_rows() {
        let mut g = Grouper::new(1);
        let mut gids = Vec::new();
        g.assign(&[KeyInput::Int { values: &[1, 2, 3], valid: None }], &[2], &mut gids);
        assert_eq!((gids, g.len()), (vec![0], 1));
    }
}
