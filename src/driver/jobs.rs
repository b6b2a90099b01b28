//! Reading many inputs at once (`--jobs N`): every trace or snapshot of a
//! `check` or a `history add` is read on a pool of N threads, so at most N
//! traces are in memory at once, and the results come back in input order,
//! so that what is compared, judged and reported does not depend on N.
//! Without `--jobs`, large inputs are also held to a memory budget: the
//! inputs read at once hold at most 1.2 times the largest one's JSON bytes
//! (or 512 MiB, whichever is more), so that `check` of two 1 GB traces
//! needs about one trace's memory, not two.

use std::cmp::Reverse;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use super::{Bar, Error, Progress, Silent};

/// How many inputs are read at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jobs {
    threads: NonZeroUsize,
    /// Whether the inputs read at once are held to [`memory_budget`] (the
    /// default); `--jobs N` asks for N at once whatever their size.
    memory_bound: bool,
}

/// The JSON bytes the inputs read at once may hold together, at least.
pub const MEMORY_FLOOR_BYTES: u64 = 512 << 20;

/// The JSON bytes the inputs read at once may hold together when the
/// largest holds `largest`: 1.2 times it, or [`MEMORY_FLOOR_BYTES`].
pub fn memory_budget(largest: u64) -> u64 {
    (largest + largest / 5).max(MEMORY_FLOOR_BYTES)
}

impl Jobs {
    /// `--jobs N`, or when left out, as many as the machine has cores
    /// within the memory budget.
    pub fn new(jobs: Option<NonZeroUsize>) -> Jobs {
        Jobs {
            threads: jobs.unwrap_or_else(|| {
                std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
            }),
            memory_bound: jobs.is_none(),
        }
    }
}

/// The bytes in flight and their bound: a reader waits until its input
/// fits beside the others, or nothing else is being read.
struct Budget {
    limit: Option<u64>,
    in_flight: Mutex<u64>,
    freed: Condvar,
}

impl Budget {
    fn enter(&self, size: u64) {
        let mut in_flight = self.in_flight.lock().expect("no read panics holding it");
        if let Some(limit) = self.limit {
            while *in_flight > 0 && *in_flight + size > limit {
                in_flight = self
                    .freed
                    .wait(in_flight)
                    .expect("no read panics holding it");
            }
        }
        *in_flight += size;
    }

    fn leave(&self, size: u64) {
        *self.in_flight.lock().expect("no read panics holding it") -= size;
        self.freed.notify_all();
    }
}

/// The results of reading the inputs, in input order: each input's value
/// until the first input (in input order) that failed, then that failure.
/// Inputs after it may not have been read.
pub struct InOrder<R> {
    done: std::vec::IntoIter<R>,
    failure: Option<Error>,
}

impl<R> Iterator for InOrder<R> {
    type Item = Result<R, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.done.next() {
            Some(value) => Some(Ok(value)),
            None => self.failure.take().map(Err),
        }
    }
}

/// Reads every item with `read`, `jobs` at a time, and gives the results in
/// item order ([`InOrder`]). Several at a time, the items are started
/// largest first by `size` (so that the largest do not end up one after
/// another on one thread while the others wait), each thread taking the
/// next when it is done. `read` is told whether to stay quiet: one item at
/// a time, it draws its own progress bar as before (unless `quiet`);
/// several at a time, their bars would overwrite each other, so one bar
/// counts the files done instead (`progress`'s, without `quiet`). Once an
/// item fails, the items after it in item order are not started: only the
/// first failure in item order is reported.
pub fn read_all<T, R>(
    items: &[T],
    jobs: Jobs,
    quiet: bool,
    progress: &dyn Progress,
    size: impl Fn(&T) -> u64,
    read: impl Fn(&T, bool) -> Result<R, Error> + Sync,
) -> Result<InOrder<R>, Error>
where
    T: Sync,
    R: Send,
{
    let threads = jobs.threads.get().min(items.len());
    if threads <= 1 {
        let mut done = Vec::with_capacity(items.len());
        for item in items {
            match read(item, quiet) {
                Ok(value) => done.push(value),
                Err(failure) => return Ok(in_order(done, Some(failure))),
            }
        }
        return Ok(in_order(done, None));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error(format!("--jobs {threads}: cannot start the threads: {e}")))?;
    let sizes: Vec<u64> = items.iter().map(&size).collect();
    let order = largest_first(&sizes);
    let largest = order.first().map_or(0, |&index| sizes[index]);
    let limit = jobs.memory_bound.then(|| memory_budget(largest));
    let budget = Budget {
        limit,
        in_flight: Mutex::new(0),
        freed: Condvar::new(),
    };
    // Inputs too large to share the budget with even the smallest are read
    // first, one after another on this thread: read on pool threads, each
    // would grow its own allocator arena, and memory freed by one read
    // would not serve the next (two 1 GB traces took 1.27× one's memory).
    let smallest = order.last().map_or(0, |&index| sizes[index]);
    let (alone, shared): (Vec<usize>, Vec<usize>) = order
        .iter()
        .partition(|&&index| limit.is_some_and(|limit| sizes[index] + smallest > limit));
    let bar: Box<dyn Bar> = if quiet {
        Box::new(Silent)
    } else {
        progress.files(items.len())
    };
    let started = AtomicUsize::new(0);
    // The index of the first item known to have failed: later ones are
    // skipped, as a read one at a time would never have reached them.
    let first_failed = AtomicUsize::new(usize::MAX);
    let results: Mutex<Vec<Option<Result<R, Error>>>> =
        Mutex::new(items.iter().map(|_| None).collect());
    let read_one = |index: usize| {
        if index > first_failed.load(Ordering::Relaxed) {
            return;
        }
        let bytes = sizes[index];
        budget.enter(bytes);
        let result = read(&items[index], true);
        budget.leave(bytes);
        if result.is_err() {
            first_failed.fetch_min(index, Ordering::Relaxed);
        }
        results.lock().expect("no read panics holding it")[index] = Some(result);
        bar.inc();
    };
    alone.iter().for_each(|&index| read_one(index));
    pool.broadcast(|_| {
        while let Some(&index) = shared.get(started.fetch_add(1, Ordering::Relaxed)) {
            read_one(index);
        }
    });
    bar.finish();
    let results = results.into_inner().expect("no read panics holding it");
    let mut done = Vec::with_capacity(items.len());
    // A skipped item comes after a failed one, so the loop ends before it.
    for result in results.into_iter().flatten() {
        match result {
            Ok(value) => done.push(value),
            Err(failure) => return Ok(in_order(done, Some(failure))),
        }
    }
    Ok(in_order(done, None))
}

/// The indices of `sizes`, largest first; equal sizes in item order.
fn largest_first(sizes: &[u64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&index| Reverse(sizes[index]));
    order
}

/// The JSON bytes of the trace or snapshot at `path`, which its memory
/// follows: a gzip file's uncompressed size from its trailer (modulo 4 GiB,
/// so never taken below the compressed size), else the file's size; 0 when
/// it cannot be read (its read then fails with the reason). Only a
/// regular file is opened: opening a FIFO would wait for a writer, and its
/// read refuses it with the reason.
pub fn json_size(path: &Path) -> u64 {
    let Ok(metadata) = fs::metadata(path) else {
        return 0;
    };
    let compressed = metadata.len();
    if !metadata.is_file() {
        return compressed;
    }
    let trailer = || -> std::io::Result<u64> {
        let mut file = fs::File::open(path)?;
        let mut magic = [0u8; 2];
        file.read_exact(&mut magic)?;
        if magic != [0x1f, 0x8b] || compressed < 18 {
            return Ok(0);
        }
        file.seek(SeekFrom::End(-4))?;
        let mut isize = [0u8; 4];
        file.read_exact(&mut isize)?;
        Ok(u64::from(u32::from_le_bytes(isize)))
    };
    trailer().unwrap_or(0).max(compressed)
}

fn in_order<R>(done: Vec<R>, failure: Option<Error>) -> InOrder<R> {
    InOrder {
        done: done.into_iter(),
        failure,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn jobs(n: usize) -> Jobs {
        Jobs::new(NonZeroUsize::new(n))
    }

    /// Reads `items`, failing on the odd ones when `fail_odd`.
    fn read(items: &[usize], n: usize, fail_odd: bool) -> Vec<Result<usize, String>> {
        read_all(
            items,
            jobs(n),
            true,
            &Silent,
            |&item| item as u64,
            |&item, quiet| {
                assert!(quiet, "quiet was asked for");
                if fail_odd && item % 2 == 1 {
                    Err(Error(format!("{item} is odd")))
                } else {
                    Ok(item * 10)
                }
            },
        )
        .unwrap_or_else(|f| panic!("{f}"))
        .map(|r| r.map_err(|f| f.0))
        .collect()
    }

    #[test]
    fn results_come_in_input_order_whatever_the_number_of_jobs() {
        let items: Vec<usize> = (0..40).map(|i| i * 2).collect();
        let expected: Vec<Result<usize, String>> = items.iter().map(|i| Ok(i * 10)).collect();
        for n in [1, 2, 4, 64] {
            assert_eq!(read(&items, n, false), expected, "--jobs {n}");
        }
    }

    #[test]
    fn the_first_failure_in_input_order_ends_the_results() {
        let items = [4, 8, 3, 6, 5, 7];
        for n in [1, 3, 6] {
            assert_eq!(
                read(&items, n, true),
                vec![Ok(40), Ok(80), Err("3 is odd".to_string())],
                "--jobs {n}"
            );
        }
    }

    #[test]
    fn the_largest_items_start_first() {
        assert_eq!(largest_first(&[1, 5, 2, 9, 5, 3]), [3, 1, 4, 5, 2, 0]);
    }

    #[test]
    fn no_more_reads_run_at_once_than_jobs() {
        let running = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let items: Vec<usize> = (0..24).collect();
        let results = read_all(
            &items,
            jobs(3),
            true,
            &Silent,
            |_| 0,
            |&item, _| {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                std::thread::sleep(Duration::from_millis(2));
                running.fetch_sub(1, Ordering::SeqCst);
                Ok(item)
            },
        )
        .unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(results.count(), 24);
        assert!(most.load(Ordering::SeqCst) <= 3, "{most:?} at once");
    }

    #[test]
    fn one_job_reads_one_after_another_with_the_bars_as_asked() {
        let order = std::sync::Mutex::new(Vec::new());
        let items = [1, 2, 3];
        let results = read_all(
            &items,
            jobs(1),
            false,
            &Silent,
            |_| 0,
            |&item, quiet| {
                assert!(!quiet, "one at a time, a file's own bar is drawn");
                order.lock().expect("not poisoned").push(item);
                Ok(item)
            },
        )
        .unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(results.count(), 3);
        assert_eq!(*order.lock().expect("not poisoned"), vec![1, 2, 3]);
    }

    /// Reads `sizes` on `threads` threads, each read taking a while; the
    /// most JSON bytes and inputs that were ever read at once.
    fn peak(sizes: &[u64], jobs: Jobs) -> (u64, usize) {
        let in_flight = Mutex::new((0u64, 0usize));
        let peak = Mutex::new((0u64, 0usize));
        read_all(
            sizes,
            jobs,
            true,
            &Silent,
            |&s| s,
            |&size, _| {
                {
                    let mut now = in_flight.lock().unwrap();
                    *now = (now.0 + size, now.1 + 1);
                    let mut most = peak.lock().unwrap();
                    *most = (most.0.max(now.0), most.1.max(now.1));
                }
                std::thread::sleep(Duration::from_millis(20));
                let mut now = in_flight.lock().unwrap();
                *now = (now.0 - size, now.1 - 1);
                Ok(())
            },
        )
        .unwrap_or_else(|f| panic!("{f}"))
        .for_each(drop);
        peak.into_inner().unwrap()
    }

    #[test]
    fn by_default_the_inputs_read_at_once_fit_the_memory_budget() {
        const GIB: u64 = 1 << 30;
        let threads = NonZeroUsize::new(4).unwrap();
        let default = Jobs {
            threads,
            memory_bound: true,
        };
        // Two 1 GiB traces: one at a time, about one trace's memory.
        assert_eq!(peak(&[GIB, GIB, GIB], default), (GIB, 1));
        // One large and small ones: the small ones beside it within 1.2×.
        let (bytes, _) = peak(&[GIB, GIB / 10, GIB / 10, GIB / 10], default);
        assert!(bytes <= memory_budget(GIB), "{bytes}");
        // Small traces fit the floor together.
        let (bytes, _) = peak(&[MEMORY_FLOOR_BYTES / 4; 8], default);
        assert!(bytes <= MEMORY_FLOOR_BYTES, "{bytes}");
        assert_eq!(memory_budget(GIB), GIB + GIB / 5);
        assert_eq!(memory_budget(1), MEMORY_FLOOR_BYTES);
        // `--jobs N` asks for N at once, whatever their size.
        assert!(!jobs(4).memory_bound && Jobs::new(None).memory_bound);
    }

    #[test]
    fn a_gzip_file_is_sized_by_its_json_bytes() {
        use std::io::Write as _;
        let dir = tempfile::tempdir().unwrap();
        let json = "{\"traceEvents\": []}".repeat(10_000);
        let gz = dir.path().join("t.json.gz");
        let mut encoder = flate2::write::GzEncoder::new(
            fs::File::create(&gz).unwrap(),
            flate2::Compression::best(),
        );
        encoder.write_all(json.as_bytes()).unwrap();
        encoder.finish().unwrap();
        assert!(fs::metadata(&gz).unwrap().len() < json.len() as u64 / 10);
        assert_eq!(json_size(&gz), json.len() as u64);
        let plain = dir.path().join("t.json");
        fs::write(&plain, &json).unwrap();
        assert_eq!(json_size(&plain), json.len() as u64);
        assert_eq!(json_size(&dir.path().join("missing.json")), 0);
        // A FIFO is sized without being opened (opening would wait for a
        // writer that never comes).
        let fifo = dir.path().join("fifo.json");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.expect("mkfifo runs").success());
        assert_eq!(json_size(&fifo), 0);
    }
}
