fn main() {
    let path = std::env::args().nth(1).unwrap();
    let t = std::time::Instant::now();
    let trace = tracegate::trace::load_file(std::path::Path::new(&path), &mut |_| {}).unwrap();
    eprintln!(
        "{:?} {} MB {:?} strings={}",
        trace.counts,
        trace.json_bytes / 1_000_000,
        t.elapsed(),
        trace.strings.len()
    );
}
