//! Pairing a capture's calls with the work one replay put on the GPU.
//!
//! The rules follow TraceLens's capture merge, made robust to single
//! mismatches: the calls line up one to one when the sequences agree
//! position by position; otherwise, on one stream, the longest common
//! subsequence of the names pairs them (a kernel renamed or added between
//! capture and replay leaves only that kernel unpaired, where TraceLens drops
//! the whole graph); across several streams, each call takes the head of the
//! stream whose next work has its name (the longest run of agreeing names
//! breaks ties). Calls that do not name their kernels (CUDA runtime launches)
//! pair position by position: the whole sequence when it lines up, else the
//! kernel launches with the replayed kernels when there are as many of each,
//! copies and sets then pairing by the longest common subsequence of their
//! labels (a set the capture made but the replay shows no work for, as for
//! BERT's graphs on an H200 under CUDA 13, stays unpaired).

use std::collections::BTreeMap;

use similar::{Algorithm, DiffOp, capture_diff_slices};

use super::capture::Label;

/// For each replayed work item, the captured call it came from.
pub(super) struct Alignment {
    /// Per replayed item (same order as given): the index of its call in the
    /// capture, or `None`.
    pub(super) pairs: Vec<Option<usize>>,
    /// Why items are left unpaired, when a rule rather than a name says so.
    pub(super) note: Option<String>,
}

impl Alignment {
    /// How many replayed items found their call.
    pub(super) fn matched(&self) -> usize {
        self.pairs.iter().filter(|p| p.is_some()).count()
    }
}

/// Pairs `captured` calls (host order) with `replayed` work (its label and
/// stream, stream by stream in start order).
pub(super) fn align(captured: &[Label<'_>], replayed: &[(Label<'_>, Option<i64>)]) -> Alignment {
    let unpaired = |note: Option<String>| Alignment {
        pairs: vec![None; replayed.len()],
        note,
    };
    if captured.len() == replayed.len()
        && captured.iter().zip(replayed).all(|(c, (r, _))| c.fits(*r))
    {
        return Alignment {
            pairs: (0..replayed.len()).map(Some).collect(),
            note: None,
        };
    }
    if captured.contains(&Label::UnnamedKernel) {
        return by_kernel_position(captured, replayed).unwrap_or_else(|(launches, kernels)| {
            unpaired(Some(format!(
                "the capture's launch calls do not name their kernels and do not line up \
                 with the replay ({launches} launches captured, {kernels} kernels replayed)"
            )))
        });
    }
    let first_stream = replayed.first().map(|(_, s)| *s);
    if replayed.iter().all(|(_, s)| Some(*s) == first_stream) {
        by_subsequence(captured, replayed)
    } else {
        by_stream(captured, replayed)
    }
}

/// Launches that do not name their kernels: the kernel launches pair with
/// the replayed kernels position by position, the copies and sets by the
/// longest common subsequence of their labels. When the kernels do not line
/// up, the counts of captured kernel launches and replayed kernels.
fn by_kernel_position(
    captured: &[Label<'_>],
    replayed: &[(Label<'_>, Option<i64>)],
) -> Result<Alignment, (usize, usize)> {
    let is_kernel = |label: Label<'_>| matches!(label, Label::Kernel(_) | Label::UnnamedKernel);
    let (launches, captured_other): (Vec<usize>, Vec<usize>) =
        (0..captured.len()).partition(|&c| is_kernel(captured[c]));
    let (kernels, replayed_other): (Vec<usize>, Vec<usize>) =
        (0..replayed.len()).partition(|&r| is_kernel(replayed[r].0));
    if launches.len() != kernels.len()
        || !launches
            .iter()
            .zip(&kernels)
            .all(|(&c, &r)| captured[c].fits(replayed[r].0))
    {
        return Err((launches.len(), kernels.len()));
    }
    let mut pairs = vec![None; replayed.len()];
    for (&call, &item) in launches.iter().zip(&kernels) {
        pairs[item] = Some(call);
    }
    let calls: Vec<Label<'_>> = captured_other.iter().map(|&c| captured[c]).collect();
    let work: Vec<(Label<'_>, Option<i64>)> = replayed_other.iter().map(|&r| replayed[r]).collect();
    for (&item, pair) in replayed_other
        .iter()
        .zip(by_subsequence(&calls, &work).pairs)
    {
        pairs[item] = pair.map(|call| captured_other[call]);
    }
    Ok(Alignment { pairs, note: None })
}

/// One stream: the longest common subsequence of the labels.
fn by_subsequence(captured: &[Label<'_>], replayed: &[(Label<'_>, Option<i64>)]) -> Alignment {
    let labels: Vec<Label<'_>> = replayed.iter().map(|(l, _)| *l).collect();
    let mut pairs = vec![None; replayed.len()];
    for op in capture_diff_slices(Algorithm::Myers, captured, &labels) {
        if let DiffOp::Equal {
            old_index,
            new_index,
            len,
        } = op
        {
            for k in 0..len {
                pairs[new_index + k] = Some(old_index + k);
            }
        }
    }
    Alignment { pairs, note: None }
}

/// Several streams: per-stream queues, each call taking the head of a
/// stream whose next item has its label.
fn by_stream(captured: &[Label<'_>], replayed: &[(Label<'_>, Option<i64>)]) -> Alignment {
    let mut queues: BTreeMap<Option<i64>, Vec<usize>> = BTreeMap::new();
    for (index, (_, stream)) in replayed.iter().enumerate() {
        queues.entry(*stream).or_default().push(index);
    }
    let mut heads: BTreeMap<Option<i64>, usize> = queues.keys().map(|&s| (s, 0)).collect();
    let mut pairs = vec![None; replayed.len()];
    for (call, label) in captured.iter().enumerate() {
        let run = |stream: &Option<i64>| -> usize {
            let queue = &queues[stream];
            let head = heads[stream];
            queue[head..]
                .iter()
                .zip(&captured[call..])
                .take_while(|&(&item, c)| c.fits(replayed[item].0))
                .count()
        };
        let best = queues
            .keys()
            .filter(|s| {
                queues[*s]
                    .get(heads[*s])
                    .is_some_and(|&item| label.fits(replayed[item].0))
            })
            .max_by(|a, b| run(a).cmp(&run(b)).then(b.cmp(a)));
        if let Some(&stream) = best {
            let head = heads.get_mut(&stream).expect("a queue's head");
            pairs[queues[&stream][*head]] = Some(call);
            *head += 1;
        }
    }
    Alignment { pairs, note: None }
}
