//! Which rows ANALYZE samples of the row range it maps to one of the blocks it asks for:
//! each row with the same probability, independently (a Bernoulli sample), returned in
//! row order.
//!
//! An evenly strided sample looks random but is not: rows that share a value and lie
//! together (an order's line items, a device's readings) are never both sampled, so
//! ANALYZE sees every value once and takes a column with four rows per value for a
//! unique one (`n_distinct = -1`: TPC-H's `l_orderkey` then estimated one row per
//! order, and the planner chose a nested loop over 90k orders). A Bernoulli sample
//! meets such pairs as often as a uniform random sample does, which is what
//! ANALYZE's n_distinct estimator assumes. Its size varies: the rate aims a little
//! below the target so that the reservoir stays unreplaced and in row order (the
//! correlation statistic reads that order). The random numbers come from the block's
//! place, so the same data gets the same statistics.

/// The share of the target sample size the rate aims at: a sample of 30,000 rows
/// varies by about 170, so this keeps it below the target but for a 5-sigma draw.
const AIM: f64 = 0.97;

/// The Bernoulli sample of one block's rows.
#[derive(Debug, Clone, Copy, Default)]
pub struct BlockSample {
    /// Probability that a row is sampled (1: every row).
    rate: f64,
    /// splitmix64 state.
    state: u64,
}

impl BlockSample {
    /// The sample of block `block` of `blocks`, which holds `block_rows` of the table's
    /// `total_rows` rows, for a sample of `target` rows over the blocks ANALYZE visits
    /// (all of them up to `target`, `target` of them beyond).
    pub fn new(block: u64, blocks: u64, block_rows: u64, total_rows: u64, target: u64) -> BlockSample {
        let visited = blocks.min(target).max(1);
        let rate = if total_rows <= target || block_rows == 0 {
            1.0
        } else {
            (target as f64 * AIM / visited as f64 / block_rows as f64).min(1.0)
        };
        BlockSample { rate, state: block ^ total_rows.rotate_left(32) ^ 0x9E37_79B9_7F4A_7C15 }
    }

    /// Rows to step over before the next sampled one: geometrically distributed with
    /// the block's rate (0 for every row at rate 1).
    pub fn gap(&mut self) -> u64 {
        if self.rate >= 1.0 {
            return 0;
        }
        if self.rate <= 0.0 {
            return u64::MAX;
        }
        // u in (0, 1]: ln(u) is finite.
        let u = ((self.next() >> 11) + 1) as f64 / (1u64 << 53) as f64;
        let g = (u.ln() / (1.0 - self.rate).ln()).floor();
        if g >= u64::MAX as f64 {
            u64::MAX
        } else {
            g as u64
        }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sampled rows of a table of `rows` rows in `blocks` blocks, every block visited.
    fn sample(rows: u64, blocks: u64, target: u64) -> Vec<u64> {
        let mut out = Vec::new();
        for b in 0..blocks {
            let (start, end) = (b * rows / blocks, (b + 1) * rows / blocks);
            let mut s = BlockSample::new(b, blocks, end - start, rows, target);
            let mut at = start;
            loop {
                at = at.saturating_add(s.gap());
                if at >= end {
                    break;
                }
                out.push(at);
                at += 1;
            }
        }
        out
    }

    #[test]
    fn small_tables_are_sampled_whole() {
        assert_eq!(sample(1000, 7, 30_000), (0..1000).collect::<Vec<_>>());
    }

    #[test]
    fn samples_stay_below_the_target_and_near_it() {
        let s = sample(6_000_000, 25_000, 30_000);
        assert!(s.len() <= 30_000 && s.len() > 28_500, "{}", s.len());
        assert!(s.windows(2).all(|w| w[0] < w[1]), "in row order");
        assert_eq!(s, sample(6_000_000, 25_000, 30_000), "the same data, the same sample");
    }

    #[test]
    fn neighbouring_rows_are_sampled_together_as_often_as_chance_has_it() {
        // Rows in runs of four (an order's line items): a uniform sample of 29,100 of
        // 6M rows holds about 1.5M * 6 * p^2 = 212 pairs of one run; a strided one none.
        let s = sample(6_000_000, 25_000, 30_000);
        let pairs = s.windows(2).filter(|w| w[0] / 4 == w[1] / 4).count();
        assert!((150..300).contains(&pairs), "{pairs}");
    }
}
