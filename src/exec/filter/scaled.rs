//! Numeric tests on vectors of scaled numerics (`ScaledNumerics`: row r is
//! m[r] / 10^scale): a comparison with a constant, or an IN list, becomes a test on
//! the mantissas alone, decided once per vector, so no row is parsed or compared in
//! base 10000. Numeric order holds exactly: a constant between two representable
//! values cuts between them, NaN lies above everything and the infinities beyond every
//! finite value. What does not reduce to 128-bit integers (a constant beyond them) is
//! `None`, and the caller compares the rows' bytes instead.

use crate::storage::format::numeric::{self, pow10, wide_mul, Parsed};
use crate::storage::format::zonemap::CmpOp;

/// A test on the mantissas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// Every value passes (true) or none does (false).
    All(bool),
    /// `m op k`; `op` None is `<>`.
    Cmp(Option<CmpOp>, i128),
}

/// `m / 10^scale op c` as a test on m, for the stored numeric `c`; None if the
/// constant does not reduce to 128-bit integers at that scale (or is no numeric).
pub fn cut(op: Option<CmpOp>, c: &[u8], scale: u16) -> Option<Cut> {
    use CmpOp::*;
    // A constant above (true) or below (false) every finite value.
    let beyond = |above: bool| {
        Cut::All(match op {
            Some(Lt | Le) => above,
            Some(Ge | Gt) => !above,
            Some(Eq) => false,
            None => true,
        })
    };
    let (cm, t) = match numeric::parse(c)? {
        Parsed::NaN | Parsed::PosInf => return Some(beyond(true)),
        Parsed::NegInf => return Some(beyond(false)),
        Parsed::Finite { negative, weight, dscale, digits } => {
            numeric::scaled(negative, weight, dscale, digits)?
        }
    };
    if t <= scale {
        // c at the vector's scale is the integer cm * 10^(scale - t).
        let k = wide_mul(cm, pow10((scale - t) as u32)?)?;
        return Some(Cut::Cmp(op, k));
    }
    // c * 10^scale = cm / d lies in [q, q + 1).
    let d = pow10((t - scale) as u32)?;
    let (q, exact) = (cm.div_euclid(d), cm.rem_euclid(d) == 0);
    if exact {
        return Some(Cut::Cmp(op, q));
    }
    Some(match op {
        Some(Lt | Le) => Cut::Cmp(Some(Le), q),
        Some(Ge | Gt) => Cut::Cmp(Some(Ge), q + 1),
        Some(Eq) => Cut::All(false),
        None => Cut::All(true),
    })
}

/// The mantissas at `scale` of the stored numerics `values` that a value of that scale
/// (with a 64-bit mantissa) can equal, sorted, each once; None if one of them does
/// not reduce to 128-bit integers.
pub fn keys(values: &[Vec<u8>], scale: u16) -> Option<Vec<i64>> {
    let mut keys = Vec::with_capacity(values.len());
    for v in values {
        match cut(Some(CmpOp::Eq), v, scale)? {
            Cut::Cmp(_, k) => keys.extend(i64::try_from(k).ok()),
            Cut::All(_) => {}
        }
    }
    keys.sort_unstable();
    keys.dedup();
    Some(keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::storage::format::numeric::stored_literal as stored;

    /// Whether m / 10^scale op c, through the cut.
    fn passes(op: Option<CmpOp>, m: i64, scale: u16, c: &str) -> bool {
        match cut(op, &stored(c), scale).unwrap() {
            Cut::All(b) => b,
            Cut::Cmp(op, k) => crate::exec::filter::passes(op, (m as i128).cmp(&k)),
        }
    }

    #[test]
    fn cuts_agree_with_numeric_order() {
        // Every value of scale 2 from -3.00 to 3.00 against constants of other scales,
        // checked against cmp_numerics on the bytes.
        let ops = [Some(CmpOp::Lt), Some(CmpOp::Le), Some(CmpOp::Eq), Some(CmpOp::Ge), Some(CmpOp::Gt), None];
        let constants = [
            "0.05",
            "0.07",
            "24",
            "-1",
            "0.055",
            "-0.055",
            "1.5",
            "0.0700",
            "2.999",
            "-2.991",
            "NaN",
            "Infinity",
            "-Infinity",
            "0",
            "0.000000000000000000000000000000000001",
        ];
        for m in -300i64..=300 {
            let x =
                stored(&format!("{}{}.{:02}", if m < 0 { "-" } else { "" }, m.abs() / 100, m.abs() % 100));
            for c in constants {
                let o = numeric::cmp_bytes(&x, &stored(c)).unwrap();
                for op in ops {
                    let expected = match op {
                        Some(CmpOp::Lt) => o.is_lt(),
                        Some(CmpOp::Le) => o.is_le(),
                        Some(CmpOp::Eq) => o.is_eq(),
                        Some(CmpOp::Ge) => o.is_ge(),
                        Some(CmpOp::Gt) => o.is_gt(),
                        None => o.is_ne(),
                    };
                    assert_eq!(passes(op, m, 2, c), expected, "{m} {op:?} {c}");
                }
            }
        }
    }

    #[test]
    fn constants_beyond_128_bits_are_left_to_the_bytes() {
        // 10^40: the long header, weight 10, one digit 1.
        let mut huge = 0u16.to_le_bytes().to_vec();
        huge.extend_from_slice(&10i16.to_le_bytes());
        huge.extend_from_slice(&1u16.to_le_bytes());
        assert_eq!(cut(Some(CmpOp::Lt), &huge, 2), None);
        assert_eq!(cut(Some(CmpOp::Lt), &stored("1.5"), 40), None);
        assert_eq!(cut(Some(CmpOp::Lt), b"x", 2), None);
    }

    #[test]
    fn in_lists_keep_the_values_a_scale_can_hold() {
        let set: Vec<Vec<u8>> =
            ["0.05", "0.050", "0.055", "NaN", "1", "-2.5"].iter().map(|t| stored(t)).collect();
        assert_eq!(keys(&set, 2), Some(vec![-250, 5, 100]));
        assert_eq!(keys(&set, 0), Some(vec![1]));
    }
}
