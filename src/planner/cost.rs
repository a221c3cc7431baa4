//! Cost formulas for columnar plans. Pure: the planner hook gathers the inputs (from
//! metadata and PostgreSQL's cost GUCs) and these functions price the alternatives.

// The constants below are measured by `bench/calibrate.py` (its last output is
// bench/results/calibration.json), in PostgreSQL's cost units: a heap sequential scan's
// time over its estimated cost is the yardstick.

/// CPU cost of reading and decoding one value of a column stored as integers (integers,
/// dates, timestamps, numerics that fit 64-bit mantissas: bit-unpacked, and compared
/// still packed by a pushed test) in a ColumnarScan, in units of `cpu_operator_cost`
/// (measured: 0.01-0.17, a pushed test on packed integers costing about what the test
/// alone does; a column returned is unpacked, 3.7-4.4 values/ns bit-packed).
pub const DECODE_INTEGER: f64 = 0.2;

/// The same for a column of floats (calibrated: 0.70-0.77, random floats in ALP_rd).
pub const DECODE_FLOAT: f64 = 0.75;

/// The same for byte strings, per byte a value takes stored, beyond `DECODE_INTEGER`
/// (dictionary codes take a fraction of a byte; long text is decompressed), in units of
/// `cpu_operator_cost` (calibrated: 0.68, md5 text in zstd frames).
pub const DECODE_PER_STORED_BYTE: f64 = 0.7;

/// How a column's values are stored, which decides what decoding one costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredAs {
    Integers,
    Floats,
    ByteStrings,
}

/// CPU cost of decoding one value of a column stored `as`, whose values take
/// `stored_bytes` each on average, in units of `cpu_operator_cost`.
pub fn decode_per_value(stored: StoredAs, stored_bytes: f64) -> f64 {
    match stored {
        StoredAs::Integers => DECODE_INTEGER,
        StoredAs::Floats => DECODE_FLOAT,
        StoredAs::ByteStrings => DECODE_INTEGER + stored_bytes.max(0.0) * DECODE_PER_STORED_BYTE,
    }
}

/// The part of `decode_per_value` a later column pays for every value of a vector once
/// one of its rows is wanted: floats are decoded whole, and byte strings decompressed
/// whole; integers and dictionary codes are read where the rows lie (`late_decode_share`).
pub fn decoded_whole(stored: StoredAs, stored_bytes: f64) -> f64 {
    match stored {
        StoredAs::Integers => 0.0,
        StoredAs::Floats => DECODE_FLOAT,
        StoredAs::ByteStrings => stored_bytes.max(0.0) * DECODE_PER_STORED_BYTE,
    }
}

/// Per row read, what later columns costing `decode` per value (`decoded_whole` of it
/// `whole`) cost when a filter keeps `selectivity` of the rows.
fn later_columns(decode: f64, whole: f64, selectivity: f64) -> f64 {
    let whole = whole.clamp(0.0, decode.max(0.0));
    (decode - whole) * late_decode_share(selectivity) + whole * vectors_with_survivors(selectivity)
}

/// CPU cost of one pushed test on one value, in units of `cpu_operator_cost`
/// (calibrated: 0.44): a kernel's compare in a tight loop.
pub const FILTER_PER_VALUE: f64 = 0.45;

/// CPU cost of returning one row from a ColumnarScan (Datums, slot, `ExecScan`), in
/// units of `cpu_tuple_cost` (calibrated: 3.4).
pub const OUTPUT_PER_ROW: f64 = 3.4;

/// Rows per vector (the format's), for the share of vectors a filter leaves rows in.
pub const VECTOR_ROWS: f64 = 2048.0;

#[derive(Debug, Clone, Copy)]
pub struct CostParams {
    pub seq_page_cost: f64,
    pub random_page_cost: f64,
    pub cpu_tuple_cost: f64,
    pub cpu_operator_cost: f64,
}

#[derive(Debug, Clone, Copy)]
pub struct ScanInput {
    /// Pages of the relation (all columns).
    pub pages: f64,
    /// Stored bytes of all columns and of the columns the scan decodes.
    pub bytes_all: f64,
    pub bytes_read: f64,
    /// Rows stored and columns decoded.
    pub rows: f64,
    pub columns_read: usize,
    /// What decoding one value of each column read costs (`decode_per_value`), summed
    /// over the pushed filter's columns and over the others; and of the others', the
    /// part paid for whole vectors (`decoded_whole`).
    pub filter_decode: f64,
    pub other_decode: f64,
    pub other_whole: f64,
    /// Per-row cost of the quals the executor evaluates on the scan's output.
    pub qual_per_row: f64,
    /// The pushed filter: the columns it reads (of `columns_read`), its tests, and the
    /// share of rows it keeps (1 and 0 tests when nothing is pushed).
    pub filter_columns: usize,
    pub filter_tests: usize,
    pub filter_selectivity: f64,
    /// Share of the rows in row groups that the pushed filter's zone-map check at plan
    /// time does not rule out (1 when nothing is pushed): only those are read.
    pub zone_fraction: f64,
}

/// A ColumnarScan's cost, by component (EXPLAIN VERBOSE shows them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanCost {
    pub io: f64,
    pub decode: f64,
    pub filter: f64,
    pub output: f64,
    /// Rows the scan returns (after the pushed filter).
    pub rows_out: f64,
}

impl ScanCost {
    pub fn total(&self) -> f64 {
        self.io + self.decode + self.filter + self.output
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    pub startup: f64,
    pub total: f64,
}

/// Pages a scan reads: the projected columns' share of the relation.
pub fn pages_read(input: &ScanInput) -> f64 {
    if input.bytes_all <= 0.0 {
        return input.pages.min(1.0);
    }
    (input.pages * (input.bytes_read / input.bytes_all).min(1.0)).ceil()
}

/// CPU cost of decoding `rows` rows of columns whose values cost `per_row` together
/// (`decode_per_value` summed).
pub fn decode_cost(rows: f64, per_row: f64, p: &CostParams) -> f64 {
    rows * per_row * p.cpu_operator_cost
}

/// Opening a stored vector for fetches (reading it, checking its checksum, keeping it
/// in the backend's fetch cache), in units of `cpu_operator_cost` (calibrated: 206).
pub const OPEN_PER_VECTOR: f64 = 200.0;

/// Opening a vector of byte strings also decompresses and decodes it: per byte it
/// takes stored, in units of `cpu_operator_cost` (measured: 3.1 for a numeric column
/// compressed with zstd, 3.8 kB a vector, 37 us to open; a dictionary of short strings
/// costs less).
pub const OPEN_PER_STORED_BYTE: f64 = 3.0;

/// Per fetched row: finding its row group and vector, checking it is not deleted, and
/// building its tuple, in units of `cpu_tuple_cost` (calibrated: 11.8 for consecutive
/// rows).
pub const FETCH_PER_ROW: f64 = 12.0;

/// Per value a fetched row reads from its opened vectors, in units of `cpu_tuple_cost`:
/// scattered rows find their vectors out of the CPU's caches.
pub const FETCH_PER_VALUE: f64 = 2.0;

/// What opening one vector of a column costs for fetches, in units of
/// `cpu_operator_cost`: `byte_strings` for columns stored as byte strings (numeric,
/// text, ...), whose vectors take `stored_bytes` each.
pub fn open_cost(byte_strings: bool, stored_bytes: f64) -> f64 {
    OPEN_PER_VECTOR + if byte_strings { stored_bytes.max(0.0) * OPEN_PER_STORED_BYTE } else { 0.0 }
}

/// Stored bytes a fetch decompresses of a byte-string vector compressed in zstd frames:
/// a frame of `frames::FRAME_RAW` raw bytes, about half that stored for the text that
/// is framed (which zstd halves: hashes, identifiers).
pub const FRAMED_OPEN_BYTES: f64 = crate::storage::format::encoding::frames::FRAME_RAW as f64 / 2.0;

/// Per stored byte of a framed vector, checking its checksum where it lies.
pub const CHECK_PER_STORED_BYTE: f64 = 0.05;

/// `open_cost` of a byte-string column whose vectors take `stored_bytes` each, a share
/// `framed` of them in zstd frames: a fetch reads one frame of those where it lies.
pub fn framed_open_cost(stored_bytes: f64, framed: f64) -> f64 {
    let bytes = stored_bytes.max(0.0);
    let frame =
        OPEN_PER_VECTOR + bytes.min(FRAMED_OPEN_BYTES) * OPEN_PER_STORED_BYTE + bytes * CHECK_PER_STORED_BYTE;
    let f = framed.clamp(0.0, 1.0);
    f * frame + (1.0 - f) * open_cost(true, bytes)
}

/// Whether a numeric column's vectors open like integer ones: numerics whose values fit
/// 64-bit mantissas are stored as scaled integers (ScaledNumeric), and a fetch unpacks
/// the mantissas alone (measured: a cold open of an `l_extendedprice` vector costs what
/// one of `l_orderkey` does). Their vectors then take at most 8 bytes a value; more
/// means byte strings, priced by their size.
pub fn numeric_opens_as_integers(numeric: bool, stored_bytes_per_vector: f64) -> bool {
    numeric && stored_bytes_per_vector <= 8.0 * VECTOR_ROWS
}

/// What a column vector kept for fetches weighs, on average (bit-packed integers keep
/// their stored few kB, byte strings and decoded vectors 10-20 kB).
pub const CACHED_VECTOR_BYTES: f64 = 12288.0;

/// Vectors that `rows` fetches spread evenly over `vectors` vectors touch.
pub fn vectors_touched(rows: f64, vectors: f64) -> f64 {
    if vectors <= 0.0 {
        return 0.0;
    }
    vectors * (1.0 - (-rows / vectors).exp())
}

/// Vector opens for `rows` fetches of `columns` columns touching `touched` vectors,
/// with a cache of `cache` vectors: each once while they fit; beyond, a fetch misses
/// the cache as often as the vectors it needs overflow it.
pub fn fetch_decodes(rows: f64, columns: usize, touched: f64, cache: f64) -> f64 {
    let needed = touched * columns.max(1) as f64;
    if needed <= cache {
        return needed;
    }
    let miss = 1.0 - cache / needed;
    needed.max(rows * columns.max(1) as f64 * miss)
}

/// The columns a fetch reads: how many, and what opening one vector of each costs
/// together (`open_cost` summed).
#[derive(Debug, Clone, Copy)]
pub struct FetchColumns {
    pub count: usize,
    pub open_cost: f64,
}

/// Vectors that `loops` fetches of `rows` rows each touch among `vectors`, when the
/// table's order follows the index's by `correlation` (-1..1): as in core's index
/// costing, interpolated by its square between rows spread evenly over the vectors and
/// each loop's rows lying together.
pub fn vectors_touched_correlated(rows: f64, loops: f64, vectors: f64, correlation: f64) -> f64 {
    let spread = vectors_touched(rows * loops, vectors);
    // A loop with rows touches a vector at least; one without (a key no vector's zone
    // map holds) touches none.
    let per_loop = if rows > 0.0 { (rows / VECTOR_ROWS).ceil().max(1.0) } else { 0.0 };
    let together = (loops * per_loop).min(vectors);
    let c2 = (correlation * correlation).clamp(0.0, 1.0);
    c2 * together + (1.0 - c2) * spread
}

/// Cost per loop of fetching `rows` rows one by one (an index or bitmap scan) from a
/// columnar table, `loops` times (the inner side of a nested loop: the vectors opened
/// by one loop are in the cache for the next), reading `columns`, the rows lying in
/// `vectors` vectors (those the quals' zone-map check leaves) in an order that follows
/// the index's by `correlation`, with a cache of `cache` vectors. The vectors are priced
/// as not cached yet when the statement starts.
pub fn index_fetch_cost(
    rows: f64,
    loops: f64,
    columns: FetchColumns,
    vectors: f64,
    correlation: f64,
    cache: f64,
    p: &CostParams,
) -> f64 {
    let loops = loops.max(1.0);
    let all_rows = rows * loops;
    let count = columns.count.max(1);
    let touched = vectors_touched_correlated(rows, loops, vectors, correlation);
    let opens = fetch_decodes(all_rows, count, touched, cache);
    let per_open = columns.open_cost / count as f64;
    (opens * per_open * p.cpu_operator_cost
        + all_rows * (FETCH_PER_ROW + columns.count as f64 * FETCH_PER_VALUE) * p.cpu_tuple_cost)
        / loops
}

/// What building `rows` rows from columns costs beyond core's `cpu_tuple_cost` each (a
/// sequential scan of a columnar table through the table AM pays it too).
pub fn extra_output_cost(rows: f64, p: &CostParams) -> f64 {
    rows * (OUTPUT_PER_ROW - 1.0) * p.cpu_tuple_cost
}

/// A vector's rows a later column is decoded for only where they lie when at most this
/// share of them is left (the reader's partial decode, `Reader::PARTIAL_SHARE`:
/// frame-of-reference integers, scaled numerics' mantissas, dictionary codes read at
/// the selected positions).
pub const PARTIAL_DECODE_SHARE: f64 = 1.0 / 4.0;

/// What reading one value where it lies costs, relative to decoding it among all the
/// vector's values (a load and shift per row instead of a streamed unpack).
pub const PARTIAL_READ_COST: f64 = 3.0;

/// The share of a later column's values whose decoding a filter keeping `selectivity`
/// of the rows (spread evenly) costs: none in vectors with no row left, the rows left
/// alone (at `PARTIAL_READ_COST` each) in vectors with few, all of them otherwise.
pub fn late_decode_share(selectivity: f64) -> f64 {
    let s = selectivity.clamp(0.0, 1.0);
    let whole = vectors_with_survivors(s);
    if s <= PARTIAL_DECODE_SHARE {
        whole.min(PARTIAL_READ_COST * s)
    } else {
        whole
    }
}

/// The share of vectors in which a filter keeping `selectivity` of the rows (spread
/// evenly) leaves at least one: only those have their other columns decoded.
pub fn vectors_with_survivors(selectivity: f64) -> f64 {
    let s = selectivity.clamp(0.0, 1.0);
    1.0 - (1.0 - s).powf(VECTOR_ROWS)
}

/// How many shares a parallel plan's CPU work is split into: PostgreSQL's divisor
/// (`get_parallel_divisor`), where a leader also running the plan contributes less the
/// more workers it has to serve.
pub fn parallel_divisor(workers: i32, leader_participates: bool) -> f64 {
    let mut divisor = workers as f64;
    if leader_participates {
        let leader = 1.0 - 0.3 * workers as f64;
        if leader > 0.0 {
            divisor += leader;
        }
    }
    divisor
}

/// What one parallel worker of a ColumnarScan or ColumnarAgg costs before it has done
/// any work, beyond core's `parallel_setup_cost` for the Gather, in units of
/// `parallel_setup_cost`: starting the process, and filling its empty caches (catalogs,
/// the table's row-group metadata) for the row groups it claims, which a warm serial
/// plan in a long-lived backend does not pay. `bench/calibrate.py` measures a worker's
/// start-up on a 2M-row fold ("WORKER_STARTUP": 1.6 on this machine, idle); on the
/// planner choice suite's 1M-row tables that value still chose parallel folds twice as
/// slow as serial ones (their workers pay more than a large fold's do), and 4 chose the
/// serial fold there and parallel where it is faster. On the next machine (2 vCPUs,
/// AMD EPYC) calibrate.py measured 1.6-3.2 against heap's yardstick, but a worker there
/// costs the leader ~10 ms (launched ~3 ms after the query starts; the leader waits ~8 ms
/// for its exit, which unmaps the pages it touched), about 10,000 units of the CPU
/// constants above, which price this machine's scans up to twice their time: with 4, a
/// 10M-row fold of one day (50 ms serial) ran parallel in 67-71 ms. In units of the
/// setting, so that `parallel_setup_cost = 0` still makes parallel plans as cheap to
/// start as core's.
pub const WORKER_STARTUP: f64 = 8.0;

/// The share of a parallel plan's rows each participant takes: core's divisor, but never
/// more processes than the machine has cores to run them at once (a leader and two
/// workers on two cores run at two cores' speed, not 2.4).
pub fn parallel_share(workers: i32, leader_participates: bool, cores: usize) -> f64 {
    parallel_divisor(workers, leader_participates).min(cores.max(1) as f64)
}

/// Workers worth starting for a parallel columnar plan on `cores` cores: core's count
/// for the table (`workers`), but no more processes than cores when the leader takes a
/// share too. A further worker only adds its start-up and takes turns on cores already
/// busy: on 2 cores, a leader and two workers folded q6 of the 10M-row TSBS table
/// 1.51-1.60x faster than serial, a leader and one worker 1.70x (q8 1.61-1.64x against
/// 1.70-1.76x, q5 in 100 ms against 93).
pub fn useful_workers(workers: i32, leader_participates: bool, cores: usize) -> i32 {
    let room = i32::try_from(cores).unwrap_or(i32::MAX) - i32::from(leader_participates);
    workers.min(room.max(1))
}

/// How much of each further core a parallel fold or scan gets: 1 if the participants ran
/// as fast side by side as one alone. They share memory bandwidth and caches, and on a
/// virtual machine often a host's busy cores. `bench/calibrate.py` measures it from a
/// small and a large fold, serial and parallel; on the benchmark machine (2 vCPUs) it
/// measured 0.39 to 1.0 from run to run, and a leader with two workers folding 10M rows
/// ran 1.0-1.08x faster than serial, i.e. 0-0.08: the median of those, 0.4, is used.
/// With 1.0 (as core assumes), parallel folds no faster than serial ones were chosen
/// over them whenever the workers' start-up was the only price. The default of
/// `pgcolumnar.parallel_core_scaling`, which sets it per machine.
pub const CORE_SCALING: f64 = 0.4;

/// How many times faster than serial a parallel plan whose participants take `share`
/// of the rows each (`parallel_share`) runs its CPU work, each further core adding
/// `scaling` of one (`CORE_SCALING`).
pub fn parallel_speedup(share: f64, scaling: f64) -> f64 {
    1.0 + (share - 1.0).max(0.0) * scaling.clamp(0.0, 1.0)
}

/// The cores this machine has (what the OS lets this process use), asked once.
pub fn machine_cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The catalog lookups a columnar scan makes before its first row: its row groups (with
/// their zone maps and chunk locations) and its deleted rows' marks.
pub const METADATA_LOOKUPS: f64 = 2.0;

impl CostParams {
    /// What reading a columnar table's metadata costs a scan (ColumnarScan, ColumnarAgg,
    /// core's Seq Scan through the table AM) before its first row, however few rows it
    /// then reads: each lookup priced as core prices an index descent
    /// (`random_page_cost`). Without it a scan whose row groups zone maps all rule out
    /// cost nothing, and beat an index that finds the same nothing in fewer steps.
    pub fn metadata_startup(&self) -> f64 {
        METADATA_LOOKUPS * self.random_page_cost
    }
}

/// The start-up cost a parallel plan of `workers` workers adds to its serial form.
pub fn parallel_startup(workers: i32, parallel_setup_cost: f64) -> f64 {
    WORKER_STARTUP * parallel_setup_cost * workers.max(0) as f64
}

/// A scan that reads and decodes only `columns_read` columns, evaluates the pushed
/// filter on the filter's columns, decodes the others only in vectors with rows left
/// (late materialization), and returns the rows that pass.
pub fn columnar_scan_components(input: &ScanInput, p: &CostParams) -> ScanCost {
    let zone = input.zone_fraction.clamp(0.0, 1.0);
    let io = (pages_read(input) * zone).ceil() * p.seq_page_cost;
    let scanned = input.rows * zone;
    let pushed = input.filter_tests > 0;
    let selectivity = if pushed { input.filter_selectivity.clamp(0.0, 1.0) } else { 1.0 };
    // The selectivity is over the whole table; among the rows read it is higher.
    let selectivity_read = if zone > 0.0 { (selectivity / zone).min(1.0) } else { 0.0 };
    let per_row =
        input.filter_decode + later_columns(input.other_decode, input.other_whole, selectivity_read);
    let decode = decode_cost(scanned, per_row, p);
    let filter = scanned * input.filter_tests as f64 * FILTER_PER_VALUE * p.cpu_operator_cost;
    let rows_out = (input.rows * selectivity).min(scanned);
    let output = rows_out * (OUTPUT_PER_ROW * p.cpu_tuple_cost + input.qual_per_row);
    ScanCost { io, decode, filter, output, rows_out }
}

/// CPU cost of probing one value's key in a join filter's key set, in units of
/// `cpu_operator_cost`: a bitmap or hash probe, about twice a pushed compare (not
/// calibrated separately).
pub const JOIN_PROBE_PER_VALUE: f64 = 1.0;

/// A ColumnarScan's cost (the scan `input`) with a join filter that keeps `fraction`
/// of the rows (the semi-join selectivity of the key clause against the hash join's
/// inner side), in the order the reader runs it: each row read has its key column
/// decoded and probed; the pushed filter then decodes its columns only in vectors with
/// a row left and tests only the rows left; the other columns are decoded only in
/// vectors with a row left after both. `columns_read` counts the key column, which is
/// taken as none of the pushed filter's, and as costing what the others do on average.
pub fn join_filtered_scan(input: &ScanInput, fraction: f64, p: &CostParams) -> ScanCost {
    let base = columnar_scan_components(input, p);
    let f = fraction.clamp(0.0, 1.0);
    let zone = input.zone_fraction.clamp(0.0, 1.0);
    let scanned = input.rows * zone;
    let pushed = input.filter_tests > 0;
    let selectivity = if pushed { input.filter_selectivity.clamp(0.0, 1.0) } else { 1.0 };
    let selectivity_read = if zone > 0.0 { (selectivity / zone).min(1.0) } else { 0.0 };
    let others = input.columns_read.saturating_sub(input.filter_columns).max(1);
    let key = input.other_decode / others as f64;
    let rest = input.other_decode - key;
    let rest_whole =
        if input.other_decode > 0.0 { input.other_whole * rest / input.other_decode } else { 0.0 };
    let per_row = key
        + input.filter_decode * late_decode_share(f)
        + later_columns(rest, rest_whole, f * selectivity_read);
    let decode = decode_cost(scanned, per_row, p);
    let filter = scanned * JOIN_PROBE_PER_VALUE * p.cpu_operator_cost
        + scanned * f * input.filter_tests as f64 * FILTER_PER_VALUE * p.cpu_operator_cost;
    ScanCost { io: base.io, decode, filter, output: base.output * f, rows_out: base.rows_out * f }
}

pub fn columnar_scan(input: &ScanInput, p: &CostParams) -> Cost {
    Cost { startup: 0.0, total: columnar_scan_components(input, p).total() }
}

/// CPU cost of folding one value into one aggregate's state (ColumnarAgg), in units of
/// `cpu_operator_cost` (calibrated: 0.51): a load and an add in a loop, no Datum.
pub const FOLD_PER_VALUE: f64 = 0.5;

/// CPU cost of finding one row's group, per key column, in units of
/// `cpu_operator_cost` (calibrated: 1.11, a text key): a key number (dictionary entries
/// once per vector) and, with several keys, one probe of the group table.
pub const GROUP_PER_KEY: f64 = 1.1;

/// What a ColumnarAgg weighs: its scan, and the fold over the rows the scan keeps.
#[derive(Debug, Clone, Copy)]
pub struct AggInput {
    pub scan: ScanInput,
    /// Aggregates folded (count(*) included) and group keys (0 without GROUP BY).
    pub aggs: usize,
    pub keys: usize,
    /// Groups the query makes, and the cost per group of the HAVING qual.
    pub groups: f64,
    pub having_per_group: f64,
}

/// A ColumnarAgg's cost, by component (EXPLAIN VERBOSE shows them).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AggCost {
    pub io: f64,
    pub decode: f64,
    pub filter: f64,
    pub fold: f64,
    pub group: f64,
    pub output: f64,
}

impl AggCost {
    pub fn total(&self) -> f64 {
        self.io + self.decode + self.filter + self.fold + self.group + self.output
    }

    /// The CPU part, which parallel workers share.
    pub fn cpu(&self) -> f64 {
        self.decode + self.filter + self.fold + self.group
    }
}

/// A scan that folds aggregates over the rows its pushed filter keeps: the scan's read,
/// decode and filter, no rows returned, a fold per value per aggregate, a group lookup
/// per row per key, and one output row per group.
pub fn columnar_agg_components(input: &AggInput, p: &CostParams) -> AggCost {
    let scan = columnar_scan_components(&input.scan, p);
    let rows = scan.rows_out;
    AggCost {
        io: scan.io,
        decode: scan.decode,
        filter: scan.filter,
        fold: rows * input.aggs as f64 * FOLD_PER_VALUE * p.cpu_operator_cost,
        group: rows * input.keys as f64 * GROUP_PER_KEY * p.cpu_operator_cost,
        output: input.groups * (p.cpu_tuple_cost + input.having_per_group),
    }
}

/// Per stored key value a LastPoint decodes to learn which keys a vector holds, in units
/// of `cpu_operator_cost` (estimated, not calibrated: dictionary codes are unpacked, not
/// made into Datums, and the dictionary is looked up once per entry).
pub const KEY_PER_VALUE: f64 = 0.5;

/// Per value of the ordering column a LastPoint ranks, what decoding it costs, in units
/// of `cpu_operator_cost`: the flat decode cost every column had before decoding was
/// priced by how a column is stored. Not measured again since: LastPoint's plan choices
/// (bench/plan_choice.py) were checked with it.
pub const RANK_DECODE_PER_VALUE: f64 = 2.0;

/// What a LastPoint over zone maps reads and ranks.
#[derive(Debug, Clone, Copy)]
pub struct LastPointInput {
    /// The relation's pages and stored bytes, and those of the key and ordering columns.
    pub pages: f64,
    pub bytes_all: f64,
    pub key_bytes: f64,
    pub time_bytes: f64,
    /// Rows stored, rows whose ordering column is ranked (`expected_rows_ranked`), and
    /// the pushed filter's tests on them.
    pub rows: f64,
    pub rows_ranked: f64,
    pub filter_tests: usize,
    /// Winners fetched at the end, and the columns each reads.
    pub winners: f64,
    pub fetch_columns: usize,
}

/// A LastPoint over zone maps: every vector's keys, the ranked vectors' ordering
/// column (and filter), then one fetch per winner.
pub fn last_point_zones(i: &LastPointInput, p: &CostParams) -> f64 {
    let share = if i.rows > 0.0 { (i.rows_ranked / i.rows).min(1.0) } else { 0.0 };
    let bytes = i.key_bytes + i.time_bytes * share;
    let io = if i.bytes_all > 0.0 { (i.pages * bytes / i.bytes_all).ceil() } else { 0.0 } * p.seq_page_cost;
    let keys = i.rows * KEY_PER_VALUE * p.cpu_operator_cost;
    let rank = i.rows_ranked
        * (RANK_DECODE_PER_VALUE + FOLD_PER_VALUE + i.filter_tests as f64 * FILTER_PER_VALUE)
        * p.cpu_operator_cost;
    let fetch = i.winners
        * ((FETCH_PER_ROW + i.fetch_columns as f64 * FETCH_PER_VALUE) * p.cpu_tuple_cost
            + OPEN_PER_VECTOR * p.cpu_operator_cost);
    io + keys + rank + fetch
}

/// A skip scan: `descents` btree descents into an index of `index_tuples` entries,
/// each examining `rows_per_descent` rows (fetching each from the table at
/// `random_page_cost`, and testing it with quals costing `qual_per_row`).
pub fn skip_scan(
    descents: f64,
    rows_per_descent: f64,
    index_tuples: f64,
    qual_per_row: f64,
    random_page_cost: f64,
    cpu_index_tuple_cost: f64,
    p: &CostParams,
) -> f64 {
    let descend = random_page_cost + (index_tuples.max(2.0)).log2() * p.cpu_operator_cost;
    let per_row = random_page_cost + cpu_index_tuple_cost + p.cpu_tuple_cost + qual_per_row;
    descents * (descend + rows_per_descent.max(1.0) * per_row)
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: CostParams = CostParams {
        seq_page_cost: 1.0,
        random_page_cost: 4.0,
        cpu_tuple_cost: 0.01,
        cpu_operator_cost: 0.0025,
    };

    fn input(bytes_read: f64, columns_read: usize) -> ScanInput {
        ScanInput {
            pages: 1000.0,
            bytes_all: 8.0e6,
            bytes_read,
            rows: 1.0e6,
            columns_read,
            filter_decode: 0.0,
            other_decode: columns_read as f64 * DECODE_FLOAT,
            other_whole: 0.0,
            qual_per_row: 0.0,
            filter_columns: 0,
            filter_tests: 0,
            filter_selectivity: 1.0,
            zone_fraction: 1.0,
        }
    }

    /// `scan` with a pushed filter on `columns` of its columns (floats, as all of them).
    fn filtered(columns: usize, tests: usize, selectivity: f64, scan: ScanInput) -> ScanInput {
        ScanInput {
            filter_columns: columns,
            filter_tests: tests,
            filter_selectivity: selectivity,
            filter_decode: columns as f64 * DECODE_FLOAT,
            other_decode: scan.columns_read.saturating_sub(columns) as f64 * DECODE_FLOAT,
            ..scan
        }
    }

    #[test]
    fn decoding_costs_by_how_a_column_is_stored() {
        let int = decode_per_value(StoredAs::Integers, 2.0);
        let float = decode_per_value(StoredAs::Floats, 7.0);
        // Dictionary codes take a fraction of a byte: about an integer's cost.
        let codes = decode_per_value(StoredAs::ByteStrings, 0.06);
        // md5 text in zstd frames: 17.5 bytes a value, decompressed.
        let hashes = decode_per_value(StoredAs::ByteStrings, 17.5);
        assert!(int < float && codes < float && codes < 1.5 * int);
        assert!(hashes > 10.0 * float, "{hashes}");
        assert_eq!(decode_per_value(StoredAs::ByteStrings, -1.0), DECODE_INTEGER);
    }

    #[test]
    fn long_text_is_decompressed_whole_where_a_row_is_left() {
        // 36 rows of 260,000 left: a quarter of the vectors keep one, and their text is
        // decompressed whole; their integers are read where the rows lie.
        let text = decode_per_value(StoredAs::ByteStrings, 35.0);
        let whole = decoded_whole(StoredAs::ByteStrings, 35.0);
        assert!(whole > 0.9 * text && decoded_whole(StoredAs::Integers, 8.0) == 0.0);
        let base = filtered(1, 1, 1.4e-4, ScanInput { rows: 2.6e5, ..input(2.0e7, 2) });
        let texts =
            columnar_scan_components(&ScanInput { other_decode: text, other_whole: whole, ..base }, &P);
        let ints = columnar_scan_components(&ScanInput { other_decode: text, other_whole: 0.0, ..base }, &P);
        let survivors = vectors_with_survivors(1.4e-4);
        assert!(texts.decode >= 2.6e5 * survivors * whole * P.cpu_operator_cost, "{}", texts.decode);
        let filter = decode_cost(2.6e5, base.filter_decode, &P);
        assert!(ints.decode - filter < (texts.decode - filter) / 20.0, "{} {}", ints.decode, texts.decode);
    }

    #[test]
    fn rare_rows_decode_later_columns_where_they_lie() {
        // Every vector keeps a row at 1%, but only 3% of a later column's cost is paid.
        assert!((late_decode_share(0.01) - 0.03).abs() < 1e-9);
        // Past a quarter of the rows a vector is decoded whole.
        assert_eq!(late_decode_share(0.5), 1.0);
        assert_eq!(late_decode_share(0.0), 0.0);
        assert!(late_decode_share(1.0e-6) <= vectors_with_survivors(1.0e-6));
    }

    #[test]
    fn row_groups_pruned_at_plan_time_are_not_paid_for() {
        let pushed = filtered(1, 1, 0.01, input(2.0e6, 2));
        let pruned = ScanInput { zone_fraction: 0.02, ..pushed };
        let a = columnar_scan_components(&pushed, &P);
        let b = columnar_scan_components(&pruned, &P);
        assert!(b.io <= a.io * 0.03 && b.filter < a.filter * 0.03);
        // The rows read decode at most both columns each.
        assert!(
            b.decode <= decode_cost(1.0e6 * 0.02, 2.0 * DECODE_FLOAT, &P) * 1.0001
                && b.decode < a.decode * 0.05
        );
        assert_eq!(a.rows_out, b.rows_out);
    }

    #[test]
    fn a_pushed_filter_costs_less_than_the_executor_qual() {
        let mut executor = input(2.0e6, 2);
        executor.qual_per_row = 2.0 * P.cpu_operator_cost;
        let pushed = filtered(1, 2, 0.01, input(2.0e6, 2));
        let a = columnar_scan_components(&executor, &P);
        let b = columnar_scan_components(&pushed, &P);
        assert!(b.total() < a.total());
        assert!((b.rows_out - 1.0e4).abs() < 1e-6);
        // A filter that keeps everything costs about what the executor's qual would not.
        let all = ScanInput { filter_selectivity: 1.0, ..pushed };
        assert!(columnar_scan_components(&all, &P).total() < a.total());
    }

    #[test]
    fn parallel_share_is_capped_by_cores() {
        assert!((parallel_share(2, true, 8) - 2.4).abs() < 1e-9);
        assert_eq!(parallel_share(2, true, 2), 2.0);
        assert_eq!(parallel_share(4, false, 1), 1.0);
        assert_eq!(parallel_share(2, true, 0), 1.0);
        assert_eq!(parallel_startup(2, 1000.0), 2000.0 * WORKER_STARTUP);
        assert_eq!(parallel_startup(2, 0.0), 0.0);
        assert_eq!(parallel_startup(-1, 1000.0), 0.0);
    }

    #[test]
    fn workers_leave_the_leader_a_core() {
        assert_eq!(useful_workers(2, true, 2), 1);
        assert_eq!(useful_workers(2, false, 2), 2);
        assert_eq!(useful_workers(2, true, 8), 2);
        assert_eq!(useful_workers(4, true, 4), 3);
        // One core: a worker still may be planned (and then priced as no faster).
        assert_eq!(useful_workers(2, true, 1), 1);
        assert_eq!(useful_workers(0, true, 8), 0);
    }

    #[test]
    fn parallel_speedup_scales_the_further_cores() {
        let s = CORE_SCALING;
        assert_eq!(parallel_speedup(1.0, s), 1.0);
        assert_eq!(parallel_speedup(0.5, s), 1.0);
        assert!((parallel_speedup(2.0, s) - (1.0 + CORE_SCALING)).abs() < 1e-12);
        assert!(parallel_speedup(2.4, s) > parallel_speedup(2.0, s));
        assert!(parallel_speedup(2.0, s) < 2.0);
        // 1: every core at full speed, as core's divisor assumes; out-of-range values clamp.
        assert_eq!(parallel_speedup(2.0, 1.0), 2.0);
        assert_eq!(parallel_speedup(2.0, 7.0), 2.0);
        assert_eq!(parallel_speedup(2.0, -1.0), 1.0);
    }

    #[test]
    fn parallel_divisor_matches_postgres() {
        assert!((parallel_divisor(2, true) - 2.4).abs() < 1e-9);
        assert!((parallel_divisor(4, true) - 4.0).abs() < 1e-9);
        assert_eq!(parallel_divisor(2, false), 2.0);
    }

    #[test]
    fn late_materialization_needs_selective_filters() {
        assert!(vectors_with_survivors(1.0) == 1.0);
        assert!(vectors_with_survivors(0.01) > 0.99);
        assert!(vectors_with_survivors(1.0e-6) < 0.01);
        assert_eq!(vectors_with_survivors(0.0), 0.0);
    }

    #[test]
    fn io_scales_with_projected_bytes() {
        assert_eq!(pages_read(&input(8.0e6, 12)), 1000.0);
        assert_eq!(pages_read(&input(1.0e6, 1)), 125.0);
        assert_eq!(pages_read(&ScanInput { bytes_all: 0.0, pages: 1.0, ..input(0.0, 0) }), 1.0);
    }

    #[test]
    fn scaled_numerics_open_as_integers_and_wide_ones_as_byte_strings() {
        assert!(numeric_opens_as_integers(true, 3.0 * VECTOR_ROWS));
        assert!(!numeric_opens_as_integers(true, 20.0 * VECTOR_ROWS));
        assert!(!numeric_opens_as_integers(false, 3.0 * VECTOR_ROWS));
    }

    #[test]
    fn index_fetches_pay_for_the_vectors_they_touch() {
        let ints = FetchColumns { count: 3, open_cost: 3.0 * open_cost(false, 4096.0) };
        // One fetch opens one vector per column.
        let one = index_fetch_cost(1.0, 1.0, ints, 1000.0, 0.0, 1024.0, &P);
        let expected = 3.0 * OPEN_PER_VECTOR * 0.0025 + (FETCH_PER_ROW + 3.0 * FETCH_PER_VALUE) * 0.01;
        assert!((one - expected).abs() < 0.01 * expected);
        // Byte strings cost more to open.
        let text = FetchColumns { count: 3, open_cost: 3.0 * open_cost(true, 4096.0) };
        // Hashes of 36 bytes, 37 KB a vector: a frame of them costs a fifth of the whole.
        assert_eq!(framed_open_cost(37_000.0, 0.0), open_cost(true, 37_000.0));
        assert!(framed_open_cost(37_000.0, 1.0) < open_cost(true, 37_000.0) / 5.0);
        assert!(framed_open_cost(37_000.0, 0.5) < framed_open_cost(37_000.0, 0.25));
        assert!(index_fetch_cost(1.0, 1.0, text, 1000.0, 0.0, 1024.0, &P) > 10.0 * one);
        // Many fetches into few vectors share their opens.
        assert!(
            index_fetch_cost(1000.0, 1.0, text, 10.0, 0.0, 1024.0, &P)
                < 2.0 * index_fetch_cost(100.0, 1.0, text, 10.0, 0.0, 1024.0, &P)
        );
        assert!(vectors_touched(1.0e6, 100.0) <= 100.0);
        // So do the loops of a nested loop: 1,000 loops of 10 rows cost a loop less than
        // 10 rows alone.
        let alone = index_fetch_cost(10.0, 1.0, text, 488.0, 0.0, 1.0e5, &P);
        assert!(index_fetch_cost(10.0, 1000.0, text, 488.0, 0.0, 1.0e5, &P) < alone / 5.0);
        // Fetching a large share of a table through an index costs more than scanning it.
        let scan = columnar_scan(&input(8.0e6, 12), &P);
        let wide = FetchColumns { count: 12, open_cost: 12.0 * open_cost(true, 4096.0) };
        assert!(index_fetch_cost(1.0e5, 1.0, wide, 488.0, 0.0, 1024.0, &P) > scan.total);
        // Rows in the index's order lie together: far fewer vectors to open.
        let scattered = index_fetch_cost(20_000.0, 1.0, text, 2930.0, 0.0, 1.0e5, &P);
        let ordered = index_fetch_cost(20_000.0, 1.0, text, 2930.0, 1.0, 1.0e5, &P);
        assert!(ordered < scattered / 20.0);
        assert_eq!(vectors_touched_correlated(20_000.0, 1.0, 2930.0, -1.0), 10.0);
        // A handful of rows stays cheap.
        assert!(index_fetch_cost(10.0, 1.0, ints, 488.0, 0.0, 1024.0, &P) < scan.total / 100.0);
        // No row to fetch (zone maps rule the key out): no vector to open, in any order.
        for correlation in [-1.0, 0.0, 1.0] {
            assert_eq!(vectors_touched_correlated(0.0, 1.0, 2930.0, correlation), 0.0);
            assert_eq!(index_fetch_cost(0.0, 1.0, wide, 488.0, correlation, 1024.0, &P), 0.0);
        }
    }

    #[test]
    fn metadata_is_read_before_the_first_row() {
        // Two catalog lookups, priced as index descents.
        assert_eq!(P.metadata_startup(), 8.0);
        assert_eq!(CostParams { random_page_cost: 1.1, ..P }.metadata_startup(), 2.2);
    }

    #[test]
    fn fetches_that_overflow_the_cache_decode_again() {
        // 100 vectors x 3 columns fit a cache of 1024: each is decoded once.
        assert_eq!(fetch_decodes(10_000.0, 3, 100.0, 1024.0), 300.0);
        // 5,000 vectors x 3 columns do not: most fetches decode their vectors again.
        let d = fetch_decodes(1.0e7, 3, 5000.0, 1024.0);
        assert!(d > 0.9 * 3.0e7 * (1.0 - 1024.0 / 15000.0) && d <= 3.0e7);
    }

    #[test]
    fn folding_costs_less_than_returning_rows() {
        let scan = input(1e6, 2);
        let agg = AggInput { scan, aggs: 2, keys: 0, groups: 1.0, having_per_group: 0.0 };
        let folded = columnar_agg_components(&agg, &P);
        let returned = columnar_scan_components(&scan, &P);
        assert!(folded.total() < returned.total());
        let grouped = columnar_agg_components(&AggInput { keys: 2, groups: 1e4, ..agg }, &P);
        assert!(grouped.total() > folded.total());
        assert_eq!(grouped.io, folded.io);
    }

    #[test]
    fn fewer_columns_cost_less() {
        let one = columnar_scan(&input(1.0e6, 1), &P);
        let all = columnar_scan(&input(8.0e6, 12), &P);
        assert!(one.total < all.total);
        // Full projection: 1000 pages + 12 values/row decode + the output per row.
        let expected = 1000.0 + 1.0e6 * 12.0 * DECODE_FLOAT * 0.0025 + 1.0e6 * OUTPUT_PER_ROW * 0.01;
        assert!((all.total - expected).abs() < 1e-6);
    }

    #[test]
    fn a_join_filter_saves_the_output_of_the_rows_it_removes() {
        let p = P;
        let scan = ScanInput { rows: 6e6, ..input(4.0e7, 4) };
        let c = columnar_scan_components(&scan, &p);
        let all = join_filtered_scan(&scan, 1.0, &p);
        assert!(all.total() > c.total(), "keeping every row only adds the probes");
        assert_eq!(all.rows_out, 6e6);
        let few = join_filtered_scan(&scan, 0.05, &p);
        assert!((few.output - 0.05 * c.output).abs() < 1e-9);
        assert!((few.rows_out - 3e5).abs() < 1e-6);
        assert_eq!(few.io, c.io, "every vector's key column is still read");
        assert!(few.decode <= c.decode);
        // Rarely kept rows leave most vectors empty: their other columns are not decoded.
        let rare = join_filtered_scan(&scan, 1e-6, &p);
        assert!(rare.decode < 0.3 * c.decode, "{}", rare.decode);
        assert!((rare.filter - 6e6 * JOIN_PROBE_PER_VALUE * 0.0025).abs() < 1e-6);
    }

    #[test]
    fn a_join_filter_spares_the_pushed_filter_the_rows_it_removes() {
        // TPC-H q19: 6 columns of lineitem, a pushed filter of 9 tests on 3 of them
        // keeping 2%, and 485 part keys keeping 0.24% of the rows. Every vector keeps a
        // row of the keys, so the filter's columns are still decoded, but the filter runs
        // on the rows left, and the two output columns are decoded where a row passes both.
        let p = P;
        let scan = filtered(3, 9, 0.0186, ScanInput { rows: 6e6, ..input(5.6e7, 6) });
        let c = columnar_scan_components(&scan, &p);
        let keyed = join_filtered_scan(&scan, 0.0024, &p);
        assert!(keyed.filter < 0.3 * c.filter, "{} {}", keyed.filter, c.filter);
        assert!(keyed.decode < 0.75 * c.decode, "{} {}", keyed.decode, c.decode);
        assert!(keyed.total() < 0.7 * c.total());
    }

    #[test]
    fn a_skip_scan_costs_by_descents_and_zones_by_rows_ranked() {
        let p = P;
        let few = skip_scan(400.0, 1.0, 1e7, 0.0, 4.0, 0.005, &p);
        let many = skip_scan(40_000.0, 1.0, 1e7, 0.0, 4.0, 0.005, &p);
        assert!((many / few - 100.0).abs() < 1e-9);
        let input = LastPointInput {
            pages: 10_000.0,
            bytes_all: 8e7,
            key_bytes: 1e7,
            time_bytes: 1e7,
            rows: 1e7,
            rows_ranked: 1e5,
            filter_tests: 0,
            winners: 400.0,
            fetch_columns: 3,
        };
        let ordered = last_point_zones(&input, &p);
        let shuffled = last_point_zones(&LastPointInput { rows_ranked: 1e7, ..input }, &p);
        assert!(shuffled > 5.0 * ordered, "{ordered} {shuffled}");
    }
}
