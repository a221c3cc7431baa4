//! An arithmetic expression over the scanned relation's columns, in the form a plan
//! carries it: the planner translates an aggregate's argument into it (or leaves the
//! aggregate to core), `eval` computes it a vector at a time. Every operation has one
//! type, its operands' and its result's: the planner makes core's implicit casts
//! (int → numeric, int → float8, int2 → int4, ...) explicit `Cast` nodes. A searched
//! `CASE` tests its conditions as pushed filters (`exec::filter`), whose operands are
//! numbered with the scan's. Pure.

use crate::exec::filter::plan::FilterPlan;

/// The type of an expression's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExprType {
    Int2,
    Int4,
    Int8,
    Float4,
    Float8,
    Numeric,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// Integer and float division only (numeric division is left to core).
    Div,
    /// `%`: int2mod, int4mod, int8mod, numeric_mod.
    Mod,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    /// Attribute `att` (0-based) of the scanned relation.
    Column { att: usize, ty: ExprType },
    /// A non-NULL integer constant of an integer type.
    Int { value: i64, ty: ExprType },
    /// A non-NULL float constant (a float4 one holds its float4 value).
    Float { value: f64, ty: ExprType },
    /// A non-NULL numeric constant, its stored bytes (after the varlena header).
    Numeric(Vec<u8>),
    /// Unary minus (int2um, int4um, int8um, float4um, float8um, numeric_uminus).
    Neg(Box<Expr>),
    /// `left op right`, both of this node's type.
    Binary { op: BinOp, left: Box<Expr>, right: Box<Expr> },
    /// A cast: to a wider integer, an integer or float4 to float8, an integer to
    /// float4, an integer to numeric, a numeric to float8 (these never fail); to a
    /// narrower integer, a float or numeric to an integer, float8 to float4 (these can:
    /// `cast_can_fail`).
    Cast { to: ExprType, arg: Box<Expr> },
    /// `CASE WHEN cond THEN value ... [ELSE otherwise] END`: a row takes the first
    /// branch whose condition is true (not false, not NULL); without ELSE the others
    /// are NULL. Every value is of the CASE's type.
    Case { whens: Vec<(FilterPlan, Expr)>, otherwise: Option<Box<Expr>> },
}

const TYPES: [ExprType; 6] =
    [ExprType::Int2, ExprType::Int4, ExprType::Int8, ExprType::Float4, ExprType::Float8, ExprType::Numeric];
const OPS: [BinOp; 5] = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::Div, BinOp::Mod];
/// Deepest expression `from_bytes` reads (core's own limit is the stack's).
const MAX_DEPTH: usize = 256;

impl ExprType {
    pub fn is_int(self) -> bool {
        matches!(self, ExprType::Int2 | ExprType::Int4 | ExprType::Int8)
    }

    /// Bytes of an integer type's values (its range).
    fn int_width(self) -> u8 {
        match self {
            ExprType::Int2 => 2,
            ExprType::Int4 => 4,
            _ => 8,
        }
    }
}

/// Whether a cast from `from` to `to` is one `Expr::Cast` computes: every widening
/// between integers, floats and numeric that core's casts make exactly, numeric to
/// float8, and the narrowing casts whose only failure is "out of range" (integer to a
/// narrower integer, float to integer, float8 to float4).
pub fn cast_supported(from: ExprType, to: ExprType) -> bool {
    use ExprType::*;
    match (from, to) {
        (f, t) if f.is_int() && t.is_int() => f != t,
        (f, Numeric | Float4 | Float8) if f.is_int() => true,
        (Float4, Float8) | (Float8, Float4) | (Numeric, Float8) => true,
        (Float4 | Float8 | Numeric, t) => t.is_int(),
        _ => false,
    }
}

/// Whether a supported cast can fail (a value out of the target's range).
pub fn cast_can_fail(from: ExprType, to: ExprType) -> bool {
    match (from, to) {
        (f, t) if f.is_int() && t.is_int() => t.int_width() < f.int_width(),
        (ExprType::Float4 | ExprType::Float8, t) => {
            t.is_int() || (t == ExprType::Float4 && from == ExprType::Float8)
        }
        (ExprType::Numeric, t) => t.is_int(),
        _ => false,
    }
}

impl Expr {
    /// The type of the expression's values.
    pub fn ty(&self) -> ExprType {
        match self {
            Expr::Column { ty, .. } | Expr::Int { ty, .. } | Expr::Float { ty, .. } => *ty,
            Expr::Numeric(_) => ExprType::Numeric,
            Expr::Neg(arg) => arg.ty(),
            Expr::Binary { left, .. } => left.ty(),
            Expr::Cast { to, .. } => *to,
            Expr::Case { whens, .. } => whens[0].1.ty(),
        }
    }

    /// The CASE conditions of the expression, in the order `eval` numbers them: a
    /// CASE's own conditions, then those inside its values, branch by branch, ELSE
    /// last; an operator's left operand before its right.
    pub fn conditions<'a>(&'a self, out: &mut Vec<&'a FilterPlan>) {
        match self {
            Expr::Column { .. } | Expr::Int { .. } | Expr::Float { .. } | Expr::Numeric(_) => {}
            Expr::Neg(arg) | Expr::Cast { arg, .. } => arg.conditions(out),
            Expr::Binary { left, right, .. } => {
                left.conditions(out);
                right.conditions(out);
            }
            Expr::Case { whens, otherwise } => {
                out.extend(whens.iter().map(|(c, _)| c));
                whens.iter().for_each(|(_, e)| e.conditions(out));
                if let Some(e) = otherwise {
                    e.conditions(out);
                }
            }
        }
    }

    /// The numeric columns whose values the expression computes with (not those its
    /// CASE conditions only test).
    pub fn numeric_columns(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Column { att, ty: ExprType::Numeric } => out.push(*att),
            Expr::Column { .. } | Expr::Int { .. } | Expr::Float { .. } | Expr::Numeric(_) => {}
            Expr::Neg(arg) | Expr::Cast { arg, .. } => arg.numeric_columns(out),
            Expr::Binary { left, right, .. } => {
                left.numeric_columns(out);
                right.numeric_columns(out);
            }
            Expr::Case { whens, otherwise } => {
                whens.iter().for_each(|(_, e)| e.numeric_columns(out));
                if let Some(e) = otherwise {
                    e.numeric_columns(out);
                }
            }
        }
    }

    /// How many CASE conditions the expression has (`conditions`' length).
    pub fn condition_count(&self) -> usize {
        match self {
            Expr::Column { .. } | Expr::Int { .. } | Expr::Float { .. } | Expr::Numeric(_) => 0,
            Expr::Neg(arg) | Expr::Cast { arg, .. } => arg.condition_count(),
            Expr::Binary { left, right, .. } => left.condition_count() + right.condition_count(),
            Expr::Case { whens, otherwise } => {
                whens.len()
                    + whens.iter().map(|(_, e)| e.condition_count()).sum::<usize>()
                    + otherwise.as_ref().map_or(0, |e| e.condition_count())
            }
        }
    }

    /// The attributes the expression reads, appended to `out`.
    pub fn attributes(&self, out: &mut Vec<usize>) {
        match self {
            Expr::Column { att, .. } => out.push(*att),
            Expr::Int { .. } | Expr::Float { .. } | Expr::Numeric(_) => {}
            Expr::Neg(arg) | Expr::Cast { arg, .. } => arg.attributes(out),
            Expr::Binary { left, right, .. } => {
                left.attributes(out);
                right.attributes(out);
            }
            Expr::Case { whens, otherwise } => {
                for (c, e) in whens {
                    out.extend(c.attributes());
                    e.attributes(out);
                }
                if let Some(e) = otherwise {
                    e.attributes(out);
                }
            }
        }
    }

    pub fn write(&self, out: &mut Vec<u8>) {
        let ty = |t: ExprType| TYPES.iter().position(|x| *x == t).unwrap() as u8;
        match self {
            Expr::Column { att, ty: t } => {
                out.extend([0, ty(*t)]);
                out.extend_from_slice(&(*att as u32).to_le_bytes());
            }
            Expr::Int { value, ty: t } => {
                out.extend([1, ty(*t)]);
                out.extend_from_slice(&value.to_le_bytes());
            }
            Expr::Float { value, ty: t } => {
                out.extend([2, ty(*t)]);
                out.extend_from_slice(&value.to_bits().to_le_bytes());
            }
            Expr::Numeric(bytes) => {
                out.push(3);
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
                out.extend_from_slice(bytes);
            }
            Expr::Neg(arg) => {
                out.push(4);
                arg.write(out);
            }
            Expr::Binary { op, left, right } => {
                out.extend([5, OPS.iter().position(|x| x == op).unwrap() as u8]);
                left.write(out);
                right.write(out);
            }
            Expr::Cast { to, arg } => {
                out.extend([6, ty(*to)]);
                arg.write(out);
            }
            Expr::Case { whens, otherwise } => {
                out.push(7);
                out.extend_from_slice(&(whens.len() as u32).to_le_bytes());
                for (c, e) in whens {
                    let cond = c.to_bytes();
                    out.extend_from_slice(&(cond.len() as u32).to_le_bytes());
                    out.extend_from_slice(&cond);
                    e.write(out);
                }
                match otherwise {
                    None => out.push(0),
                    Some(e) => {
                        out.push(1);
                        e.write(out);
                    }
                }
            }
        }
    }

    /// The expression `write` wrote at the start of `bytes`, and the bytes after it;
    /// None for bytes it cannot have written.
    pub fn read(bytes: &[u8]) -> Option<(Expr, &[u8])> {
        read(bytes, 0)
    }
}

fn read(b: &[u8], depth: usize) -> Option<(Expr, &[u8])> {
    if depth > MAX_DEPTH {
        return None;
    }
    fn take(b: &[u8], n: usize) -> Option<(&[u8], &[u8])> {
        (b.len() >= n).then(|| b.split_at(n))
    }
    let ty = |code: u8| TYPES.get(code as usize).copied();
    let (&tag, rest) = b.split_first()?;
    Some(match tag {
        0..=2 => {
            let (&t, rest) = rest.split_first()?;
            let t = ty(t)?;
            match tag {
                0 => {
                    let (att, rest) = take(rest, 4)?;
                    (Expr::Column { att: u32::from_le_bytes(att.try_into().ok()?) as usize, ty: t }, rest)
                }
                1 => {
                    let (v, rest) = take(rest, 8)?;
                    (Expr::Int { value: i64::from_le_bytes(v.try_into().ok()?), ty: t }, rest)
                }
                _ => {
                    let (v, rest) = take(rest, 8)?;
                    let value = f64::from_bits(u64::from_le_bytes(v.try_into().ok()?));
                    (Expr::Float { value, ty: t }, rest)
                }
            }
        }
        3 => {
            let (len, rest) = take(rest, 4)?;
            let (bytes, rest) = take(rest, u32::from_le_bytes(len.try_into().ok()?) as usize)?;
            (Expr::Numeric(bytes.to_vec()), rest)
        }
        4 => {
            let (arg, rest) = read(rest, depth + 1)?;
            (Expr::Neg(Box::new(arg)), rest)
        }
        5 => {
            let (&op, rest) = rest.split_first()?;
            let op = *OPS.get(op as usize)?;
            let (left, rest) = read(rest, depth + 1)?;
            let (right, rest) = read(rest, depth + 1)?;
            (Expr::Binary { op, left: Box::new(left), right: Box::new(right) }, rest)
        }
        6 => {
            let (&t, rest) = rest.split_first()?;
            let (arg, rest) = read(rest, depth + 1)?;
            (Expr::Cast { to: ty(t)?, arg: Box::new(arg) }, rest)
        }
        7 => {
            let (n, mut rest) = take(rest, 4)?;
            let n = u32::from_le_bytes(n.try_into().ok()?) as usize;
            if n == 0 || n > rest.len() {
                return None;
            }
            let mut whens = Vec::with_capacity(n);
            for _ in 0..n {
                let (len, r) = take(rest, 4)?;
                let (cond, r) = take(r, u32::from_le_bytes(len.try_into().ok()?) as usize)?;
                let (e, r) = read(r, depth + 1)?;
                whens.push((FilterPlan::from_bytes(cond)?, e));
                rest = r;
            }
            let (&has_else, rest) = rest.split_first()?;
            let (otherwise, rest) = match has_else {
                0 => (None, rest),
                1 => {
                    let (e, rest) = read(rest, depth + 1)?;
                    (Some(Box::new(e)), rest)
                }
                _ => return None,
            };
            (Expr::Case { whens, otherwise }, rest)
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_round_trip() {
        let col = |att, ty| Box::new(Expr::Column { att, ty });
        let e = Expr::Binary {
            op: BinOp::Mul,
            left: col(5, ExprType::Numeric),
            right: Box::new(Expr::Binary {
                op: BinOp::Sub,
                left: Box::new(Expr::Numeric(vec![0, 0x80, 1, 0])),
                right: Box::new(Expr::Cast { to: ExprType::Numeric, arg: col(2, ExprType::Int4) }),
            }),
        };
        let f = Expr::Neg(Box::new(Expr::Binary {
            op: BinOp::Add,
            left: Box::new(Expr::Float { value: 1.5, ty: ExprType::Float8 }),
            right: Box::new(Expr::Int { value: -3, ty: ExprType::Int8 }),
        }));
        let case = Expr::Case {
            whens: vec![
                (
                    FilterPlan::Test { att: 1, test: crate::exec::filter::plan::PlanTest::IsNull },
                    Expr::Int { value: 7, ty: ExprType::Int8 },
                ),
                (
                    FilterPlan::Test {
                        att: 3,
                        test: crate::exec::filter::plan::PlanTest::Prefix(b"PROMO".to_vec()),
                    },
                    Expr::Cast { to: ExprType::Int8, arg: col(2, ExprType::Int4) },
                ),
            ],
            otherwise: Some(Box::new(Expr::Int { value: 0, ty: ExprType::Int8 })),
        };
        let no_else = Expr::Case {
            whens: vec![(
                FilterPlan::Test { att: 0, test: crate::exec::filter::plan::PlanTest::IsNotNull },
                *col(0, ExprType::Float8),
            )],
            otherwise: None,
        };
        let mut atts = Vec::new();
        case.attributes(&mut atts);
        assert_eq!(atts, vec![1, 3, 2]);
        assert_eq!(case.condition_count(), 2);
        for e in [e, f, case, no_else] {
            let mut bytes = Vec::new();
            e.write(&mut bytes);
            bytes.push(42);
            assert_eq!(Expr::read(&bytes), Some((e.clone(), &[42u8][..])));
            for cut in 0..bytes.len() - 1 {
                assert_eq!(Expr::read(&bytes[..cut]), None, "cut at {cut}");
            }
        }
    }
}
