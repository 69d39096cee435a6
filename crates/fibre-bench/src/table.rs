//! Plain-text tables with aligned columns.

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Text: flush left.
    Left,
    /// Figures: flush right, so digits line up.
    Right,
}

/// A table: a header row, then rows of cells, rendered with two spaces
/// between columns and a rule under the header.
///
/// ```
/// use fibre_bench::table::{Align, Table};
/// let mut t = Table::new(&[("engine", Align::Left), ("M/s", Align::Right)]);
/// t.row(vec!["fibre".into(), "123.4".into()]);
/// t.row(vec!["poptrie".into(), "9.1".into()]);
/// assert_eq!(
///     t.render(),
///     "engine     M/s\n-------  -----\nfibre    123.4\npoptrie    9.1\n"
/// );
/// ```
#[derive(Debug, Clone)]
pub struct Table {
    header: Vec<String>,
    align: Vec<Align>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles and alignments.
    pub fn new(columns: &[(&str, Align)]) -> Self {
        Self {
            header: columns.iter().map(|(t, _)| (*t).to_string()).collect(),
            align: columns.iter().map(|(_, a)| *a).collect(),
            rows: Vec::new(),
        }
    }

    /// Adds a row; missing cells render empty, extra cells are dropped.
    pub fn row(&mut self, mut cells: Vec<String>) {
        cells.resize(self.header.len(), String::new());
        self.rows.push(cells);
    }

    /// The number of rows added.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True before any row is added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as text, one line per row, each ending in a newline.
    pub fn render(&self) -> String {
        let widths: Vec<usize> = (0..self.header.len())
            .map(|c| {
                std::iter::once(&self.header[c])
                    .chain(self.rows.iter().map(|r| &r[c]))
                    .map(|cell| cell.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        let mut out = String::new();
        for cells in std::iter::once(&self.header)
            .chain(std::iter::once(&rule))
            .chain(&self.rows)
        {
            let line: Vec<String> = cells
                .iter()
                .zip(&widths)
                .zip(&self.align)
                .map(|((cell, width), align)| match align {
                    Align::Left => format!("{cell:<width$}"),
                    Align::Right => format!("{cell:>width$}"),
                })
                .collect();
            out.push_str(line.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_the_widest_cell_and_short_rows_are_padded() {
        let mut t = Table::new(&[("a", Align::Left), ("b", Align::Right), ("c", Align::Left)]);
        t.row(vec!["long cell".into(), "1".into()]);
        t.row(vec![
            "x".into(),
            "12345".into(),
            "z".into(),
            "dropped".into(),
        ]);
        assert_eq!(t.len(), 2);
        let text = t.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "a              b  c");
        assert_eq!(lines[1], "---------  -----  -");
        assert_eq!(lines[2], "long cell      1");
        assert_eq!(lines[3], "x          12345  z");
        assert!(!text.contains("dropped"));
    }

    #[test]
    fn an_empty_table_is_its_header() {
        let t = Table::new(&[("only", Align::Right)]);
        assert!(t.is_empty());
        assert_eq!(t.render(), "only\n----\n");
    }
}
