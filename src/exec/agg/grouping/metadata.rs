//! No GROUP BY and no FILTER: a vector every row of which counts is answered from its
//! zone maps for each aggregate they answer (count, min, max), and folded for the
//! others; any other vector is folded whole into the one group.

use super::{fold_rows, GroupingPolicy, Run, Step};
use crate::exec::agg::fold::Acc;
use crate::exec::agg::groups::Grouper;
use crate::exec::agg::kernels::Gids;
use crate::exec::agg::spec::{AggFunc, AggSpec, InputType};
use crate::storage::format::zonemap::ZoneMap;
use crate::storage::read::reader::Reader;

pub struct MetadataAnswers;

impl GroupingPolicy for MetadataAnswers {
    unsafe fn add_vector(&mut self, run: &mut Run, sel: &mut Vec<u32>) -> Step {
        if !run.reader.vector_whole() {
            // SAFETY: the reader is open and positioned on the vector `sel` selects from
            // (the trait's contract for `add_vector`).
            unsafe { fold_rows(run, sel, Gids::Same(0)) };
            return Step::Next;
        }
        let (aggs, reader) = (&mut *run.aggs, &mut *run.reader);
        let mut folded_any = false;
        for i in 0..aggs.states.len() {
            if !answer_from_metadata(&mut aggs.states[i], &aggs.specs[i], reader, sel.len()) {
                // SAFETY: the run's reader is open and positioned on this vector (the trait's contract).
                unsafe { aggs.fold_into(i, reader, sel) };
                folded_any = true;
            }
        }
        if folded_any {
            run.counters.vectors_folded += 1;
            run.counters.rows_folded += sel.len() as u64;
        } else {
            run.counters.vectors_from_metadata += 1;
        }
        Step::Next
    }

    fn grouper(&self) -> Option<&Grouper> {
        None
    }
}

/// Whether zone maps answer aggregate `spec` for the current vector when every row of it
/// is selected.
fn metadata_answers(spec: &AggSpec, reader: &Reader) -> bool {
    if !spec.zone_answerable() {
        return false;
    }
    let Some(a) = spec.att else { return true };
    let floats = matches!(spec.input, InputType::Float4 | InputType::Float8);
    reader.vector_stats(a).is_some_and(|s| match (spec.func, s.zone) {
        (AggFunc::Count, _) => true,
        (_, ZoneMap::Int { .. }) => !floats,
        // A float zone map holds the extremes in PostgreSQL's order (NaN above all). A
        // zero extreme is left to the fold: -0 and 0 compare equal, and which one core's
        // float8larger keeps depends on their order.
        (_, ZoneMap::Float { min, max }) => {
            floats && (if spec.func == AggFunc::Max { max } else { min }) != 0.0
        }
        (_, ZoneMap::None) => s.null_count == s.rows,
        _ => false,
    })
}

/// Answers the aggregate from the current vector's zone map if it can (see
/// `metadata_answers`); true if it did.
fn answer_from_metadata(acc: &mut Acc, spec: &AggSpec, reader: &Reader, rows: usize) -> bool {
    if !metadata_answers(spec, reader) {
        return false;
    }
    let stats = spec.att.and_then(|a| reader.vector_stats(a));
    match (acc, stats) {
        (Acc::Count(c), None) => c.add_rows(rows as i64),
        (Acc::Count(c), Some(s)) => c.add_rows((s.rows - s.null_count) as i64),
        (Acc::MinMaxInt(m), Some(s)) => {
            if let ZoneMap::Int { min, max } = s.zone {
                m.add_extremes(min, max);
            }
        }
        (Acc::MinMaxFloat(m), Some(s)) => {
            if let ZoneMap::Float { min, max } = s.zone {
                m.add_extremes(min, max);
            }
        }
        _ => return false,
    }
    true
}
