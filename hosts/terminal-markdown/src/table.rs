//! Tables: columns as wide as their widest cell in display columns (a CJK character takes
//! two), cells aligned as the delimiter row says, box-drawing rules between them.

use crate::inline::{Look, Runs, paint, paint_runs, runs_width};
use pulldown_cmark::Alignment;

pub(crate) struct Table {
    pub alignments: Vec<Alignment>,
    pub head: Vec<Runs>,
    pub rows: Vec<Vec<Runs>>,
}

/// The table as lines (without any container's prefix). Tables are not wrapped: a row cut
/// in two reads worse than one the terminal folds.
pub(crate) fn render(table: &Table, color: bool) -> Vec<String> {
    let columns = table
        .rows
        .iter()
        .map(Vec::len)
        .chain([table.head.len(), table.alignments.len()])
        .max()
        .unwrap_or(0);
    let mut widths = vec![0; columns];
    for row in std::iter::once(&table.head).chain(&table.rows) {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(runs_width(cell));
        }
    }
    let rule = paint("│", Look::DIM, color);
    let empty = Runs::new();
    let line = |row: &Vec<Runs>| {
        let mut out = String::new();
        for (i, width) in widths.iter().enumerate() {
            let cell = row.get(i).unwrap_or(&empty);
            let free = width - runs_width(cell);
            let (left, right) = match table.alignments.get(i) {
                Some(Alignment::Right) => (free, 0),
                Some(Alignment::Center) => (free / 2, free - free / 2),
                _ => (0, free),
            };
            if i > 0 {
                out.push(' ');
                out.push_str(&rule);
                out.push(' ');
            }
            out.push_str(&" ".repeat(left));
            out.push_str(&paint_runs(cell, color));
            // No padding after the last cell: trailing blanks only get in a copy's way.
            if i + 1 < columns {
                out.push_str(&" ".repeat(right));
            }
        }
        out
    };
    let mut lines = vec![line(&table.head)];
    let separator: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
    lines.push(paint(&separator.join("─┼─"), Look::DIM, color));
    lines.extend(table.rows.iter().map(line));
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(s: &str) -> Runs {
        vec![(s.to_string(), Look::default())]
    }

    #[test]
    fn columns_align_by_display_width() {
        let table = Table {
            alignments: vec![Alignment::None, Alignment::Right],
            head: vec![cell("名前"), cell("n")],
            rows: vec![vec![cell("ab"), cell("10")], vec![cell("日本語"), cell("2")]],
        };
        let lines = render(&table, false);
        assert_eq!(
            lines,
            ["名前   │  n", "───────┼───", "ab     │ 10", "日本語 │  2"]
        );
    }
}
