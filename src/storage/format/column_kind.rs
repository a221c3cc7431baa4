//! How a column's values are stored (`relation::datum` chooses a kind per attribute from
//! its type): the physical kind of its vectors, and how a value goes back into a heap
//! tuple (`row_images`).

use super::encoding::PhysicalKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    Dropped,
    Int { len: u8 },
    Float4,
    Float8,
    Fixed { len: u16 },
    Varlena,
    CString,
}

impl ColumnKind {
    pub fn physical(self) -> Option<PhysicalKind> {
        match self {
            ColumnKind::Dropped => None,
            ColumnKind::Int { .. } => Some(PhysicalKind::Int),
            ColumnKind::Float4 => Some(PhysicalKind::Float32),
            ColumnKind::Float8 => Some(PhysicalKind::Float64),
            ColumnKind::Fixed { .. } | ColumnKind::Varlena | ColumnKind::CString => Some(PhysicalKind::Bytes),
        }
    }
}
