//! Result tables printed as aligned text, Markdown or JSON.

/// A titled table of string cells; numeric-looking cells become JSON numbers.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub title: String,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub notes: Vec<String>,
}

impl Table {
    pub fn new(title: impl Into<String>, columns: &[&str]) -> Self {
        Table { title: title.into(), columns: columns.iter().map(|c| c.to_string()).collect(), ..Default::default() }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn note(&mut self, note: impl Into<String>) {
        self.notes.push(note.into());
    }

    fn widths(&self) -> Vec<usize> {
        (0..self.columns.len())
            .map(|c| {
                let cells = self.rows.iter().filter_map(|r| r.get(c)).map(|s| s.chars().count());
                cells.chain([self.columns[c].chars().count()]).max().unwrap_or(0)
            })
            .collect()
    }

    pub fn text(&self) -> String {
        let w = self.widths();
        // Columns of numbers (and "-") right-aligned, the others left-aligned.
        let numeric: Vec<bool> = (0..self.columns.len())
            .map(|i| self.rows.iter().all(|r| r.get(i).is_none_or(|c| c == "-" || c.parse::<f64>().is_ok())))
            .collect();
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells
                .iter()
                .zip(&w)
                .zip(&numeric)
                .map(|((c, w), &num)| if num { format!("{c:>w$}") } else { format!("{c:<w$}") })
                .collect();
            padded.join("  ").trim_end().to_string()
        };
        let mut out = format!("{}\n{}\n", self.title, line(&self.columns));
        for r in &self.rows {
            out += &line(r);
            out.push('\n');
        }
        for n in &self.notes {
            out += &format!("  {n}\n");
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = format!(
            "### {}\n\n| {} |\n|{}\n",
            self.title,
            self.columns.join(" | "),
            " --- |".repeat(self.columns.len())
        );
        for r in &self.rows {
            out += &format!("| {} |\n", r.join(" | "));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out += &format!("{n}\n");
            }
        }
        out
    }

    pub fn json(&self) -> String {
        let rows: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                let fields: Vec<String> =
                    self.columns.iter().zip(r).map(|(k, v)| format!("{}: {}", json_string(k), json_value(v))).collect();
                format!("{{{}}}", fields.join(", "))
            })
            .collect();
        let notes: Vec<String> = self.notes.iter().map(|n| json_string(n)).collect();
        format!(
            "{{\"title\": {}, \"rows\": [{}], \"notes\": [{}]}}",
            json_string(&self.title),
            rows.join(", "),
            notes.join(", ")
        )
    }
}

pub fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out += "\\\"",
            '\\' => out += "\\\\",
            '\n' => out += "\\n",
            c if (c as u32) < 0x20 => out += &format!("\\u{:04x}", c as u32),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_value(s: &str) -> String {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() => s.to_string(),
        _ => json_string(s),
    }
}

/// `x` with four significant digits (never rounded to zero, unlike a fixed number of
/// decimals): `3.521`, `0.0004263`, `12210`.
pub fn sig(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (3 - x.abs().log10().floor() as i32).max(0) as usize;
    format!("{x:.digits$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_quotes_text_and_keeps_numbers() {
        let mut t = Table::new("t", &["name", "GB/s"]);
        t.row(vec!["a \"b\"".into(), "12.5".into()]);
        assert_eq!(t.json(), r#"{"title": "t", "rows": [{"name": "a \"b\"", "GB/s": 12.5}], "notes": []}"#);
        assert!(t.text().contains("12.5"));
        assert!(t.markdown().contains("| a \"b\" | 12.5 |"));
    }
}
