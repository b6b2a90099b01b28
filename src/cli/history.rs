//! `tracegate history`: the flags turned into the library's calls (recording
//! runs, the dashboard's files, a workload's series: [`history`]), their
//! tables printed ([`render::history`]), the site written, the store
//! pruned; and where a run's commit, branch, PR and run URL come
//! from when the flags leave them out (GitHub Actions' environment).

use std::path::Path;
use tracegate::driver::history::{self, OriginFlags, entries, open, store_error};

use tracegate::driver::Progress;
use tracegate::history::entry::EntryMeta;
use tracegate::render::{self, text::printable};

use super::args::{
    HistoryAddArgs, HistoryCommand, HistoryListArgs, HistoryReportArgs, HistoryShowArgs,
};
use super::files::{emit, write_file};
use super::{BARS, Failure, env_value, many_read_options};

/// Runs a `history` subcommand; `width` is the terminal's.
pub(super) fn history_command(command: &HistoryCommand, width: u16) -> Result<u8, Failure> {
    match command {
        HistoryCommand::Add(args) => add(args),
        HistoryCommand::List(args) => list(args, width),
        HistoryCommand::Show(args) => show(args, width),
        HistoryCommand::Report(args) => report(args),
        HistoryCommand::Fsck(args) => {
            let store = open(&args.dir)?;
            let (text, code) = if args.repair {
                store.repair().map_err(store_error)?.summary()
            } else {
                store.scan().map_err(store_error)?.fsck()
            };
            emit(None, &text).map(|()| code)
        }
        HistoryCommand::Prune(args) => {
            let store = open(&args.dir)?;
            let keep = usize::try_from(args.keep).unwrap_or(usize::MAX);
            let pruned = store.prune(keep).map_err(store_error)?;
            pruned.scan.problems().iter().for_each(|p| BARS.warning(p));
            let (kept, removed) = (pruned.kept.len(), pruned.removed.len());
            let text = format!(
                "kept {kept} run(s), removed {removed} (the newest {keep} of each workload kept)\n"
            );
            emit(None, &text).map(|()| 0)
        }
    }
}

fn add(args: &HistoryAddArgs) -> Result<u8, Failure> {
    let flags = OriginFlags {
        commit: args.commit.as_deref(),
        branch: args.branch.as_deref(),
        pr: args.pr,
        run_url: args.run_url.as_deref(),
        time: args.time.as_deref(),
    };
    let origin = history::origin(&flags, &env_value)?;
    let read = many_read_options((args.quiet, &args.load), &args.jobs, args.ranks, &args.rank)?;
    let options = args.hardware.options()?;
    let mut text = String::new();
    let added = history::add(
        &args.dir,
        &args.inputs,
        &origin,
        &options,
        &read,
        &mut |entry| {
            text.push_str(&format!(
                "added {} at {} ({}): {}\n",
                printable(&entry.workload),
                printable(&render::history::short(&entry.commit)),
                entry.time,
                args.dir.join(&entry.file).display()
            ));
        },
    );
    added?;
    emit(None, &text).map(|()| 0)
}

/// `history report`: writes the dashboard of the history's branch to
/// `args.out` ([`history::site`]).
fn report(args: &HistoryReportArgs) -> Result<u8, Failure> {
    let repository = args.repository.clone().or_else(|| {
        Some(format!(
            "{}/{}",
            env_value("GITHUB_SERVER_URL")?,
            env_value("GITHUB_REPOSITORY")?
        ))
    });
    let site = history::site(&args.dir, &args.branch, repository, &BARS)?;
    for file in &site.files {
        write_file(&args.out, Path::new(&file.path), file.contents.as_bytes())?;
    }
    let text = format!(
        "wrote {} ({} workload page(s), {} pair page(s)) from {} run(s) on `{}`\n",
        args.out.join("index.html").display(),
        site.series,
        site.pairs,
        site.runs,
        args.branch
    );
    emit(None, &text).map(|()| 0)
}

fn list(args: &HistoryListArgs, width: u16) -> Result<u8, Failure> {
    let (_, entries) = entries(&args.dir, &BARS)?;
    let shown: Vec<&EntryMeta> = entries
        .iter()
        .filter(|e| args.workload.as_ref().is_none_or(|w| *w == e.workload))
        .filter(|e| history::on_branch(e, args.branch.as_deref()))
        .collect();
    if shown.is_empty() {
        return emit(None, &format!("no runs in {} match\n", args.dir.display())).map(|()| 0);
    }
    emit(None, &render::history::list(&shown, width)).map(|()| 0)
}

fn show(args: &HistoryShowArgs, width: u16) -> Result<u8, Failure> {
    let (workload, branch) = (&args.workload, args.branch.as_deref());
    let shown = history::show(&args.dir, workload, args.op.as_deref(), branch, &BARS)?;
    let text = render::history::show(workload, &shown.runs, &shown.points, &shown.what, width);
    emit(None, &text).map(|()| 0)
}
