//! `tracegate hardware list`: the hardware catalog as a terminal table.

use comfy_table::presets::UTF8_BORDERS_ONLY;
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table};

use crate::analysis::hardware::{Catalog, ComputeSpec, Hardware};
use crate::render::text::printable;

/// Formats `value` with at most `decimals` decimals, trailing zeros dropped
/// (`362.05`, `494.5`, `990`).
fn number(value: f64, decimals: usize) -> String {
    let text = format!("{value:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The peak the catalog lists for `spec` (no fallback), or `—`.
fn peak(hardware: &Hardware, spec: ComputeSpec) -> String {
    hardware
        .peak_tflops
        .get(&spec)
        .map_or_else(|| "—".to_string(), |tflops| number(*tflops, 2))
}

/// The bf16 column: the bf16 peak, else the fp16 one marked as such (V100
/// has fp16 tensor cores but no bf16), else `—`.
fn bf16(hardware: &Hardware) -> String {
    if hardware.peak_tflops.contains_key(&ComputeSpec::MatrixBf16) {
        return peak(hardware, ComputeSpec::MatrixBf16);
    }
    match hardware.peak_tflops.get(&ComputeSpec::MatrixFp16) {
        Some(tflops) => format!("{} (fp16)", number(*tflops, 2)),
        None => "—".to_string(),
    }
}

/// Terminals at least this wide get the source as a table column; narrower
/// ones get the sources listed under the table.
const SOURCE_COLUMN_WIDTH: u16 = 140;

/// Renders the catalog: one row per GPU with memory, bandwidth, the dense
/// fp32 (vector), tf32, bf16 and fp8 (matrix) peaks in TFLOP/s as the
/// catalog lists them, the intra-node link's GB/s per direction (`—` where the part has no such unit; lookups may
/// still fall back, see [`Hardware::peak_tflops`]), and the source: a column
/// on terminals at least 140 columns wide, else a list under the table.
/// `width` is the terminal width in columns.
pub fn render(catalog: &Catalog, width: u16) -> String {
    let source_column = width >= SOURCE_COLUMN_WIDTH;
    let mut table = Table::new();
    table.load_preset(UTF8_BORDERS_ONLY);
    table.set_content_arrangement(ContentArrangement::Dynamic);
    table.set_width(width);
    table.force_no_tty();
    let mut header = vec![
        "GPU",
        "memory GB",
        "HBM TB/s",
        "fp32",
        "tf32",
        "bf16",
        "fp8",
        "link GB/s",
    ];
    if source_column {
        header.push("source");
    }
    table.set_header(header.into_iter().map(Cell::new));
    for gpu in &catalog.gpus {
        // A user's catalog file may name a GPU anything.
        let mut row = vec![
            printable(&gpu.name),
            number(gpu.memory_gb, 1),
            number(gpu.hbm_tb_s, 3),
            peak(gpu, ComputeSpec::VectorFp32),
            peak(gpu, ComputeSpec::MatrixTf32),
            bf16(gpu),
            peak(gpu, ComputeSpec::MatrixFp8),
            gpu.link
                .as_ref()
                .map_or_else(|| "—".to_string(), |link| number(link.gb_s, 1)),
        ];
        if source_column {
            row.push(printable(&gpu.source));
        }
        table.add_row(row);
    }
    for index in 1..=7 {
        if let Some(column) = table.column_mut(index) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    let mut out = format!(
        "{table}\nDense peaks in TFLOP/s (no sparsity): fp32 vector; tf32, bf16, fp8 matrix.\n\
         link: intra-node link (NVLink, Infinity Fabric), GB/s per direction;\n\
         its source is cited in the catalog (hardware/catalog.yaml).\n"
    );
    if !source_column {
        out.push_str("\nSources:\n");
        for gpu in &catalog.gpus {
            out.push_str(&format!(
                "  {}: {}\n",
                printable(&gpu.name),
                printable(&gpu.source)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::hardware::builtin_catalog;

    #[test]
    fn lists_every_gpu_with_its_figures() {
        let catalog = builtin_catalog();
        let text = render(&catalog, 400);
        assert!(!text.contains("Sources:"));
        for gpu in &catalog.gpus {
            assert!(text.contains(&gpu.name), "{}", gpu.name);
        }
        let h100 = text
            .lines()
            .find(|line| line.contains("H100 SXM"))
            .expect("an H100 SXM row");
        for figure in [
            "80",
            "3.35",
            "67",
            "494.5",
            "989.5",
            "1979",
            "450",
            "NVIDIA H100",
        ] {
            assert!(h100.contains(figure), "{figure} in {h100}");
        }
        let v100 = text
            .lines()
            .find(|line| line.contains("V100 SXM2"))
            .unwrap();
        assert!(v100.contains("125 (fp16)"), "{v100}");
        assert!(v100.contains('—'), "{v100}");
        assert!(text.contains("Dense peaks in TFLOP/s"));
    }

    #[test]
    fn narrow_terminals_list_sources_under_the_table() {
        let catalog = builtin_catalog();
        let text = render(&catalog, 80);
        let (table, sources) = text.split_once("\nSources:\n").expect("a source list");
        assert!(
            table.lines().all(|line| line.chars().count() <= 80),
            "{table}"
        );
        assert!(!table.contains("datasheet"), "{table}");
        assert_eq!(sources.lines().count(), catalog.gpus.len());
        assert!(
            sources.contains("  B200: NVIDIA HGX product page"),
            "{sources}"
        );
    }

    #[test]
    fn numbers_drop_trailing_zeros() {
        assert_eq!(number(990.0, 2), "990");
        assert_eq!(number(494.5, 2), "494.5");
        assert_eq!(number(362.05, 2), "362.05");
        assert_eq!(number(1.6384, 3), "1.638");
        assert_eq!(number(2.0, 3), "2");
    }
}
