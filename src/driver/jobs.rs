//! Reading many inputs at once (`--jobs N`): every trace or snapshot of a
//! `check` or a `history add` is read on a pool of N threads, so at most N
//! traces are in memory at once, and the results come back in input order,
//! so that what is compared, judged and reported does not depend on N.

use std::cmp::Reverse;
use std::fs;
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Bar, Error, Progress, Silent};

/// How many inputs are read at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Jobs(NonZeroUsize);

impl Jobs {
    /// `--jobs N`, or when left out, as many as the machine has cores.
    pub fn new(jobs: Option<NonZeroUsize>) -> Jobs {
        Jobs(
            jobs.unwrap_or_else(|| {
                std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN)
            }),
        )
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
    let threads = jobs.0.get().min(items.len());
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
    let order = largest_first(items, size);
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
    pool.broadcast(|_| {
        while let Some(&index) = order.get(started.fetch_add(1, Ordering::Relaxed)) {
            if index > first_failed.load(Ordering::Relaxed) {
                continue;
            }
            let result = read(&items[index], true);
            if result.is_err() {
                first_failed.fetch_min(index, Ordering::Relaxed);
            }
            results.lock().expect("no read panics holding it")[index] = Some(result);
            bar.inc();
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

/// The items' indices, largest first; equal sizes in item order.
fn largest_first<T>(items: &[T], size: impl Fn(&T) -> u64) -> Vec<usize> {
    let mut order: Vec<usize> = (0..items.len()).collect();
    order.sort_by_key(|&index| Reverse(size(&items[index])));
    order
}

/// The size of the file at `path` in bytes, 0 when it cannot be read (its
/// read then fails with the reason).
pub fn file_size(path: &Path) -> u64 {
    fs::metadata(path).map_or(0, |m| m.len())
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
        assert_eq!(
            largest_first(&[1, 5, 2, 9, 5, 3], |&s| s),
            [3, 1, 4, 5, 2, 0]
        );
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
}
