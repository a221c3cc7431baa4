//! count(DISTINCT col): int8. Each group counts the values it has not seen before; the
//! values seen are kept in one set of (group, value) for all groups. A value is kept in
//! the form in which equal values are equal bits: integers as stored; floats with -0
//! as 0 and every NaN one NaN (float8eq's equality); byte strings as stored (text under
//! a deterministic collation), a bpchar's without its trailing spaces (bpchareq).
//! Never partial: core does not aggregate DISTINCT in parallel.

use super::{drive, each_bytes, wrong_column, AggKernel, Cmp, Gids, Overflow};
use crate::exec::agg::output::Output;
use crate::storage::format::encoding::{DecodedValues, DecodedVector};
use hashbrown::HashSet;

/// How the column's values are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DistinctBy {
    /// Integers (and integer-like types) by value.
    Int,
    /// float4 / float8 by float8eq.
    Float,
    /// Byte strings by their bytes.
    Bytes,
    /// bpchar: the bytes without trailing spaces.
    Bpchar,
}

#[derive(Debug)]
pub struct CountDistinct {
    by: DistinctBy,
    counts: Vec<i64>,
    ints: HashSet<(u32, i64)>,
    bytes: HashSet<(u32, Box<[u8]>)>,
}

impl CountDistinct {
    pub fn new(by: DistinctBy) -> Self {
        CountDistinct { by, counts: Vec::new(), ints: HashSet::new(), bytes: HashSet::new() }
    }

    fn add_int(&mut self, g: usize, v: i64) {
        if self.ints.insert((g as u32, v)) {
            self.counts[g] += 1;
        }
    }

    fn add_bytes(&mut self, g: usize, v: &[u8]) {
        let v = match self.by {
            DistinctBy::Bpchar => &v[..v.iter().rposition(|&b| b != b' ').map_or(0, |p| p + 1)],
            _ => v,
        };
        // Look up before copying: most rows repeat a value their group has.
        if !self.bytes.contains(&Probe(g as u32, v)) {
            self.bytes.insert((g as u32, v.into()));
            self.counts[g] += 1;
        }
    }
}

/// float8eq's equality as bits: -0 is 0, every NaN is one NaN.
fn float_key(x: f64) -> i64 {
    if x.is_nan() {
        f64::NAN.to_bits() as i64
    } else if x == 0.0 {
        0
    } else {
        x.to_bits() as i64
    }
}

impl AggKernel for CountDistinct {
    /// The count, and (a guess) one value's entry in the set.
    const BYTES_PER_GROUP: usize = 8 + 32;

    fn resize(&mut self, groups: usize) {
        self.counts.resize(groups, 0);
    }

    fn fold(&mut self, col: &DecodedVector, sel: &[u32], gids: Gids, _cmp: Cmp) -> Result<(), Overflow> {
        let valid = col.validity.as_deref();
        match (self.by, &col.values) {
            (DistinctBy::Int, DecodedValues::Int(v)) => drive(v, valid, sel, gids, |g, x| self.add_int(g, x)),
            (DistinctBy::Float, DecodedValues::Float64(v)) => {
                drive(v, valid, sel, gids, |g, x| self.add_int(g, float_key(x)))
            }
            (DistinctBy::Float, DecodedValues::Float32(v)) => {
                drive(v, valid, sel, gids, |g, x| self.add_int(g, float_key(x as f64)))
            }
            (DistinctBy::Bytes | DistinctBy::Bpchar, _) if col.dictionary.is_some() || is_bytes(col) => {
                each_bytes(col, sel, gids, |g, b| self.add_bytes(g, b))
            }
            _ => wrong_column(self),
        }
        Ok(())
    }

    fn result(&self, g: usize) -> Output<'_> {
        Output::Int8(self.counts[g])
    }
}

fn is_bytes(col: &DecodedVector) -> bool {
    matches!(col.values, DecodedValues::Bytes { .. })
}

/// A (group, bytes) key looked up without making a boxed copy: hashes as the tuple
/// `(u32, Box<[u8]>)` does (the group, then the slice).
#[derive(Hash)]
struct Probe<'a>(u32, &'a [u8]);

impl hashbrown::Equivalent<(u32, Box<[u8]>)> for Probe<'_> {
    fn equivalent(&self, key: &(u32, Box<[u8]>)) -> bool {
        self.0 == key.0 && *self.1 == *key.1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes_col(values: &[Option<&str>]) -> DecodedVector {
        let mut offsets = vec![0u32];
        let mut data = Vec::new();
        for v in values {
            data.extend_from_slice(v.unwrap_or("").as_bytes());
            offsets.push(data.len() as u32);
        }
        let validity =
            values.iter().any(Option::is_none).then(|| values.iter().map(Option::is_some).collect());
        DecodedVector::from_parts(values.len() as u32, validity, DecodedValues::Bytes { offsets, data }, None)
    }

    fn counts(k: &CountDistinct, groups: usize) -> Vec<i64> {
        (0..groups)
            .map(|g| match k.result(g) {
                Output::Int8(n) => n,
                other => panic!("{other:?}"),
            })
            .collect()
    }

    const NO_CMP: Cmp = &|a, b| a.cmp(b);

    #[test]
    fn ints_per_group_across_vectors() {
        let mut k = CountDistinct::new(DistinctBy::Int);
        k.resize(2);
        let col = DecodedVector::from_parts(
            5,
            Some(vec![true, true, true, false, true]),
            DecodedValues::Int(vec![1, 1, 2, 9, 1]),
            None,
        );
        let sel = [0, 1, 2, 3, 4];
        k.fold(&col, &sel, Gids::Each(&[0, 0, 0, 0, 1]), NO_CMP).unwrap();
        k.fold(&col, &[2, 4], Gids::Each(&[1, 1]), NO_CMP).unwrap();
        // Group 0: {1, 2} (9 is NULL); group 1: {1, 2}.
        assert_eq!(counts(&k, 2), vec![2, 2]);
    }

    #[test]
    fn floats_as_float8eq() {
        let mut k = CountDistinct::new(DistinctBy::Float);
        k.resize(1);
        let col = DecodedVector::from_parts(
            5,
            None,
            DecodedValues::Float64(vec![0.0, -0.0, f64::NAN, -f64::NAN, 1.5]),
            None,
        );
        k.fold(&col, &[0, 1, 2, 3, 4], Gids::Same(0), NO_CMP).unwrap();
        assert_eq!(counts(&k, 1), vec![3]);
    }

    #[test]
    fn bpchar_ignores_trailing_spaces_text_does_not() {
        let col = bytes_col(&[Some("a"), Some("a  "), Some(" a"), None, Some("")]);
        let sel = [0, 1, 2, 3, 4];
        let mut b = CountDistinct::new(DistinctBy::Bpchar);
        b.resize(1);
        b.fold(&col, &sel, Gids::Same(0), NO_CMP).unwrap();
        assert_eq!(counts(&b, 1), vec![3]);
        let mut t = CountDistinct::new(DistinctBy::Bytes);
        t.resize(1);
        t.fold(&col, &sel, Gids::Same(0), NO_CMP).unwrap();
        assert_eq!(counts(&t, 1), vec![4]);
    }

    #[test]
    fn dictionary_vectors_count_entries_by_value() {
        use crate::storage::format::encoding::Dictionary;
        let dict = Dictionary::new(vec![0, 1, 0, 1], vec![0, 1, 3], b"bb ".to_vec());
        let col = DecodedVector::from_parts(
            4,
            None,
            DecodedValues::Bytes { offsets: vec![0], data: vec![] },
            Some(dict),
        );
        let mut k = CountDistinct::new(DistinctBy::Bpchar);
        k.resize(2);
        k.fold(&col, &[0, 1, 2, 3], Gids::Each(&[0, 0, 1, 1]), NO_CMP).unwrap();
        // 'b' and 'b ' are one bpchar.
        assert_eq!(counts(&k, 2), vec![1, 1]);
    }
}
