//! The best row per key, for LastPoint: rows are ranked by one column (the ordering
//! column of `DISTINCT ON (g) ... ORDER BY g, t DESC`, or the argument of `max(t)`),
//! each key keeps its best row seen so far, and a vector or row group is passed by when
//! every key it may hold already has a row at least as good as the best its zone map
//! allows. Pure.

use crate::exec::filter::float_key;
use crate::storage::format::zonemap::{ZoneMap, ZoneStats};

/// How rows rank: by the ordering column, descending or ascending, NULLs best or worst.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rank {
    pub descending: bool,
    /// NULL ranks above every value (`DESC NULLS FIRST`, `ASC NULLS FIRST`), or below
    /// (the others, and `max` / `min`, which ignore NULLs unless a group has no value).
    pub nulls_win: bool,
}

/// A rank as an integer: greater is better.
pub type Score = i128;

/// Better than any score a zone map could allow: what an unknown zone gets.
pub const UNKNOWN: Score = i128::MAX;

impl Rank {
    fn null(&self) -> Score {
        if self.nulls_win {
            i128::MAX - 1
        } else {
            i128::MIN
        }
    }

    /// The score of an integer value (or NULL).
    #[inline]
    pub fn of_int(&self, x: Option<i64>) -> Score {
        match x {
            None => self.null(),
            Some(x) if self.descending => x as i128,
            Some(x) => -(x as i128),
        }
    }

    /// The score of a float value, in PostgreSQL's order (NaN above every number).
    #[inline]
    pub fn of_float(&self, x: Option<f64>) -> Score {
        self.of_int(x.map(float_key))
    }

    /// The best score a row of a zone with these statistics may have.
    pub fn top(&self, stats: Option<&ZoneStats>) -> Score {
        let Some(s) = stats else { return UNKNOWN };
        if s.null_count > 0 && self.nulls_win {
            return self.null();
        }
        if s.rows == s.null_count {
            return self.null();
        }
        match s.zone {
            ZoneMap::Int { min, max } => self.of_int(Some(if self.descending { max } else { min })),
            ZoneMap::Float { min, max } => self.of_float(Some(if self.descending { max } else { min })),
            _ => UNKNOWN,
        }
    }
}

impl Rank {
    /// The worst score a row of a zone with these statistics may have.
    pub fn bottom(&self, s: &ZoneStats) -> Score {
        if s.null_count > 0 && !self.nulls_win {
            return self.null();
        }
        if s.rows == s.null_count {
            return self.null();
        }
        match s.zone {
            ZoneMap::Int { min, max } => self.of_int(Some(if self.descending { min } else { max })),
            ZoneMap::Float { min, max } => self.of_float(Some(if self.descending { min } else { max })),
            _ => i128::MIN,
        }
    }
}

/// Rows whose ordering column a LastPoint is expected to read, from the ordering
/// column's zone statistics per vector and the keys expected: reading best vectors
/// first, about `keys × ln(keys) × 2` rows show every key (keys spread evenly), whose
/// best rows are then at least the worst of those rows; later vectors whose best
/// possible row is no better are passed by (when their keys are ones seen).
pub fn expected_rows_ranked(rank: Rank, vectors: &[ZoneStats], keys: f64) -> f64 {
    let mut order: Vec<(Score, Score, u64)> =
        vectors.iter().map(|s| (rank.top(Some(s)), rank.bottom(s), s.rows)).collect();
    order.sort_by_key(|v| std::cmp::Reverse(v.0));
    let need = (keys.max(1.0) * (keys + 1.0).ln().max(1.0) * 2.0).ceil() as u64;
    let mut rows = 0u64;
    let mut threshold = UNKNOWN;
    let mut walked = 0;
    for &(_, bottom, n) in &order {
        if rows >= need {
            break;
        }
        rows += n;
        threshold = threshold.min(bottom);
        walked += 1;
    }
    let rest: u64 = order[walked..].iter().filter(|v| v.0 > threshold || v.0 == UNKNOWN).map(|v| v.2).sum();
    (rows + rest) as f64
}

/// Per key number, the best row so far: its score and row number.
#[derive(Default)]
pub struct Best {
    score: Vec<Score>,
    row: Vec<u64>,
}

const NO_ROW: u64 = u64::MAX;

impl Best {
    fn grow(&mut self, key: u32) {
        let need = key as usize + 1;
        if self.score.len() < need {
            self.score.resize(need, i128::MIN);
            self.row.resize(need, NO_ROW);
        }
    }

    /// Row `row`, scored `score`, of key `key`: kept if better than the key's best (a tie
    /// keeps the row seen first).
    #[inline]
    pub fn offer(&mut self, key: u32, score: Score, row: u64) {
        self.grow(key);
        let k = key as usize;
        if self.row[k] == NO_ROW || score > self.score[k] {
            self.score[k] = score;
            self.row[k] = row;
        }
    }

    /// Whether key `key` has a row at least as good as `top`.
    #[inline]
    pub fn covers(&self, key: u32, top: Score) -> bool {
        let k = key as usize;
        k < self.row.len() && self.row[k] != NO_ROW && self.score[k] >= top && top != UNKNOWN
    }

    /// The best row of each key that has one, as (key, row number).
    pub fn winners(&self) -> impl Iterator<Item = (u32, u64)> + '_ {
        self.row.iter().enumerate().filter(|(_, &r)| r != NO_ROW).map(|(k, &r)| (k as u32, r))
    }

    pub fn memory(&self) -> usize {
        self.score.capacity() * 16 + self.row.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(zone: ZoneMap, rows: u64, null_count: u64) -> ZoneStats {
        ZoneStats { zone, rows, null_count }
    }

    #[test]
    fn descending_ranks_larger_values_higher_and_nulls_as_asked() {
        let desc = Rank { descending: true, nulls_win: true };
        assert!(desc.of_int(Some(5)) > desc.of_int(Some(4)));
        assert!(desc.of_int(None) > desc.of_int(Some(i64::MAX)));
        let max = Rank { descending: true, nulls_win: false };
        assert!(max.of_int(None) < max.of_int(Some(i64::MIN)));
        let asc = Rank { descending: false, nulls_win: false };
        assert!(asc.of_int(Some(i64::MIN)) > asc.of_int(Some(i64::MAX)));
        assert!(asc.of_float(Some(f64::NEG_INFINITY)) > asc.of_float(Some(f64::NAN)));
        assert!(desc.of_float(Some(f64::NAN)) > desc.of_float(Some(f64::INFINITY)));
    }

    #[test]
    fn a_zone_tops_at_its_best_possible_row() {
        let desc = Rank { descending: true, nulls_win: true };
        let zone = ZoneMap::Int { min: 3, max: 9 };
        assert_eq!(desc.top(Some(&stats(zone, 10, 0))), desc.of_int(Some(9)));
        // A NULL in the zone beats every value when NULLs come first.
        assert_eq!(desc.top(Some(&stats(zone, 10, 1))), desc.of_int(None));
        let max = Rank { descending: true, nulls_win: false };
        assert_eq!(max.top(Some(&stats(zone, 10, 1))), max.of_int(Some(9)));
        assert_eq!(max.top(Some(&stats(ZoneMap::None, 4, 4))), max.of_int(None));
        let asc = Rank { descending: false, nulls_win: false };
        assert_eq!(asc.top(Some(&stats(zone, 10, 0))), asc.of_int(Some(3)));
        // Without statistics, or a zone map of another kind, nothing can be passed by.
        assert_eq!(asc.top(None), UNKNOWN);
        assert_eq!(asc.top(Some(&stats(ZoneMap::None, 4, 0))), UNKNOWN);
    }

    #[test]
    fn time_ordered_vectors_are_mostly_passed_by_and_shuffled_ones_are_not() {
        let desc = Rank { descending: true, nulls_win: true };
        // 100 vectors of 1000 rows, each a disjoint time range: with 10 keys only the
        // newest vector is read.
        let ordered: Vec<ZoneStats> =
            (0..100).map(|i| stats(ZoneMap::Int { min: i * 1000, max: i * 1000 + 999 }, 1000, 0)).collect();
        assert_eq!(expected_rows_ranked(desc, &ordered, 10.0), 1000.0);
        // The same rows with every vector spanning the whole range: all are read.
        let shuffled: Vec<ZoneStats> =
            (0..100).map(|_| stats(ZoneMap::Int { min: 0, max: 99_999 }, 1000, 0)).collect();
        assert_eq!(expected_rows_ranked(desc, &shuffled, 10.0), 100_000.0);
        // Many keys need many rows before anything can be passed by.
        assert!(expected_rows_ranked(desc, &ordered, 5000.0) > 50_000.0);
    }

    #[test]
    fn keys_keep_their_best_row_and_the_first_of_ties() {
        let r = Rank { descending: true, nulls_win: true };
        let mut best = Best::default();
        best.offer(2, r.of_int(Some(10)), 100);
        best.offer(2, r.of_int(Some(12)), 101);
        best.offer(2, r.of_int(Some(12)), 102);
        best.offer(2, r.of_int(Some(11)), 103);
        best.offer(0, r.of_int(Some(1)), 7);
        assert_eq!(best.winners().collect::<Vec<_>>(), vec![(0, 7), (2, 101)]);
        assert!(best.covers(2, r.of_int(Some(12))));
        assert!(!best.covers(2, r.of_int(Some(13))));
        assert!(!best.covers(1, r.of_int(Some(0))), "a key without a row covers nothing");
        assert!(!best.covers(2, UNKNOWN));
        // A NULL beats the values when NULLs rank first.
        best.offer(0, r.of_int(None), 8);
        assert!(best.covers(0, r.of_int(None)));
        assert_eq!(best.winners().next(), Some((0, 8)));
    }
}
