//! The one table `make bench` prints: figure, value, unit, target, met?

use serde::Serialize;

/// What a figure must stay within: an upper bound, or for a ratio of speeds a lower one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Target {
    AtMost(f64),
    AtLeast(f64),
}

impl Target {
    pub fn met_by(self, value: f64) -> bool {
        match self {
            Self::AtMost(limit) => value <= limit,
            Self::AtLeast(floor) => value >= floor,
        }
    }

    fn describe(self) -> String {
        match self {
            Self::AtMost(limit) => format!("<= {}", format_value(limit)),
            Self::AtLeast(floor) => format!(">= {}", format_value(floor)),
        }
    }
}

/// One measured figure.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub figure: String,
    pub value: f64,
    pub unit: &'static str,
    pub target: Option<Target>,
}

impl Row {
    pub fn new(figure: impl Into<String>, value: f64, unit: &'static str) -> Self {
        Self {
            figure: figure.into(),
            value,
            unit,
            target: None,
        }
    }

    pub fn target(mut self, target: Target) -> Self {
        self.target = Some(target);
        self
    }

    /// `None` for figures reported without a target.
    pub fn met(&self) -> Option<bool> {
        self.target.map(|t| t.met_by(self.value))
    }
}

/// Three significant digits, without exponent for the ranges benchmarks produce.
pub fn format_value(value: f64) -> String {
    let magnitude = value.abs();
    if magnitude >= 100.0 || value == value.trunc() && magnitude < 1e9 {
        format!("{value:.0}")
    } else if magnitude >= 10.0 {
        format!("{value:.1}")
    } else if magnitude >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.3}")
    }
}

/// The rows as a Markdown table (it reads well in a terminal and pastes into BENCHMARKS.md).
pub fn render(rows: &[Row]) -> String {
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|row| {
            [
                row.figure.clone(),
                format_value(row.value),
                row.unit.to_string(),
                row.target
                    .map(Target::describe)
                    .unwrap_or_else(|| "-".to_string()),
                match row.met() {
                    Some(true) => "yes".to_string(),
                    Some(false) => "NO".to_string(),
                    None => "-".to_string(),
                },
            ]
        })
        .collect();
    let header = ["figure", "value", "unit", "target", "met?"];
    let mut widths = header.map(str::len);
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut text = String::from("|");
        for (i, (cell, width)) in cells.iter().zip(widths).enumerate() {
            // Numbers read best right-aligned.
            if i == 1 {
                text += &format!(" {cell:>width$} |");
            } else {
                text += &format!(" {cell:<width$} |");
            }
        }
        text + "\n"
    };
    let mut out = line(header);
    let rule: Vec<String> = widths
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == 1 {
                format!("{}:", "-".repeat(*w - 1))
            } else {
                "-".repeat(*w)
            }
        })
        .collect();
    out += &line([&rule[0], &rule[1], &rule[2], &rule[3], &rule[4]]);
    for row in &cells {
        out += &line([&row[0], &row[1], &row[2], &row[3], &row[4]]);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_say_whether_they_are_met() {
        assert!(Target::AtMost(1.3).met_by(1.3));
        assert!(!Target::AtMost(1.3).met_by(1.31));
        assert!(Target::AtLeast(0.9).met_by(0.9) && !Target::AtLeast(0.9).met_by(0.89));
        assert_eq!(Row::new("x", 1.0, "ms").met(), None);
    }

    #[test]
    fn the_table_aligns_its_columns_and_marks_misses() {
        let rows = [
            Row::new("warm start", 31.25, "ms").target(Target::AtMost(50.0)),
            Row::new("ratio", 1.5, "x").target(Target::AtMost(1.3)),
            Row::new("history", 123456.0, "bytes"),
        ];
        let table = render(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(
            lines
                .iter()
                .all(|l| l.chars().count() == lines[0].chars().count()),
            "{table}"
        );
        let last_cell = |line: &str| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            cells[cells.len() - 2].to_string()
        };
        assert!(lines[2].contains("31.2") && lines[2].contains("<= 50"), "{table}");
        assert_eq!(last_cell(lines[2]), "yes", "{table}");
        assert_eq!(last_cell(lines[3]), "NO", "{table}");
        assert!(lines[4].contains("123456"), "{table}");
        assert_eq!(last_cell(lines[4]), "-", "{table}");
    }
}
