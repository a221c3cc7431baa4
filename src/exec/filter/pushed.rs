//! A pushed filter as the reader asks for it (`storage::read::vector_filter::VectorFilter`):
//! zone-map verdicts and vector selections by this module's kernels. Every node that
//! reads a columnar relation with a filter hands the reader one.

use super::conjunction::Conjunction;
use super::{kernels, zone, Filter};
use crate::storage::format::zonemap::{Verdict, ZoneStats};
use crate::storage::read::vector_filter::{ColumnSource, VectorFilter};

/// A resolved filter, as the reader asks for it.
pub struct PushedFilter {
    filter: Filter,
    attributes: Vec<usize>,
    /// The filter as steps by column, when it is an AND of tests (most are).
    conjunction: Option<Conjunction>,
}

impl PushedFilter {
    pub fn boxed(filter: Filter) -> Box<dyn VectorFilter> {
        let attributes = filter.attributes();
        let conjunction = Conjunction::of(&filter);
        Box::new(PushedFilter { filter, attributes, conjunction })
    }
}

impl VectorFilter for PushedFilter {
    fn attributes(&self) -> &[usize] {
        &self.attributes
    }

    fn verdict(&self, stats: &dyn Fn(usize) -> Option<ZoneStats>) -> Verdict {
        zone::verdict(&self.filter, stats)
    }

    fn select(
        &self,
        stats: &dyn Fn(usize) -> Option<ZoneStats>,
        columns: &mut dyn ColumnSource,
        selection: &mut Vec<u32>,
    ) {
        match &self.conjunction {
            Some(c) => c.select(stats, columns, selection),
            None => kernels::select_with_zones(&self.filter, stats, columns, selection),
        }
    }
}
