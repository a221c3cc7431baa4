//! `tpch-gen`: write the TPC-H tables for a scale factor as CSV files, one per table.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use tpch_gen::{write_table, Table};

const USAGE: &str = "\
Usage: tpch-gen --sf SF --dir DIR [--tables region,nation,...]
       tpch-gen --sf SF --stdout TABLE

Writes the TPC-H tables at scale factor SF (dbgen's exact data, by the tpchgen crate)
as CSV without a header, DIR/<table>.csv each, for

    COPY lineitem FROM STDIN (FORMAT csv)      -- PostgreSQL
    SELECT * FROM read_csv('lineitem.csv', header = false, columns = {...})  -- DuckDB

The tables are written in parallel, each through DIR/<table>.csv.tmp renamed when it is
complete, so a file that exists is whole.

Options:
  --sf SF          scale factor (1 = 6M lineitem rows, about 1 GB of CSV)
  --dir DIR        output directory (created)
  --tables LIST    comma-separated tables to write (default: all eight)
  --stdout TABLE   write one table to stdout instead
  -h, --help       show this help
";

struct Args {
    sf: f64,
    dir: Option<PathBuf>,
    tables: Vec<Table>,
    stdout: Option<Table>,
}

fn parse_table(name: &str) -> Result<Table, String> {
    Table::from_name(name).ok_or_else(|| format!("unknown table {name:?}"))
}

fn parse_args(args: Vec<String>) -> Result<Option<Args>, String> {
    let mut parsed = Args { sf: 0.0, dir: None, tables: Table::ALL.to_vec(), stdout: None };
    let mut it = args.into_iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "-h" | "--help" => return Ok(None),
            "--sf" => {
                let v = value()?;
                parsed.sf = v.parse().map_err(|_| format!("invalid scale factor {v:?}"))?;
            }
            "--dir" => parsed.dir = Some(PathBuf::from(value()?)),
            "--tables" => parsed.tables = value()?.split(',').map(parse_table).collect::<Result<_, _>>()?,
            "--stdout" => parsed.stdout = Some(parse_table(&value()?)?),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
    }
    if !(parsed.sf > 0.0 && parsed.sf.is_finite()) {
        return Err("--sf must be a positive number".into());
    }
    if parsed.dir.is_none() && parsed.stdout.is_none() {
        return Err("give --dir or --stdout".into());
    }
    Ok(Some(parsed))
}

fn write_file(table: Table, sf: f64, dir: &Path) -> io::Result<u64> {
    let path = dir.join(format!("{}.csv", table.name()));
    let tmp = dir.join(format!("{}.csv.tmp", table.name()));
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
    let rows = write_table(table, sf, &mut out)?;
    out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    fs::rename(&tmp, &path)?;
    Ok(rows)
}

fn run(args: Args) -> io::Result<()> {
    if let Some(table) = args.stdout {
        let stdout = io::stdout();
        let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
        write_table(table, args.sf, &mut out)?;
        return out.flush();
    }
    let dir = args.dir.expect("checked by parse_args");
    fs::create_dir_all(&dir)?;
    // One thread per table: lineitem takes most of the time, the others finish beside it.
    std::thread::scope(|s| {
        let workers: Vec<_> = args
            .tables
            .iter()
            .map(|&table| {
                let dir = &dir;
                s.spawn(move || {
                    let t0 = Instant::now();
                    let rows = write_file(table, args.sf, dir)?;
                    eprintln!(
                        "tpch-gen: {:<8} {rows:>10} rows  {:6.1} s",
                        table.name(),
                        t0.elapsed().as_secs_f64()
                    );
                    Ok::<_, io::Error>(())
                })
            })
            .collect();
        workers.into_iter().try_for_each(|w| w.join().expect("generator thread panicked"))
    })
}

fn main() -> ExitCode {
    match parse_args(std::env::args().skip(1).collect()) {
        Ok(None) => {
            print!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Some(args)) => match run(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("tpch-gen: {e}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("tpch-gen: {e}\n\n{USAGE}");
            ExitCode::from(2)
        }
    }
}
