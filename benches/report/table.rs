//! The report's rows, printed as one table and written as JSON and as the markdown table of
//! the guide's performance chapter (pasted there as is, so the chapter says what a run said).

use std::fmt::Write as _;

/// One figure: ours next to the same operation done the raw way, in the same run.
pub struct Row {
    /// What is measured.
    pub figure: &'static str,
    /// How the raw side does it.
    pub raw: &'static str,
    /// Our figure.
    pub ours: f64,
    /// The raw figure.
    pub theirs: f64,
    /// The unit of both figures, e.g. `us` or `GB/s`.
    pub unit: &'static str,
    /// True when more is better (bandwidth); the ratio is then theirs / ours, so that a ratio
    /// below 1 always means we are faster.
    pub higher_is_better: bool,
    /// The target, if it sets one.
    pub target: &'static str,
    /// The ratio of each round, where ours and raw ran interleaved in rounds: the row's ratio
    /// is then their median, printed with their spread. Empty for one-shot figures.
    pub rounds: Vec<f64>,
}

impl Row {
    /// Our figure beside CuPy's for the same operation (`raw` names how CuPy ran it), with no
    /// target of its own (targets are against the raw driver path or the copy): bandwidths and
    /// rates are better higher, times (`ms`, `us`) lower.
    // The NCCL bench shares this file and has no CuPy rows.
    #[allow(dead_code)]
    pub fn cupy(figure: &'static str, raw: &'static str, ours: f64, theirs: f64, unit: &'static str) -> Row {
        Row {
            figure,
            raw,
            ours,
            theirs,
            unit,
            higher_is_better: !matches!(unit, "ms" | "us"),
            target: "",
            rounds: Vec::new(),
        }
    }

    /// Time (or cost) ratio: ours relative to raw, below 1 when ours is faster; the median of
    /// the rounds' ratios when there are rounds.
    pub fn ratio(&self) -> f64 {
        if !self.rounds.is_empty() {
            return median(&self.rounds);
        }
        if self.higher_is_better {
            self.theirs / self.ours
        } else {
            self.ours / self.theirs
        }
    }

    /// The rounds' count, middle half and range, or nothing for one-shot figures.
    fn spread(&self) -> String {
        let mut r = self.rounds.clone();
        r.sort_by(f64::total_cmp);
        match (r.first(), r.last()) {
            (Some(min), Some(max)) => {
                let (q1, q3) = (r[r.len() / 4], r[(3 * r.len()) / 4]);
                format!(
                    "  [median of {} rounds; middle half {q1:.3}..{q3:.3}; all {min:.3}..{max:.3}]",
                    r.len()
                )
            }
            _ => String::new(),
        }
    }
}

/// The median of `v` (the mean of the middle two for an even count).
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// The table, as printed.
pub fn render(device: &str, rows: &[Row]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "gpu-runtime benchmark report on {device}");
    let _ = writeln!(
        s,
        "(ratio = our time / raw time: below 1.00 means ours is faster; for bandwidths, raw GB/s / our GB/s)"
    );
    let _ = writeln!(
        s,
        "{:<44} {:>12} {:>12} {:<6} {:>7}  {:<44} target",
        "figure", "ours", "raw", "unit", "ratio", "raw path"
    );
    for r in rows {
        let _ = writeln!(
            s,
            "{:<44} {:>12} {:>12} {:<6} {:>7.3}  {:<44} {}{}",
            r.figure,
            fmt_num(r.ours),
            fmt_num(r.theirs),
            r.unit,
            r.ratio(),
            r.raw,
            r.target,
            r.spread()
        );
    }
    s
}

/// The table in markdown, as `guide/performance.md` shows it: the spread in the ratio's cell.
pub fn markdown(device: &str, rows: &[Row]) -> String {
    let mut s =
        format!("On {device}; ratio = ours / raw (for bandwidths raw / ours): below 1 is faster.\n\n");
    s.push_str(
        "| figure | ours | raw | unit | ratio | raw path | target |\n|---|---:|---:|---|---:|---|---|\n",
    );
    for r in rows {
        let spread = match r.rounds.len() {
            0 => String::new(),
            n => {
                let mut v = r.rounds.clone();
                v.sort_by(f64::total_cmp);
                format!(
                    " (median of {n} rounds, middle half {:.3}..{:.3})",
                    v[n / 4],
                    v[(3 * n) / 4]
                )
            }
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {:.3}{spread} | {} | {} |",
            cell(r.figure),
            fmt_num(r.ours),
            fmt_num(r.theirs),
            r.unit,
            r.ratio(),
            cell(r.raw),
            cell(r.target),
        );
    }
    s
}

/// A text cell of the markdown table: `|` would end the cell, `[`/`]` would be read as a link
/// by rustdoc (`z[i]`) and two `*` as emphasis (`a*x[i] + b*y[i]`) in the guide's chapter,
/// which the table is pasted into.
fn cell(text: &str) -> String {
    text.replace('|', "\\|")
        .replace('[', "\\[")
        .replace(']', "\\]")
        .replace('*', "\\*")
}

fn fmt_num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The table as JSON: `{"device": ..., "rows": [{"figure": ..., ...}, ...]}`.
pub fn json(device: &str, rows: &[Row]) -> String {
    let mut s = format!("{{\n  \"device\": {},\n  \"rows\": [\n", json_str(device));
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(
            s,
            "    {{\"figure\": {}, \"ours\": {}, \"raw\": {}, \"unit\": {}, \"ratio\": {:.4}, \"rounds\": {:?}, \"raw_path\": {}, \"target\": {}}}{}",
            json_str(r.figure),
            r.ours,
            r.theirs,
            json_str(r.unit),
            r.ratio(),
            r.rounds,
            json_str(r.raw),
            json_str(r.target),
            if i + 1 < rows.len() { "," } else { "" }
        );
    }
    s.push_str("  ]\n}\n");
    s
}
