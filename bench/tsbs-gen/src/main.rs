//! `tsbs-gen`: write TSBS-style cpu-only rows as PostgreSQL COPY text to stdout.

use std::io::{self, BufWriter, Write};
use std::process::ExitCode;

use tsbs_gen::{generate, Config, Walk, DEFAULT_HOSTS, DEFAULT_ROWS, DEFAULT_SEED};

const USAGE: &str = "\
Usage: tsbs-gen [--rows N] [--hosts H] [--seed S] [--walk normal|uniform] [--truncate]

Writes TSBS-style cpu-only rows (21 columns: time, 10 tags, 10 usage_* metrics) to
stdout in PostgreSQL COPY text format, e.g.

    tsbs-gen --rows 1000000 | psql -c \"COPY cpu FROM STDIN\"

Options:
  --rows N       rows to write, exactly (default: $ROWS or 10000000)
  --hosts H      number of hosts host_0..host_{H-1} (default: $HOSTS or 400)
  --seed S       PRNG seed; same seed => byte-identical output (default: 123)
  --walk KIND    metric step distribution: normal = N(0,1) like TSBS (default),
                 uniform = U[-1,1)
  --truncate     print trunc(value) (TSBS's current cpu-only data is integer-valued)
  -h, --help     show this help
";

fn parse_u64(name: &str, s: &str) -> Result<u64, String> {
    let clean: String = s.chars().filter(|&c| c != '_').collect();
    clean
        .parse::<u64>()
        .map_err(|_| format!("invalid value for {name}: {s:?} (expected a non-negative integer)"))
}

enum Parsed {
    Run(Config),
    Help,
}

fn parse_args(args: Vec<String>) -> Result<Parsed, String> {
    let mut cfg =
        Config { rows: DEFAULT_ROWS, hosts: DEFAULT_HOSTS, seed: DEFAULT_SEED, ..Config::default() };
    let env_u64 = |var: &str| -> Result<Option<u64>, String> {
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => parse_u64(var, v.trim()).map(Some),
            _ => Ok(None),
        }
    };
    if let Some(r) = env_u64("ROWS")? {
        cfg.rows = r;
    }
    if let Some(h) = env_u64("HOSTS")? {
        cfg.hosts = h;
    }

    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = |flag: &str| -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().ok_or_else(|| format!("{flag} needs a value")),
            }
        };
        match flag.as_str() {
            "-h" | "--help" => return Ok(Parsed::Help),
            "--rows" => cfg.rows = parse_u64("--rows", &value("--rows")?)?,
            "--hosts" => cfg.hosts = parse_u64("--hosts", &value("--hosts")?)?,
            "--seed" => cfg.seed = parse_u64("--seed", &value("--seed")?)?,
            "--walk" => {
                cfg.walk = match value("--walk")?.as_str() {
                    "normal" => Walk::Normal,
                    "uniform" => Walk::Uniform,
                    other => return Err(format!("invalid --walk {other:?} (normal|uniform)")),
                }
            }
            "--truncate" if inline.is_none() => cfg.truncate = true,
            _ => return Err(format!("unknown argument {arg:?}")),
        }
    }
    cfg.validate()?;
    Ok(Parsed::Run(cfg))
}

fn main() -> ExitCode {
    let cfg = match parse_args(std::env::args().skip(1).collect()) {
        Ok(Parsed::Run(c)) => c,
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("tsbs-gen: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 20, stdout.lock());
    let result = generate(&cfg, &mut out).and_then(|_| out.flush());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if e.kind() == io::ErrorKind::BrokenPipe {
                eprintln!("tsbs-gen: output closed early (broken pipe)");
            } else {
                eprintln!("tsbs-gen: write error: {e}");
            }
            // Drop the BufWriter without another flush attempt that would fail again.
            let (_, _) = out.into_parts();
            ExitCode::FAILURE
        }
    }
}
