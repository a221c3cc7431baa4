//! Shared helpers for the integration tests: they talk to the throwaway cluster that
//! `make test` starts (PGCOLUMNAR_TEST_HOST / PGCOLUMNAR_TEST_PORT) over the protocol
//! (the `postgres` crate); only what has no protocol form (pg_dump, restoring a dump,
//! pgbench) runs the client programs.
//! The tests are `#[ignore]`d so that plain `cargo test` stays server-free; `make test`
//! runs them with `--include-ignored`.

#![allow(dead_code)]

use std::cell::RefCell;
use std::process::Command;

pub struct Cluster {
    host: String,
    port: String,
    psql: String,
    bindir: String,
}

impl Cluster {
    pub fn from_env() -> Cluster {
        let var = |name: &str| {
            std::env::var(name)
                .unwrap_or_else(|_| panic!("{name} is not set: run these tests with `make integration-test`"))
        };
        let pg_config =
            std::env::var("PG_CONFIG").unwrap_or_else(|_| "/usr/lib/postgresql/15/bin/pg_config".to_string());
        let bindir = Command::new(&pg_config).arg("--bindir").output().expect("pg_config runs");
        let bindir = String::from_utf8(bindir.stdout).unwrap().trim().to_string();
        Cluster {
            host: var("PGCOLUMNAR_TEST_HOST"),
            port: var("PGCOLUMNAR_TEST_PORT"),
            psql: format!("{bindir}/psql"),
            bindir,
        }
    }

    /// Drops and recreates database `name` with the extension installed.
    pub fn fresh_database(&self, name: &str) -> Database<'_> {
        let db = self.empty_database(name);
        db.query("CREATE EXTENSION pgcolumnar");
        db
    }

    /// Drops and recreates database `name`, empty.
    pub fn empty_database(&self, name: &str) -> Database<'_> {
        let mut admin = self.connect("postgres");
        for sql in [format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"), format!("CREATE DATABASE {name}")]
        {
            admin.batch_execute(&sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        Database { cluster: self, name: name.to_string(), client: RefCell::new(self.connect(name)) }
    }

    /// A connection to database `db`.
    fn connect(&self, db: &str) -> postgres::Client {
        postgres::Config::new()
            .host(&self.host)
            .port(self.port.parse().expect("PGCOLUMNAR_TEST_PORT is a port number"))
            .user("postgres")
            .dbname(db)
            .connect(postgres::NoTls)
            .unwrap_or_else(|e| panic!("connecting to {db}: {e}"))
    }

    /// Output of `pg_dump` of database `db`.
    pub fn pg_dump(&self, db: &str) -> Vec<u8> {
        let out = Command::new(format!("{}/pg_dump", self.bindir))
            .args(["-U", "postgres", "-h", &self.host, "-p", &self.port, db])
            .output()
            .expect("pg_dump runs");
        assert!(out.status.success(), "pg_dump failed:\n{}", String::from_utf8_lossy(&out.stderr));
        out.stdout
    }

    /// Runs a SQL script (e.g. a dump) in database `db`.
    pub fn restore(&self, db: &str, script: &[u8]) {
        self.run_with_input(db, "\\i /dev/stdin", Some(script));
    }

    /// Runs pgbench on database `db` with the custom script `script` and `args`
    /// (e.g. client count and duration); returns its report. A failed client fails.
    pub fn pgbench(&self, db: &str, script: &str, args: &[&str]) -> String {
        let dir = std::env::temp_dir().join(format!("pgcolumnar-pgbench-{}-{db}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("script.sql");
        std::fs::write(&file, script).unwrap();
        let out = Command::new(format!("{}/pgbench", self.bindir))
            .args(["-n", "-U", "postgres", "-h", &self.host, "-p", &self.port])
            .args(args)
            .arg("-f")
            .arg(&file)
            .arg(db)
            .output()
            .expect("pgbench runs");
        let _ = std::fs::remove_dir_all(&dir);
        let report = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(out.status.success(), "pgbench failed:\n{report}\n{}", String::from_utf8_lossy(&out.stderr));
        report
    }

    fn run_with_input(&self, db: &str, sql: &str, input: Option<&[u8]>) -> String {
        use std::io::Write;
        use std::process::Stdio;
        let mut child = Command::new(&self.psql)
            .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-U", "postgres"])
            .args(["-h", &self.host, "-p", &self.port, "-d", db, "-c", sql])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("psql runs");
        let mut stdin = child.stdin.take().unwrap();
        let data = input.unwrap_or_default().to_vec();
        let writer = std::thread::spawn(move || stdin.write_all(&data));
        let out = child.wait_with_output().expect("psql finishes");
        writer.join().unwrap().expect("psql reads its input");
        assert!(out.status.success(), "psql failed on {sql:?}:\n{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("psql prints UTF-8")
    }
}

pub struct Database<'a> {
    cluster: &'a Cluster,
    name: String,
    client: RefCell<postgres::Client>,
}

impl Database<'_> {
    /// Runs `sql` (one or more statements) and returns the rows of the last one, a line
    /// each, values separated by `|` (NULL as nothing), as `psql -A -t` prints them.
    /// Settings made by `sql` are reset afterwards, so each call starts as a new session.
    pub fn query(&self, sql: &str) -> String {
        self.try_query(sql).unwrap_or_else(|e| panic!("{sql:?} failed: {e}"))
    }

    /// `query`, or the error (`SQLSTATE: message`) if a statement fails.
    pub fn try_query(&self, sql: &str) -> Result<String, String> {
        let mut client = self.client.borrow_mut();
        let messages = client.simple_query(sql);
        client.batch_execute("RESET ALL").expect("RESET ALL");
        let messages = messages.map_err(|e| error_text(&e))?;
        let (mut last, mut current) = (Vec::new(), Vec::new());
        for m in messages {
            match m {
                postgres::SimpleQueryMessage::Row(row) => current
                    .push((0..row.len()).map(|i| row.get(i).unwrap_or("")).collect::<Vec<_>>().join("|")),
                postgres::SimpleQueryMessage::CommandComplete(_) => last = std::mem::take(&mut current),
                _ => {}
            }
        }
        let mut out = last.join("\n");
        if !out.is_empty() {
            out.push('\n');
        }
        Ok(out)
    }

    /// `COPY table FROM STDIN` with `data` in text format.
    pub fn copy_in(&self, table: &str, data: &[u8]) {
        use std::io::Write;
        let mut client = self.client.borrow_mut();
        let mut writer = client.copy_in(&format!("COPY {table} FROM STDIN")).expect("COPY starts");
        writer.write_all(data).expect("COPY data is sent");
        writer.finish().unwrap_or_else(|e| panic!("COPY {table} failed: {}", error_text(&e)));
    }

    /// EXPLAIN output of `query` with the given options, one plan line per line.
    pub fn explain(&self, options: &str, query: &str) -> String {
        self.query(&format!("EXPLAIN ({options}) {query}"))
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn cluster(&self) -> &Cluster {
        self.cluster
    }
}

/// The server's message (and detail) of a failed statement.
fn error_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!(
            "{}: {}{}",
            db.code().code(),
            db.message(),
            db.detail().map(|d| format!(" ({d})")).unwrap_or_default()
        ),
        None => e.to_string(),
    }
}

/// splitmix64: a tiny deterministic generator, so a failure reproduces exactly.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}
