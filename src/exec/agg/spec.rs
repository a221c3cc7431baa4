//! What a ColumnarAgg computes, in the form its plan carries: the group keys and the
//! aggregates, each on attributes of the scanned relation. Pure: the planner decides
//! (`planner::agg_path`), the node folds (`exec::columnar_agg`). This module is the
//! planner's whole view of `exec::agg` (`scripts/check_layers.py` holds it to that).

/// The units of `date_trunc` keys (`KeyKind::Trunc`), for the planner to parse.
pub use super::bucket::TruncUnit;
/// The fields of `extract` keys (`KeyKind::Extract`), for the planner to parse.
pub use super::extract::ExtractField;
use super::fold::Acc;
/// Which aggregate, over which type.
pub use super::func::{AggFunc, InputType};
/// An aggregate's argument when it is an expression (`exec::expr`).
pub use crate::exec::expr::plan::{BinOp, Expr, ExprType};
use crate::exec::filter::plan::FilterPlan;
use crate::storage::format::zonemap::CmpOp;

#[derive(Debug, Clone, PartialEq)]
pub struct AggSpec {
    pub func: AggFunc,
    pub input: InputType,
    /// The aggregated attribute (0-based); None for count(*) or an expression.
    pub att: Option<usize>,
    /// The aggregate's `FILTER (WHERE ...)`, its operands numbered after the scan's.
    pub filter: Option<FilterPlan>,
    /// The aggregated expression, of type `input`, when the argument is no plain column.
    pub expr: Option<Expr>,
}

impl AggSpec {
    /// Bytes the fold holds per group for this aggregate's state (for costing and for
    /// the fold's own memory estimate).
    pub fn bytes_per_group(&self) -> usize {
        Acc::new(self.func, self.input).bytes_per_group()
    }

    /// Whether zone maps can answer the aggregate for a vector every row of which counts:
    /// count, or min/max of an integer-like or float column, without a FILTER.
    pub fn zone_answerable(&self) -> bool {
        use InputType::*;
        self.filter.is_none()
            && self.expr.is_none()
            && match self.func {
                AggFunc::CountStar | AggFunc::Count => true,
                AggFunc::Min | AggFunc::Max => {
                    matches!(self.input, Int2 | Int4 | Int8 | OrderedInt | Float4 | Float8)
                }
                _ => false,
            }
    }
}

/// How a group key is computed from its attribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// The column's value (integers, or byte strings whose equality is byte equality).
    Value,
    /// A bpchar column's value: trailing spaces do not count.
    Bpchar,
    /// A numeric column's value: its display scale does not count (1.0 = 1.00).
    Numeric,
    /// `date_trunc(unit, col)` on a timestamp without time zone.
    Trunc(TruncUnit),
    /// `date_trunc(unit, col)` on a timestamptz, in the session's time zone.
    TruncTz(TruncUnit),
    /// `date_bin(stride, col, origin)`, stride and origin in microseconds.
    Bin { stride: i64, origin: i64 },
    /// `extract(field FROM col)` of a date or timestamp column (numeric), or
    /// `date_part(field, col)` of a timestamp one (float8).
    Extract { field: ExtractField, of: ExtractOf },
    /// The value of the key's expression (`KeySpec::expr`), of an integer type or
    /// numeric (grouped by value, whatever its display scale).
    Computed,
}

/// What an `extract` key reads and gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtractOf {
    /// `extract(field FROM date)`: numeric.
    Date,
    /// `extract(field FROM timestamp)`: numeric.
    Timestamp,
    /// `date_part(field, timestamp)`: float8.
    TimestampPart,
}

impl KeyKind {
    /// Whether the key is a time bucket computed from its column (not the value itself).
    pub fn bucketed(self) -> bool {
        matches!(
            self,
            KeyKind::Trunc(_) | KeyKind::TruncTz(_) | KeyKind::Bin { .. } | KeyKind::Extract { .. }
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct KeySpec {
    /// The attribute (0-based); of a computed key, the first its expression reads.
    pub att: usize,
    pub kind: KeyKind,
    /// A computed key's expression.
    pub expr: Option<Expr>,
}

impl KeySpec {
    /// A key computed from column `att` alone (its value, a bucket, a field).
    pub fn of_column(att: usize, kind: KeyKind) -> KeySpec {
        KeySpec { att, kind, expr: None }
    }

    /// The attributes the key reads, appended to `out`.
    pub fn attributes(&self, out: &mut Vec<usize>) {
        match &self.expr {
            Some(e) => e.attributes(out),
            None => out.push(self.att),
        }
    }
}

/// Most group keys a ColumnarAgg takes: a group's key ids are packed into 128 bits.
pub const MAX_KEYS: usize = 4;

#[derive(Debug, Clone, PartialEq)]
pub struct AggPlan {
    pub keys: Vec<KeySpec>,
    pub aggs: Vec<AggSpec>,
    /// Partial aggregation under a Gather: the output is each aggregate's transition
    /// state, for core's Finalize Aggregate.
    pub partial: bool,
    /// HAVING tests the fold checks before it makes a group's row (`having`); core's
    /// HAVING still checks the rows made.
    pub having: Vec<HavingTest>,
}

/// `aggregate op value` of a HAVING clause, for dropping the groups that clearly fail
/// it before their row is made: aggregate `agg` (index in `aggs`) compared as a number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HavingTest {
    pub agg: usize,
    pub cmp: CmpOp,
    pub value: f64,
}

impl AggPlan {
    /// Attributes the fold reads (0-based), sorted, once each.
    pub fn attributes(&self) -> Vec<usize> {
        let mut out = Vec::new();
        self.keys.iter().for_each(|k| k.attributes(&mut out));
        for a in &self.aggs {
            out.extend(a.att);
            if let Some(e) = &a.expr {
                e.attributes(&mut out);
            }
            if let Some(f) = &a.filter {
                out.extend(f.attributes());
            }
        }
        out.sort_unstable();
        out.dedup();
        out
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = Writer(Vec::new());
        w.u32(self.keys.len() as u32);
        for k in &self.keys {
            w.u32(k.att as u32);
            match k.kind {
                KeyKind::Value => w.0.push(0),
                KeyKind::Bpchar => w.0.push(4),
                KeyKind::Numeric => w.0.push(5),
                KeyKind::Trunc(u) => w.0.extend([1, u.code()]),
                KeyKind::TruncTz(u) => w.0.extend([2, u.code()]),
                KeyKind::Bin { stride, origin } => {
                    w.0.push(3);
                    w.i64(stride);
                    w.i64(origin);
                }
                KeyKind::Extract { field, of } => w.0.extend([6, field.code(), of as u8]),
                KeyKind::Computed => {
                    w.0.push(7);
                    k.expr.as_ref().expect("a computed key's expression").write(&mut w.0);
                }
            }
        }
        w.u32(self.aggs.len() as u32);
        for a in &self.aggs {
            w.0.push(FUNCS.iter().position(|f| *f == a.func).unwrap() as u8);
            w.0.push(INPUTS.iter().position(|t| *t == a.input).unwrap() as u8);
            w.u32(a.att.map_or(u32::MAX, |x| x as u32));
            match &a.filter {
                Some(f) => {
                    let bytes = f.to_bytes();
                    w.u32(bytes.len() as u32);
                    w.0.extend(bytes);
                }
                None => w.u32(u32::MAX),
            }
            match &a.expr {
                Some(e) => {
                    w.0.push(1);
                    e.write(&mut w.0);
                }
                None => w.0.push(0),
            }
        }
        w.0.push(self.partial as u8);
        w.u32(self.having.len() as u32);
        for h in &self.having {
            w.u32(h.agg as u32);
            w.0.push(CMP_OPS.iter().position(|c| *c == h.cmp).unwrap() as u8);
            w.i64(h.value.to_bits() as i64);
        }
        w.0
    }

    /// The plan `to_bytes` gave; None for bytes it cannot have given.
    pub fn from_bytes(bytes: &[u8]) -> Option<AggPlan> {
        let mut r = Reader(bytes);
        let nkeys = r.u32()? as usize;
        if nkeys > MAX_KEYS {
            return None;
        }
        let mut keys = Vec::with_capacity(nkeys);
        for _ in 0..nkeys {
            let att = r.u32()? as usize;
            let kind = match r.byte()? {
                0 => KeyKind::Value,
                4 => KeyKind::Bpchar,
                5 => KeyKind::Numeric,
                1 => KeyKind::Trunc(TruncUnit::from_code(r.byte()?)?),
                2 => KeyKind::TruncTz(TruncUnit::from_code(r.byte()?)?),
                3 => KeyKind::Bin { stride: r.i64()?, origin: r.i64()? },
                6 => KeyKind::Extract {
                    field: ExtractField::from_code(r.byte()?)?,
                    of: match r.byte()? {
                        0 => ExtractOf::Date,
                        1 => ExtractOf::Timestamp,
                        2 => ExtractOf::TimestampPart,
                        _ => return None,
                    },
                },
                7 => {
                    let (e, rest) = Expr::read(r.0)?;
                    r.0 = rest;
                    keys.push(KeySpec { att, kind: KeyKind::Computed, expr: Some(e) });
                    continue;
                }
                _ => return None,
            };
            keys.push(KeySpec::of_column(att, kind));
        }
        let naggs = r.u32()? as usize;
        let mut aggs = Vec::with_capacity(naggs.min(1024));
        for _ in 0..naggs {
            let func = *FUNCS.get(r.byte()? as usize)?;
            let input = *INPUTS.get(r.byte()? as usize)?;
            let att = Some(r.u32()?).filter(|&a| a != u32::MAX).map(|a| a as usize);
            let filter = match r.u32()? {
                u32::MAX => None,
                len => Some(FilterPlan::from_bytes(r.take(len as usize)?)?),
            };
            let expr = match r.byte()? {
                0 => None,
                1 => {
                    let (e, rest) = Expr::read(r.0)?;
                    r.0 = rest;
                    Some(e)
                }
                _ => return None,
            };
            aggs.push(AggSpec { func, input, att, filter, expr });
        }
        let partial = r.byte()? != 0;
        let nhaving = r.u32()? as usize;
        let mut having = Vec::with_capacity(nhaving.min(64));
        for _ in 0..nhaving {
            let agg = r.u32()? as usize;
            let cmp = *CMP_OPS.get(r.byte()? as usize)?;
            let value = f64::from_bits(r.i64()? as u64);
            if agg >= aggs.len() {
                return None;
            }
            having.push(HavingTest { agg, cmp, value });
        }
        r.0.is_empty().then_some(AggPlan { keys, aggs, partial, having })
    }
}

const CMP_OPS: [CmpOp; 5] = [CmpOp::Lt, CmpOp::Le, CmpOp::Eq, CmpOp::Ge, CmpOp::Gt];

const FUNCS: [AggFunc; 13] = [
    AggFunc::CountStar,
    AggFunc::Count,
    AggFunc::Sum,
    AggFunc::Avg,
    AggFunc::Min,
    AggFunc::Max,
    AggFunc::BoolAnd,
    AggFunc::BoolOr,
    AggFunc::VarPop,
    AggFunc::VarSamp,
    AggFunc::StddevPop,
    AggFunc::StddevSamp,
    AggFunc::CountDistinct,
];

const INPUTS: [InputType; 11] = [
    InputType::Int2,
    InputType::Int4,
    InputType::Int8,
    InputType::Float4,
    InputType::Float8,
    InputType::OrderedInt,
    InputType::Bool,
    InputType::Text,
    InputType::None,
    InputType::Numeric,
    InputType::Bpchar,
];

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn byte(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::filter::plan::PlanTest;
    use crate::storage::format::zonemap::CmpOp;

    #[test]
    fn plans_round_trip() {
        let plan = AggPlan {
            keys: vec![
                KeySpec::of_column(0, KeyKind::TruncTz(TruncUnit::Hour)),
                KeySpec::of_column(
                    3,
                    KeyKind::Extract { field: ExtractField::Week, of: ExtractOf::TimestampPart },
                ),
                KeySpec {
                    att: 7,
                    kind: KeyKind::Computed,
                    expr: Some(Expr::Binary {
                        op: BinOp::Mod,
                        left: Box::new(Expr::Column { att: 7, ty: ExprType::Int4 }),
                        right: Box::new(Expr::Column { att: 8, ty: ExprType::Int4 }),
                    }),
                },
                KeySpec::of_column(4, KeyKind::Numeric),
            ],
            aggs: vec![
                AggSpec {
                    func: AggFunc::CountStar,
                    input: InputType::None,
                    att: None,
                    filter: None,
                    expr: None,
                },
                AggSpec {
                    func: AggFunc::Sum,
                    input: InputType::Numeric,
                    att: None,
                    filter: None,
                    expr: Some(Expr::Binary {
                        op: BinOp::Mul,
                        left: Box::new(Expr::Column { att: 6, ty: ExprType::Numeric }),
                        right: Box::new(Expr::Numeric(vec![0, 0x80])),
                    }),
                },
                AggSpec {
                    func: AggFunc::Avg,
                    input: InputType::Float8,
                    att: Some(5),
                    filter: Some(FilterPlan::Test { att: 2, test: PlanTest::Compare(CmpOp::Gt, 1) }),
                    expr: None,
                },
            ],
            partial: true,
            having: vec![HavingTest { agg: 1, cmp: CmpOp::Ge, value: 300.5 }],
        };
        let bytes = plan.to_bytes();
        assert_eq!(AggPlan::from_bytes(&bytes), Some(plan.clone()));
        assert_eq!(plan.attributes(), vec![0, 2, 3, 4, 5, 6, 7, 8]);
        for cut in 0..bytes.len() {
            assert_eq!(AggPlan::from_bytes(&bytes[..cut]), None, "cut at {cut}");
        }
    }
}
