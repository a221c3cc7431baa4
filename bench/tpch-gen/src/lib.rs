//! The eight TPC-H tables as CSV, one table at a time, streamed into any writer.
//!
//! The rows come from the `tpchgen` crate (dbgen's generators, the same output byte for
//! byte) and are formatted by its `csv` module: comma-separated, no header, every field
//! that may hold a comma (names, addresses, comments) in double quotes, dates as
//! `YYYY-MM-DD`, money with two decimals. PostgreSQL loads it with
//! `COPY t FROM STDIN (FORMAT csv)` and DuckDB with `read_csv(..., header = false)`.
//! TPC-H has no NULLs, so CSV's empty-field-is-NULL rule never applies.

use std::fmt::Display;
use std::io::{self, Write};

use tpchgen::csv::{
    CustomerCsv, LineItemCsv, NationCsv, OrderCsv, PartCsv, PartSuppCsv, RegionCsv, SupplierCsv,
};
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator,
    RegionGenerator, SupplierGenerator,
};

/// One TPC-H table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Table {
    Region,
    Nation,
    Part,
    Supplier,
    PartSupp,
    Customer,
    Orders,
    LineItem,
}

impl Table {
    /// All eight, dimensions first.
    pub const ALL: [Table; 8] = [
        Table::Region,
        Table::Nation,
        Table::Part,
        Table::Supplier,
        Table::PartSupp,
        Table::Customer,
        Table::Orders,
        Table::LineItem,
    ];

    /// The table's name in the TPC-H schema (and its file's stem).
    pub fn name(self) -> &'static str {
        match self {
            Table::Region => "region",
            Table::Nation => "nation",
            Table::Part => "part",
            Table::Supplier => "supplier",
            Table::PartSupp => "partsupp",
            Table::Customer => "customer",
            Table::Orders => "orders",
            Table::LineItem => "lineitem",
        }
    }

    pub fn from_name(name: &str) -> Option<Table> {
        Table::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Number of columns of a row.
    pub fn columns(self) -> usize {
        match self {
            Table::Region => 3,
            Table::Nation => 4,
            Table::Part => 9,
            Table::Supplier => 7,
            Table::PartSupp => 5,
            Table::Customer => 8,
            Table::Orders => 9,
            Table::LineItem => 16,
        }
    }

    /// Rows at scale factor `sf`, where the spec fixes it (lineitem's count is drawn:
    /// 1 to 7 lines per order, about 4 * orders).
    pub fn fixed_rows(self, sf: f64) -> Option<i64> {
        match self {
            Table::Region => Some(5),
            Table::Nation => Some(25),
            Table::Part => Some(PartGenerator::calculate_row_count(sf, 1, 1)),
            Table::Supplier => Some(SupplierGenerator::calculate_row_count(sf, 1, 1)),
            // The generator counts parts; each part has four suppliers.
            Table::PartSupp => Some(4 * PartSuppGenerator::calculate_row_count(sf, 1, 1)),
            Table::Customer => Some(CustomerGenerator::calculate_row_count(sf, 1, 1)),
            Table::Orders => Some(OrderGenerator::calculate_row_count(sf, 1, 1)),
            Table::LineItem => None,
        }
    }
}

/// Write every row of `table` at scale factor `sf` to `out`, one CSV line each; return
/// the number of rows. `out` should be buffered: each row is several small writes.
pub fn write_table<W: Write>(table: Table, sf: f64, out: &mut W) -> io::Result<u64> {
    // The generators split a table into `part_count` parts for parallel generation;
    // one part is the whole table, in dbgen's row order.
    let (part, parts) = (1, 1);
    match table {
        Table::Region => write_rows(RegionGenerator::new(sf, part, parts).iter().map(RegionCsv::new), out),
        Table::Nation => write_rows(NationGenerator::new(sf, part, parts).iter().map(NationCsv::new), out),
        Table::Part => write_rows(PartGenerator::new(sf, part, parts).iter().map(PartCsv::new), out),
        Table::Supplier => {
            write_rows(SupplierGenerator::new(sf, part, parts).iter().map(SupplierCsv::new), out)
        }
        Table::PartSupp => {
            write_rows(PartSuppGenerator::new(sf, part, parts).iter().map(PartSuppCsv::new), out)
        }
        Table::Customer => {
            write_rows(CustomerGenerator::new(sf, part, parts).iter().map(CustomerCsv::new), out)
        }
        Table::Orders => write_rows(OrderGenerator::new(sf, part, parts).iter().map(OrderCsv::new), out),
        Table::LineItem => {
            write_rows(LineItemGenerator::new(sf, part, parts).iter().map(LineItemCsv::new), out)
        }
    }
}

fn write_rows<W: Write, R: Display>(rows: impl Iterator<Item = R>, out: &mut W) -> io::Result<u64> {
    let mut n = 0;
    for row in rows {
        writeln!(out, "{row}")?;
        n += 1;
    }
    Ok(n)
}

/// Split one CSV line as the generator writes it (fields optionally in double quotes,
/// quotes inside doubled) into its fields; for tests and checks.
pub fn split_csv_line(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', false) if field.is_empty() => quoted = true,
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', true) => quoted = false,
            (',', false) => fields.push(std::mem::take(&mut field)),
            (c, _) => field.push(c),
        }
    }
    fields.push(field);
    fields
}
