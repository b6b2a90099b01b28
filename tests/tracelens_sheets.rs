//! Every TraceLens sheet beside a corpus trace against ours, cell by cell:
//! `ops_summary.csv` (all columns), `ops_summary_by_category.csv`,
//! `kernel_summary.csv`, `ops_unique_args.csv` and
//! `short_kernels_summary.csv`. A cell may differ only as one of the
//! documented divergences below (docs/TRACELENS.md, "What the tests
//! check"), each an explicit entry that some trace must still need.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use crate::corpus::{csv_report, traces_with_oracle};
use crate::util::{Csv, corpus_dir, relative_difference};

/// Numbers agree to this relative difference: TraceLens sums with Kahan
/// and pairwise sums and goes through ms, we sum in row order, so the
/// last one or two digits differ (docs/TRACELENS.md, "Sums, statistics and
/// sorting").
const TOLERANCE: f64 = 1e-9;

/// The documented divergences, each a reason a cell may differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Divergence {
    /// An op's category, by our name lists ("Categories"): the op, its
    /// TraceLens category and ours are in [`CATEGORY_MOVES`].
    Category,
    /// `ops_summary_by_category.csv` rows: TraceLens's with the moved ops'
    /// counts and times carried to their new category.
    CategoryTotals,
    /// Exactly tied rows in another order (numpy's unstable sort).
    TiedOrder,
    /// `kernel_details_summary` and `trunc_kernel_details`: `np.float64(x)`
    /// for `x`, entries in another order, a standard deviation with n − 1,
    /// rounding half away from zero.
    KernelDetailsFormat,
    /// TraceLens pairs an op's kernels by position in the earliest
    /// invocation, naming them after it; we keep each kernel name apart.
    KernelPairing,
    /// A GPU-only trace's `short_kernels_summary.csv` keeps the four op
    /// columns, empty; an empty summary is its header, not a lone newline.
    ShortKernelColumns,
}

/// Ops whose category is ours by design: (op, TraceLens's, ours).
const CATEGORY_MOVES: &[(&str, &str, &str)] = &[
    ("aten::_flash_attention_forward", "other", "SDPA_fwd"),
    ("aten::_softmax", "other", "softmax"),
    ("aten::cat", "other", "elementwise"),
    ("aten::arange", "other", "elementwise"),
];

/// The sheets compared, each in every trace that has it.
const SHEETS: &[&str] = &[
    "ops_summary.csv",
    "ops_summary_by_category.csv",
    "kernel_summary.csv",
    "ops_unique_args.csv",
    "short_kernels_summary.csv",
];

fn moved(op: &str, theirs: &str, ours: &str) -> bool {
    CATEGORY_MOVES.contains(&(op, theirs, ours))
}

/// Cells that agree: equal text, or numbers within [`TOLERANCE`].
fn same_cell(ours: &str, theirs: &str) -> bool {
    ours == theirs
        || matches!(
            (ours.parse::<f64>(), theirs.parse::<f64>()),
            (Ok(a), Ok(b)) if relative_difference(a, b) <= TOLERANCE
        )
}

/// Where one trace's sheets are compared, and what was needed.
struct Comparison<'a> {
    trace: &'a Path,
    used: &'a mut BTreeSet<Divergence>,
    moves_used: &'a mut BTreeSet<(String, String, String)>,
    cells: &'a mut usize,
}

impl Comparison<'_> {
    fn allow(&mut self, divergence: Divergence) {
        self.used.insert(divergence);
    }

    /// A category cell (`other` or `['other']`) of `op`: equal, or a
    /// documented move.
    fn category(&mut self, sheet: &str, op: &str, ours: &str, theirs: &str) {
        *self.cells += 1;
        if ours == theirs {
            return;
        }
        let strip = |c: &str| {
            c.trim_start_matches("['")
                .trim_end_matches("']")
                .to_string()
        };
        let (ours, theirs) = (strip(ours), strip(theirs));
        assert!(
            moved(op, &theirs, &ours),
            "{}: {sheet}: {op} is {ours}, TraceLens {theirs}: not a documented move",
            self.trace.display()
        );
        self.allow(Divergence::Category);
        self.moves_used.insert((op.to_string(), theirs, ours));
    }

    /// Rows in order, cell by cell; `special` takes the cells of its
    /// columns (returns whether it did).
    fn rows(
        &mut self,
        sheet: &str,
        ours: &Csv,
        theirs: &Csv,
        key: &[usize],
        mut special: impl FnMut(&mut Self, &[String], &[String], usize) -> bool,
    ) {
        assert_eq!(
            ours.header,
            theirs.header,
            "{}: {sheet}",
            self.trace.display()
        );
        assert_eq!(
            ours.rows.len(),
            theirs.rows.len(),
            "{}: {sheet} rows",
            self.trace.display()
        );
        let key_of = |row: &[String]| key.iter().map(|&k| row[k].clone()).collect::<Vec<_>>();
        for (i, (a, b)) in ours.rows.iter().zip(&theirs.rows).enumerate() {
            let b = if key_of(a) == key_of(b) {
                b
            } else {
                self.tied(sheet, ours, theirs, i, &key_of)
            };
            for column in 0..ours.header.len() {
                if special(self, a, b, column) {
                    continue;
                }
                *self.cells += 1;
                assert!(
                    same_cell(&a[column], &b[column]),
                    "{}: {sheet} row {i} ({:?}) {}: ours {:?}, TraceLens {:?}",
                    self.trace.display(),
                    key_of(a),
                    ours.header[column],
                    a[column],
                    b[column]
                );
            }
        }
    }

    /// TraceLens's row for our row `i` when the two are out of order: the
    /// neighbouring row with our key, tied with ours on every number.
    fn tied<'b>(
        &mut self,
        sheet: &str,
        ours: &Csv,
        theirs: &'b Csv,
        i: usize,
        key_of: &dyn Fn(&[String]) -> Vec<String>,
    ) -> &'b [String] {
        let a = &ours.rows[i];
        let numbers = |row: &[String]| {
            row.iter()
                .filter_map(|c| c.parse::<f64>().ok())
                .collect::<Vec<_>>()
        };
        let neighbour = [i.wrapping_sub(1), i + 1]
            .into_iter()
            .filter_map(|j| theirs.rows.get(j))
            .find(|b| key_of(b) == key_of(a))
            .unwrap_or_else(|| {
                panic!(
                    "{}: {sheet} row {i}: ours {:?}, TraceLens {:?}",
                    self.trace.display(),
                    key_of(a),
                    key_of(&theirs.rows[i])
                )
            });
        let (mine, in_place) = (numbers(a), numbers(&theirs.rows[i]));
        assert!(
            mine.len() == in_place.len()
                && mine
                    .iter()
                    .zip(&in_place)
                    .all(|(x, y)| relative_difference(*x, *y) <= TOLERANCE),
            "{}: {sheet} row {i}: out of order but not tied",
            self.trace.display()
        );
        self.allow(Divergence::TiedOrder);
        neighbour
    }
}

/// One value of a `kernel_details_summary` entry.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    Text(String),
    Number(f64),
}

/// A Python literal list of dicts as TraceLens and we write them:
/// `[{'name': 'k', 'stream': 7, 'count': 2, 'mean_duration_us':
/// np.float64(1.5)}]`.
fn python_dicts(text: &str) -> Vec<BTreeMap<String, Value>> {
    struct Parser<'a> {
        text: &'a [u8],
        at: usize,
    }
    impl Parser<'_> {
        fn skip(&mut self) {
            while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
                self.at += 1;
            }
        }
        fn eat(&mut self, token: &str) -> bool {
            self.skip();
            let found = self.text[self.at..].starts_with(token.as_bytes());
            if found {
                self.at += token.len();
            }
            found
        }
        fn expect(&mut self, token: &str) {
            assert!(
                self.eat(token),
                "expected {token} at {} of {}",
                self.at,
                String::from_utf8_lossy(self.text)
            );
        }
        fn string(&mut self) -> String {
            self.skip();
            let quote = self.text[self.at];
            assert!(quote == b'\'' || quote == b'"', "a string at {}", self.at);
            self.at += 1;
            let mut bytes = Vec::new();
            while self.text[self.at] != quote {
                if self.text[self.at] == b'\\' {
                    self.at += 1;
                }
                bytes.push(self.text[self.at]);
                self.at += 1;
            }
            self.at += 1;
            String::from_utf8(bytes).expect("UTF-8")
        }
        fn value(&mut self) -> Value {
            self.skip();
            if matches!(self.text[self.at], b'\'' | b'"') {
                return Value::Text(self.string());
            }
            let wrapped = self.eat("np.float64(") || self.eat("np.int64(");
            self.skip();
            let start = self.at;
            while self
                .text
                .get(self.at)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || b"+-.".contains(&c))
            {
                self.at += 1;
            }
            let number = std::str::from_utf8(&self.text[start..self.at])
                .expect("ASCII")
                .parse()
                .unwrap_or_else(|_| panic!("a number at {start}"));
            if wrapped {
                self.expect(")");
            }
            Value::Number(number)
        }
    }
    let mut parser = Parser {
        text: text.as_bytes(),
        at: 0,
    };
    let mut dicts = Vec::new();
    if text.trim().is_empty() {
        return dicts;
    }
    parser.expect("[");
    while !parser.eat("]") {
        parser.eat(",");
        parser.expect("{");
        let mut dict = BTreeMap::new();
        while !parser.eat("}") {
            parser.eat(",");
            let key = parser.string();
            parser.expect(":");
            dict.insert(key, parser.value());
        }
        dicts.push(dict);
    }
    dicts
}

fn number(dict: &BTreeMap<String, Value>, key: &str) -> f64 {
    match dict.get(key) {
        Some(Value::Number(n)) => *n,
        other => panic!("{key}: {other:?} in {dict:?}"),
    }
}

fn text(dict: &BTreeMap<String, Value>, key: &str) -> String {
    match dict.get(key) {
        Some(Value::Text(t)) => t.clone(),
        other => panic!("{key}: {other:?} in {dict:?}"),
    }
}

/// The entries of a kernel-details cell summed by (kernel name, stream):
/// count and total duration.
fn by_kernel(dicts: &[BTreeMap<String, Value>]) -> BTreeMap<(String, String), (f64, f64)> {
    let mut kernels: BTreeMap<(String, String), (f64, f64)> = BTreeMap::new();
    for dict in dicts {
        let stream = format!("{}", number(dict, "stream"));
        let entry = kernels.entry((text(dict, "name"), stream)).or_default();
        entry.0 += number(dict, "count");
        entry.1 += number(dict, "total_duration_us");
    }
    kernels
}

/// `kernel_details_summary`: the same kernels with the same counts and
/// totals, and where TraceLens has one entry for a kernel with our count,
/// the same statistics (its standard deviation with n rather than n − 1).
/// When TraceLens paired different kernels by position the row's totals
/// still agree.
fn kernel_details(check: &mut Comparison, op: &str, ours: &str, theirs: &str) {
    *check.cells += 1;
    if ours == theirs {
        return;
    }
    check.allow(Divergence::KernelDetailsFormat);
    let (ours, theirs) = (python_dicts(ours), python_dicts(theirs));
    let (mine, their) = (by_kernel(&ours), by_kernel(&theirs));
    let place = format!("{}: {op} kernel_details_summary", check.trace.display());
    if mine.keys().ne(their.keys()) {
        check.allow(Divergence::KernelPairing);
        let total = |k: &BTreeMap<_, (f64, f64)>| {
            k.values()
                .fold((0.0, 0.0), |(c, t), (count, us)| (c + count, t + us))
        };
        let (a, b) = (total(&mine), total(&their));
        assert!(
            a.0 == b.0 && relative_difference(a.1, b.1) <= TOLERANCE,
            "{place}: {mine:?} against {their:?}"
        );
        return;
    }
    for (key, (count, total)) in &their {
        let (my_count, my_total) = mine[key];
        assert!(
            my_count == *count && relative_difference(my_total, *total) <= TOLERANCE,
            "{place}: {key:?} ours {my_count} calls {my_total} µs, TraceLens {count} calls {total} µs"
        );
    }
    for entry in &theirs {
        let key = (text(entry, "name"), format!("{}", number(entry, "stream")));
        let alone = theirs
            .iter()
            .filter(|e| text(e, "name") == key.0 && format!("{}", number(e, "stream")) == key.1)
            .count()
            == 1;
        if !alone {
            continue;
        }
        let mine = ours
            .iter()
            .find(|e| text(e, "name") == key.0 && format!("{}", number(e, "stream")) == key.1)
            .expect("the same kernels");
        let n = number(entry, "count");
        for field in [
            "mean_duration_us",
            "median_duration_us",
            "min_duration_us",
            "max_duration_us",
        ] {
            let (a, b) = (number(mine, field), number(entry, field));
            assert!(
                relative_difference(a, b) <= TOLERANCE,
                "{place}: {key:?} {field} ours {a}, TraceLens {b}"
            );
        }
        let theirs_n_minus_1 = if n > 1.0 {
            number(entry, "std_dev_duration_us") * (n / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        let std = number(mine, "std_dev_duration_us");
        assert!(
            (std - theirs_n_minus_1).abs() <= 1e-6 * std.max(1e-3),
            "{place}: {key:?} std ours {std}, TraceLens (n − 1) {theirs_n_minus_1}"
        );
    }
}

/// `trunc_kernel_details`: the same truncated names and streams, and means
/// equal to two decimals (our rounding is half away from zero).
fn trunc_kernel_details(check: &mut Comparison, op: &str, ours: &str, theirs: &str) {
    *check.cells += 1;
    if ours == theirs {
        return;
    }
    check.allow(Divergence::KernelDetailsFormat);
    let key = |dicts: &[BTreeMap<String, Value>]| {
        let mut keys: Vec<(String, String)> = dicts
            .iter()
            .map(|d| (text(d, "name"), format!("{}", number(d, "stream"))))
            .collect();
        keys.sort();
        keys.dedup();
        keys
    };
    let (ours, theirs) = (python_dicts(ours), python_dicts(theirs));
    if key(&ours) != key(&theirs) {
        check.allow(Divergence::KernelPairing);
        return;
    }
    for entry in &theirs {
        let name = text(entry, "name");
        // A kernel at several positions has one entry per position there.
        if theirs.iter().filter(|d| text(d, "name") == name).count() > 1 {
            check.allow(Divergence::KernelPairing);
            continue;
        }
        let mean = number(entry, "mean_duration_us");
        assert!(
            ours.iter()
                .filter(|d| text(d, "name") == name)
                .any(|d| (number(d, "mean_duration_us") - mean).abs() <= 0.010_000_1),
            "{}: {op} trunc_kernel_details {name}: no mean near {mean}",
            check.trace.display()
        );
    }
}

/// `ops_summary_by_category.csv` against TraceLens's with the moved ops
/// carried over (from TraceLens's own `ops_summary.csv`): counts and times
/// per category, percentages of the same total, and the cumulative
/// percentage in our order (by time, descending).
fn by_category(check: &mut Comparison, ours: &Csv, theirs: &Csv, their_ops: &Csv) {
    assert_eq!(ours.header, theirs.header, "{}", check.trace.display());
    let (category, count, time) = (
        theirs.column("op category"),
        theirs.column("Count"),
        theirs.column("total_direct_kernel_time_ms"),
    );
    let mut expected: BTreeMap<String, (u64, f64)> = theirs
        .rows
        .iter()
        .map(|r| {
            (
                r[category].clone(),
                (r[count].parse().unwrap(), r[time].parse().unwrap()),
            )
        })
        .collect();
    let (op_name, op_count, op_time, op_category) = (
        their_ops.column("name"),
        their_ops.column("Count"),
        their_ops.column("total_direct_kernel_time_ms"),
        their_ops.column("Categories"),
    );
    for row in &their_ops.rows {
        let from = row[op_category]
            .trim_start_matches("['")
            .trim_end_matches("']");
        let Some(&(_, _, to)) = CATEGORY_MOVES
            .iter()
            .find(|(op, theirs, _)| *op == row[op_name] && *theirs == from)
        else {
            continue;
        };
        check.allow(Divergence::CategoryTotals);
        let (calls, ms): (u64, f64) = (
            row[op_count].parse().unwrap(),
            row[op_time].parse().unwrap(),
        );
        let source = expected.get_mut(from).expect("the op's category has a row");
        source.0 -= calls;
        source.1 -= ms;
        let target = expected.entry(to.to_string()).or_default();
        target.0 += calls;
        target.1 += ms;
    }
    expected.retain(|_, (calls, _)| *calls > 0);
    let total: f64 = expected.values().map(|v| v.1).sum();
    let mine: BTreeMap<String, &Vec<String>> =
        ours.rows.iter().map(|r| (r[category].clone(), r)).collect();
    assert_eq!(
        mine.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>(),
        "{}: categories",
        check.trace.display()
    );
    let (percent, cumulative) = (
        ours.column("Percentage (%)"),
        ours.column("Cumulative Percentage (%)"),
    );
    let mut running = 0.0;
    let mut previous = f64::INFINITY;
    for row in &ours.rows {
        let (calls, ms) = expected[&row[category]];
        let my_ms: f64 = row[time].parse().unwrap();
        let place = format!("{}: {}", check.trace.display(), row[category]);
        assert_eq!(row[count].parse::<u64>().unwrap(), calls, "{place}: Count");
        assert!(
            (my_ms - ms).abs() <= 1e-9 * total,
            "{place}: ours {my_ms} ms, expected {ms}"
        );
        let share: f64 = row[percent].parse().unwrap();
        assert!(
            (share - ms / total * 100.0).abs() <= 1e-6,
            "{place}: {share}%"
        );
        running += share;
        assert!(
            (row[cumulative].parse::<f64>().unwrap() - running).abs() <= 1e-6,
            "{place}: cumulative"
        );
        assert!(my_ms <= previous, "{place}: not by time, descending");
        previous = my_ms;
        *check.cells += 5;
    }
}

/// `short_kernels_summary.csv`: the same rows; in a GPU-only trace our
/// four op columns are empty and TraceLens writes none; an empty summary is
/// our header alone against TraceLens's lone newline.
fn short_kernels(check: &mut Comparison, ours: &Csv, theirs: &Csv) {
    if theirs.header.iter().all(String::is_empty) {
        check.allow(Divergence::ShortKernelColumns);
        assert!(ours.rows.is_empty(), "{}", check.trace.display());
        return;
    }
    let extra = ours.header.len() - theirs.header.len();
    let ours = if extra > 0 {
        check.allow(Divergence::ShortKernelColumns);
        assert_eq!(
            ours.header[..extra],
            [
                "Parent cpu_op",
                "Input dims",
                "Input strides",
                "Concrete Inputs"
            ]
        );
        assert!(
            ours.rows
                .iter()
                .all(|r| r[..extra].iter().all(String::is_empty))
        );
        Csv {
            header: ours.header[extra..].to_vec(),
            rows: ours.rows.iter().map(|r| r[extra..].to_vec()).collect(),
        }
    } else {
        Csv {
            header: ours.header.clone(),
            rows: ours.rows.clone(),
        }
    };
    let key: Vec<usize> = (0..ours.header.len() - 4).collect();
    check.rows(
        "short_kernels_summary.csv",
        &ours,
        theirs,
        &key,
        |_, _, _, _| false,
    );
}

#[test]
#[cfg_attr(
    not(tracegate_corpus),
    ignore = "needs ../shared/corpus: run scripts/fetch-corpus"
)]
fn every_tracelens_sheet_matches_ours_but_for_documented_divergences() {
    let corpus = corpus_dir();
    let pairs = traces_with_oracle(&corpus);
    assert!(pairs.len() >= 12, "{} traces with sheets", pairs.len());
    let mut used = BTreeSet::new();
    let mut moves_used = BTreeSet::new();
    let mut cells = 0;
    let mut sheets_compared: HashMap<&str, usize> = HashMap::new();
    for (trace, oracle) in &pairs {
        let out = csv_report(trace);
        let mut check = Comparison {
            trace,
            used: &mut used,
            moves_used: &mut moves_used,
            cells: &mut cells,
        };
        for &sheet in SHEETS {
            let theirs_path = oracle.join(sheet);
            let ours_path = out.path().join(sheet);
            if !theirs_path.exists() {
                // A GPU-only trace: TraceLens writes no op tables, nor do we.
                assert!(!ours_path.exists(), "{}: {sheet}", trace.display());
                continue;
            }
            *sheets_compared.entry(sheet).or_default() += 1;
            let (ours, theirs) = (Csv::read(&ours_path), Csv::read(&theirs_path));
            match sheet {
                "ops_summary.csv" => {
                    let (name, category) = (theirs.column("name"), theirs.column("Categories"));
                    check.rows(sheet, &ours, &theirs, &[name], |check, a, b, column| {
                        column == category && {
                            check.category(sheet, &a[name], &a[column], &b[column]);
                            true
                        }
                    });
                }
                "kernel_summary.csv" => {
                    let kernel = theirs.column("Kernel name");
                    let parent = theirs.header.iter().position(|h| h == "Parent cpu_op");
                    let category = theirs.column("Parent op category");
                    let key: Vec<usize> = parent.into_iter().chain([kernel]).collect();
                    check.rows(sheet, &ours, &theirs, &key, |check, a, b, column| {
                        column == category && {
                            let op = parent.map_or("", |p| a[p].as_str());
                            check.category(sheet, op, &a[column], &b[column]);
                            true
                        }
                    });
                }
                "ops_unique_args.csv" => {
                    let name = theirs.column("name");
                    let category = theirs.column("op category");
                    let details = theirs.column("kernel_details_summary");
                    let trunc = theirs.column("trunc_kernel_details");
                    let key = [name, theirs.column("Input Dims")];
                    check.rows(sheet, &ours, &theirs, &key, |check, a, b, column| {
                        let op = a[name].as_str();
                        if column == category {
                            check.category(sheet, op, &a[column], &b[column]);
                        } else if column == details {
                            kernel_details(check, op, &a[column], &b[column]);
                        } else if column == trunc {
                            trunc_kernel_details(check, op, &a[column], &b[column]);
                        } else {
                            return false;
                        }
                        true
                    });
                }
                "ops_summary_by_category.csv" => {
                    let their_ops = Csv::read(&oracle.join("ops_summary.csv"));
                    by_category(&mut check, &ours, &theirs, &their_ops);
                }
                "short_kernels_summary.csv" => short_kernels(&mut check, &ours, &theirs),
                _ => unreachable!("{sheet}"),
            }
        }
    }
    for sheet in SHEETS {
        assert!(
            sheets_compared.get(sheet).copied().unwrap_or(0) >= 11,
            "{sheet}: compared on {:?} traces",
            sheets_compared.get(sheet)
        );
    }
    assert!(cells > 15_000, "only {cells} cells compared");
    // The allow-list stays tight: every entry is still needed somewhere.
    let all = [
        Divergence::Category,
        Divergence::CategoryTotals,
        Divergence::TiedOrder,
        Divergence::KernelDetailsFormat,
        Divergence::KernelPairing,
        Divergence::ShortKernelColumns,
    ];
    let unused: Vec<_> = all.iter().filter(|d| !used.contains(d)).collect();
    assert!(unused.is_empty(), "divergences no trace needs: {unused:?}");
    let moves: BTreeSet<(String, String, String)> = CATEGORY_MOVES
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(moves_used, moves, "category moves no trace needs");
}
