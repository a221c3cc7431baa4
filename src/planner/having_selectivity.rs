//! The share of groups a HAVING test on an aggregate keeps, `agg(col) op constant`,
//! from the column's value distribution (its statistics) and the rows per group.
//!
//! Core prices every such test at a flat 1/3 (DEFAULT_INEQ_SEL). For a selective test
//! (TPC-H q18's `sum(l_quantity) > 300`, which keeps 57 of 1.5M orders) that makes the
//! grouped subquery look 10,000 times bigger than it is, and core joins it last, after
//! joining every fact row. Here a group's size K is modelled as 1 + Poisson(rows per
//! group - 1), and the aggregate over K values as: the value itself for K = 1; the sum
//! and the mean as normal (central limit), clipped to what K values between the column's
//! minimum and maximum can reach; min and max exactly from the distribution function;
//! count(*) as K. Pure.

use crate::storage::format::zonemap::CmpOp;

/// The values of a column, as its statistics describe them: point masses (the most
/// common values) and ranges of uniform mass (histogram buckets), weights summing to 1
/// over the non-NULL values.
#[derive(Debug, Clone, PartialEq)]
pub struct ValueDistribution {
    /// (low, high, weight); low == high for a point mass.
    parts: Vec<(f64, f64, f64)>,
}

impl ValueDistribution {
    /// From most common values with their frequencies (of all rows) and histogram
    /// bounds (equal shares of the rest of the non-NULL rows). `null_frac` is the share
    /// of NULL rows. None when nothing usable is given.
    pub fn from_stats(mcv: &[(f64, f64)], histogram: &[f64], null_frac: f64) -> Option<Self> {
        let mut parts: Vec<(f64, f64, f64)> =
            mcv.iter().filter(|(v, f)| v.is_finite() && *f > 0.0).map(|&(v, f)| (v, v, f)).collect();
        let mcv_share: f64 = parts.iter().map(|p| p.2).sum();
        let rest = (1.0 - null_frac.clamp(0.0, 1.0) - mcv_share).max(0.0);
        let bounds: Vec<f64> = histogram.iter().copied().filter(|v| v.is_finite()).collect();
        if bounds.len() >= 2 && rest > 0.0 {
            let each = rest / (bounds.len() - 1) as f64;
            parts.extend(bounds.windows(2).map(|w| (w[0].min(w[1]), w[0].max(w[1]), each)));
        }
        let total: f64 = parts.iter().map(|p| p.2).sum();
        if parts.is_empty() || total <= 0.0 {
            return None;
        }
        parts.iter_mut().for_each(|p| p.2 /= total);
        Some(Self { parts })
    }

    pub fn min(&self) -> f64 {
        self.parts.iter().map(|p| p.0).fold(f64::INFINITY, f64::min)
    }

    pub fn max(&self) -> f64 {
        self.parts.iter().map(|p| p.1).fold(f64::NEG_INFINITY, f64::max)
    }

    pub fn mean(&self) -> f64 {
        self.parts.iter().map(|&(lo, hi, w)| w * (lo + hi) / 2.0).sum()
    }

    pub fn variance(&self) -> f64 {
        let mean = self.mean();
        let second: f64 = self
            .parts
            .iter()
            .map(|&(lo, hi, w)| w * ((lo + hi).powi(2) / 4.0 + (hi - lo).powi(2) / 12.0))
            .sum();
        (second - mean * mean).max(0.0)
    }

    /// P(X < x), or P(X <= x) when `inclusive`.
    pub fn cdf(&self, x: f64, inclusive: bool) -> f64 {
        let mut p = 0.0;
        for &(lo, hi, w) in &self.parts {
            if lo == hi {
                if lo < x || (inclusive && lo == x) {
                    p += w;
                }
            } else if hi <= x {
                p += w;
            } else if lo < x {
                p += w * (x - lo) / (hi - lo);
            }
        }
        p.clamp(0.0, 1.0)
    }
}

/// The aggregate a HAVING test reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupStat {
    /// count(*): the group's size.
    Rows,
    Sum,
    Avg,
    Min,
    Max,
}

/// The share of groups for which `stat op c` holds (the aggregate on the left; None for
/// `=`, which the model does not estimate); `values` is needed for every stat but `Rows`. `rows_per_group` is the rows folded over the groups (at least 1).
pub fn selectivity(
    stat: GroupStat,
    op: CmpOp,
    c: f64,
    values: Option<&ValueDistribution>,
    rows_per_group: f64,
) -> Option<f64> {
    if !c.is_finite() || op == CmpOp::Eq {
        return None;
    }
    let sizes = group_sizes(rows_per_group.max(1.0));
    let mut p = 0.0;
    for (k, weight) in sizes {
        let below = match stat {
            GroupStat::Rows => {
                let k = k as f64;
                if k < c || (k == c && matches!(op, CmpOp::Le | CmpOp::Gt)) {
                    1.0
                } else {
                    0.0
                }
            }
            _ => stat_below(stat, values?, k, c, matches!(op, CmpOp::Le | CmpOp::Gt)),
        };
        // `below` is P(stat < c) (or <= c); the test keeps it or its complement.
        p += weight * if matches!(op, CmpOp::Lt | CmpOp::Le) { below } else { 1.0 - below };
    }
    Some(p.clamp(0.0, 1.0))
}

/// P(stat over k values < c), or <= c when `inclusive`.
fn stat_below(stat: GroupStat, d: &ValueDistribution, k: u32, c: f64, inclusive: bool) -> f64 {
    let f = d.cdf(c, inclusive);
    let kf = k as f64;
    match stat {
        GroupStat::Min => 1.0 - (1.0 - f).powf(kf),
        GroupStat::Max => f.powf(kf),
        _ if k == 1 => f,
        GroupStat::Sum => {
            normal_below(c, inclusive, kf * d.mean(), kf * d.variance(), kf * d.min(), kf * d.max())
        }
        GroupStat::Avg => normal_below(c, inclusive, d.mean(), d.variance() / kf, d.min(), d.max()),
        GroupStat::Rows => unreachable!("counted apart"),
    }
}

/// P(Y < c) (or <= c when `inclusive`) for Y normal (mean, variance) confined to
/// [lo, hi].
fn normal_below(c: f64, inclusive: bool, mean: f64, variance: f64, lo: f64, hi: f64) -> f64 {
    if c < lo || (c == lo && !inclusive) {
        return 0.0;
    }
    if c > hi || (c == hi && inclusive) {
        return 1.0;
    }
    if variance <= 0.0 {
        return if c > mean { 1.0 } else { 0.0 };
    }
    0.5 * erfc((mean - c) / (2.0 * variance).sqrt())
}

/// Group sizes with their probabilities: K = 1 + Poisson(mean - 1), the terms that carry
/// all but 1e-15 of the mass; a single size when groups are large (the test's answer
/// then hardly depends on the spread of K).
fn group_sizes(mean: f64) -> Vec<(u32, f64)> {
    let lambda = mean - 1.0;
    if !(1e-9..=500.0).contains(&lambda) {
        return vec![(mean.round() as u32, 1.0)];
    }
    let mut out = Vec::new();
    // Poisson terms by recurrence in log space.
    let mut log_p = -lambda;
    let mut seen = 0.0;
    for j in 0..10_000u32 {
        if j > 0 {
            log_p += lambda.ln() - (j as f64).ln();
        }
        let p = log_p.exp();
        out.push((j + 1, p));
        seen += p;
        if (j as f64) > lambda && 1.0 - seen < 1e-15 {
            break;
        }
    }
    out
}

/// The complementary error function (Numerical Recipes' erfcc: relative error below
/// 1.2e-7 everywhere, tails included, which is what a selective test needs).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// l_quantity: 1..=50, each 2% (TPC-H).
    fn quantity() -> ValueDistribution {
        let mcv: Vec<(f64, f64)> = (1..=50).map(|v| (v as f64, 0.02)).collect();
        ValueDistribution::from_stats(&mcv, &[], 0.0).unwrap()
    }

    #[test]
    fn distribution_moments_and_cdf() {
        let d = quantity();
        assert!((d.mean() - 25.5).abs() < 1e-9);
        assert!((d.variance() - (50.0f64.powi(2) - 1.0) / 12.0).abs() < 1e-6);
        assert!((d.cdf(10.0, true) - 0.2).abs() < 1e-9);
        assert!((d.cdf(10.0, false) - 0.18).abs() < 1e-9);
        let h = ValueDistribution::from_stats(&[], &[0.0, 10.0, 20.0], 0.5).unwrap();
        assert!((h.cdf(5.0, false) - 0.25).abs() < 1e-9);
        assert!((h.mean() - 10.0).abs() < 1e-9);
        assert_eq!((h.min(), h.max()), (0.0, 20.0));
        assert!(ValueDistribution::from_stats(&[], &[1.0], 0.0).is_none());
    }

    #[test]
    fn erfc_matches_known_values() {
        assert!((erfc(0.0) - 1.0).abs() < 1e-7);
        assert!((erfc(1.0) - 0.157_299_207).abs() < 1e-7);
        assert!((erfc(-1.0) - 1.842_700_793).abs() < 1e-7);
        // A far tail, relative error small.
        let e5 = 1.537_459_794_428e-12;
        assert!(((erfc(5.0) - e5) / e5).abs() < 1e-6);
    }

    #[test]
    fn group_sizes_have_the_mean_and_all_the_mass() {
        for mean in [1.0, 1.5, 4.0, 40.0, 400.0] {
            let s = group_sizes(mean);
            let mass: f64 = s.iter().map(|p| p.1).sum();
            let m: f64 = s.iter().map(|&(k, p)| k as f64 * p).sum();
            assert!((mass - 1.0).abs() < 1e-9, "{mean}: {mass}");
            assert!((m - mean).abs() < 1e-6 * mean, "{mean}: {m}");
        }
        assert_eq!(group_sizes(2000.0), vec![(2000, 1.0)]);
    }

    #[test]
    fn q18_sum_over_300_is_rare() {
        // 6M rows in 1.5M orders; 57 orders have sum(l_quantity) > 300.
        let s = selectivity(GroupStat::Sum, CmpOp::Gt, 300.0, Some(&quantity()), 4.0).unwrap();
        let groups = s * 1.5e6;
        assert!((1.0..5_000.0).contains(&groups), "{groups}");
        // The complement keeps nearly all.
        let s = selectivity(GroupStat::Sum, CmpOp::Le, 300.0, Some(&quantity()), 4.0).unwrap();
        assert!(s > 0.99);
    }

    #[test]
    fn a_middle_threshold_keeps_about_half() {
        let s = selectivity(GroupStat::Sum, CmpOp::Gt, 25.5 * 10.0, Some(&quantity()), 10.0).unwrap();
        assert!((0.35..0.65).contains(&s), "{s}");
        let s = selectivity(GroupStat::Avg, CmpOp::Ge, 25.5, Some(&quantity()), 10.0).unwrap();
        assert!((0.35..0.65).contains(&s), "{s}");
    }

    #[test]
    fn bounds_are_exact() {
        let d = quantity();
        // No group of one value sums above 50, none of any size averages above 50.
        assert_eq!(selectivity(GroupStat::Sum, CmpOp::Gt, 50.0, Some(&d), 1.0), Some(0.0));
        assert_eq!(selectivity(GroupStat::Avg, CmpOp::Gt, 50.0, Some(&d), 7.0), Some(0.0));
        let all = |s: Option<f64>| (s.unwrap() - 1.0).abs() < 1e-12;
        assert!(all(selectivity(GroupStat::Avg, CmpOp::Ge, 1.0, Some(&d), 7.0)));
        assert!(all(selectivity(GroupStat::Max, CmpOp::Le, 50.0, Some(&d), 3.0)));
    }

    #[test]
    fn min_max_and_count_follow_the_sizes() {
        let d = quantity();
        // One value per group: max > 40 keeps 20%.
        let s = selectivity(GroupStat::Max, CmpOp::Gt, 40.0, Some(&d), 1.0).unwrap();
        assert!((s - 0.2).abs() < 1e-9);
        // Bigger groups: max > 40 more often, min > 40 less often.
        let big = selectivity(GroupStat::Max, CmpOp::Gt, 40.0, Some(&d), 5.0).unwrap();
        let small = selectivity(GroupStat::Min, CmpOp::Gt, 40.0, Some(&d), 5.0).unwrap();
        assert!(big > 0.5 && small < 0.05, "{big} {small}");
        // count(*) > 1 with one row a group: none; with 4 a group: most.
        assert_eq!(selectivity(GroupStat::Rows, CmpOp::Gt, 1.0, None, 1.0), Some(0.0));
        let s = selectivity(GroupStat::Rows, CmpOp::Gt, 1.0, None, 4.0).unwrap();
        assert!((s - (1.0 - (-3.0f64).exp())).abs() < 1e-9);
        assert_eq!(selectivity(GroupStat::Sum, CmpOp::Gt, 1.0, None, 4.0), None);
    }

    #[test]
    fn equality_is_not_estimated() {
        assert_eq!(selectivity(GroupStat::Sum, CmpOp::Eq, 300.0, Some(&quantity()), 4.0), None);
    }
}
