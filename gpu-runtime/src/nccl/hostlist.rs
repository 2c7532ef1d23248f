//! Slurm's host list syntax (`SLURM_JOB_NODELIST`): `node[01-04,07],gpu2,rack[1-2]-n[1-3]`.
//!
//! A list is hosts separated by commas outside brackets; a host is text with bracketed sets of
//! numbers, each a comma-separated list of numbers and ranges `lo-hi`, expanded in order (several
//! sets in one host multiply, the first varying slowest). A range keeps the digits of its `lo`:
//! `[08-10]` is `08`, `09`, `10`, as Slurm writes them.

use crate::nccl::launch_error::LaunchEnvError;

/// The first host of the list: what `srun`'s rank 0 runs on when tasks are placed in order.
pub(crate) fn first_host(list: &str) -> Result<String, LaunchEnvError> {
    let hosts = parse(list)?;
    let first = hosts.first().ok_or_else(|| bad(list, 0, "it names no host"))?;
    Ok(first
        .iter()
        .map(|part| match part {
            Part::Text(t) => t.clone(),
            // A set is never empty (`parse` refuses `[]`).
            Part::Set(ranges) => ranges.first().map(|r| r.format(r.lo)).unwrap_or_default(),
        })
        .collect())
}

/// Every host of a Slurm host list (`SLURM_JOB_NODELIST`), in order: `node[01-03],gpu2` is
/// `node01`, `node02`, `node03`, `gpu2` (see the module docs for the syntax).
///
/// ```
/// let hosts = gpu_runtime::nccl::expand_slurm_hostlist("node[01-02,07],gpu2")?;
/// assert_eq!(hosts, ["node01", "node02", "node07", "gpu2"]);
/// # Ok::<(), gpu_runtime::nccl::LaunchEnvError>(())
/// ```
pub fn expand_slurm_hostlist(list: &str) -> Result<Vec<String>, LaunchEnvError> {
    expand(list, HOSTS_LIMIT)
}

/// The most hosts [`expand_slurm_hostlist`] returns: a list that names more is an error, not an
/// allocation of gigabytes.
const HOSTS_LIMIT: usize = 1 << 20;

/// Every host of the list, in order; at most `limit`.
fn expand(list: &str, limit: usize) -> Result<Vec<String>, LaunchEnvError> {
    let mut out = Vec::new();
    for host in parse(list)? {
        let mut names = vec![String::new()];
        for part in &host {
            names = match part {
                Part::Text(t) => names.into_iter().map(|n| n + t).collect(),
                Part::Set(ranges) => {
                    let mut next = Vec::new();
                    for n in &names {
                        for r in ranges {
                            for v in r.lo..=r.hi {
                                if out.len() + next.len() >= limit {
                                    return Err(bad(list, 0, "it names more hosts than the limit"));
                                }
                                next.push(format!("{n}{}", r.format(v)));
                            }
                        }
                    }
                    next
                }
            };
        }
        out.extend(names);
        if out.len() > limit {
            return Err(bad(list, 0, "it names more hosts than the limit"));
        }
    }
    Ok(out)
}

/// A piece of one host's pattern.
#[derive(Debug)]
enum Part {
    Text(String),
    Set(Vec<Range>),
}

/// `lo-hi`, printed with at least `width` digits.
#[derive(Debug)]
struct Range {
    lo: u64,
    hi: u64,
    width: usize,
}

impl Range {
    fn format(&self, v: u64) -> String {
        format!("{v:0width$}", width = self.width)
    }
}

fn bad(list: &str, position: usize, problem: &'static str) -> LaunchEnvError {
    LaunchEnvError::HostList {
        list: list.to_owned(),
        position,
        problem,
    }
}

/// The hosts of the list, each as its parts.
fn parse(list: &str) -> Result<Vec<Vec<Part>>, LaunchEnvError> {
    let bytes = list.as_bytes();
    let mut hosts = Vec::new();
    let mut parts: Vec<Part> = Vec::new();
    let mut text = String::new();
    let mut i = 0;
    // Ends the host being read at byte `at` (a comma or the end).
    let mut end_host = |parts: &mut Vec<Part>, text: &mut String, at: usize| {
        if !text.is_empty() {
            parts.push(Part::Text(std::mem::take(text)));
        }
        if parts.is_empty() {
            return Err(bad(list, at, "an empty host name"));
        }
        hosts.push(std::mem::take(parts));
        Ok(())
    };
    while i < bytes.len() {
        match bytes[i] {
            b',' => {
                end_host(&mut parts, &mut text, i)?;
                i += 1;
            }
            b'[' => {
                let close = list[i..]
                    .find(']')
                    .map(|k| i + k)
                    .ok_or_else(|| bad(list, i, "a '[' that is never closed"))?;
                if let Some(k) = list[i + 1..close].find('[') {
                    return Err(bad(list, i + 1 + k, "a '[' inside brackets"));
                }
                if !text.is_empty() {
                    parts.push(Part::Text(std::mem::take(&mut text)));
                }
                parts.push(Part::Set(ranges(list, i + 1, close)?));
                i = close + 1;
            }
            b']' => return Err(bad(list, i, "a ']' with no '[' before it")),
            c if c.is_ascii_whitespace() => return Err(bad(list, i, "a space")),
            _ => {
                // Host names are ASCII; a multi-byte character is kept whole all the same.
                let ch = list[i..].chars().next().unwrap_or('?');
                text.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    end_host(&mut parts, &mut text, bytes.len())?;
    Ok(hosts)
}

/// The ranges between the brackets, `list[start..end]`.
fn ranges(list: &str, start: usize, end: usize) -> Result<Vec<Range>, LaunchEnvError> {
    let mut out = Vec::new();
    let mut at = start;
    for item in list[start..end].split(',') {
        let number = |s: &str, pos: usize| -> Result<u64, LaunchEnvError> {
            if s.is_empty() {
                return Err(bad(list, pos, "an empty number in brackets"));
            }
            if !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad(
                    list,
                    pos,
                    "something other than digits, '-' and ',' in brackets",
                ));
            }
            s.parse().map_err(|_| bad(list, pos, "a number too large"))
        };
        let (lo_text, hi_text) = match item.split_once('-') {
            Some((lo, hi)) => (lo, hi),
            None => (item, item),
        };
        let lo = number(lo_text, at)?;
        let hi = number(hi_text, at + lo_text.len() + 1)?;
        if hi < lo {
            return Err(bad(list, at, "a range whose end is below its start"));
        }
        out.push(Range {
            lo,
            hi,
            width: lo_text.len(),
        });
        at += item.len() + 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(list: &str) -> Vec<String> {
        expand(list, 1000).unwrap()
    }

    #[test]
    fn expands_ranges_lists_and_padding() {
        assert_eq!(
            all("node[01-04,07],gpu2"),
            ["node01", "node02", "node03", "node04", "node07", "gpu2"]
        );
        assert_eq!(all("n[8-10]"), ["n8", "n9", "n10"]);
        assert_eq!(all("n[098-101]"), ["n098", "n099", "n100", "n101"]);
        assert_eq!(all("single"), ["single"]);
        assert_eq!(all("a[1-2]-b[3,5]"), ["a1-b3", "a1-b5", "a2-b3", "a2-b5"]);
        assert_eq!(all("x[1]y,z"), ["x1y", "z"]);
        assert_eq!(first_host("node[01-04,07],gpu2").unwrap(), "node01");
        assert_eq!(first_host("gpu2,node[01-04]").unwrap(), "gpu2");
        assert_eq!(first_host("r[3-4]n[007-9]").unwrap(), "r3n007");
    }

    #[test]
    fn malformed_lists_are_typed_errors() {
        for (list, position) in [
            ("node[01-04", 4),
            ("node01]", 6),
            ("node[]", 5),
            ("node[4-2]", 5),
            ("node[a-b]", 5),
            ("a,,b", 2),
            ("", 0),
            ("n[1-[2]]", 4),
            ("n[1-]", 4),
        ] {
            match first_host(list) {
                Err(LaunchEnvError::HostList { position: p, .. }) => assert_eq!(p, position, "{list}"),
                other => panic!("{list}: {other:?}"),
            }
        }
        assert!(matches!(
            expand("n[1-100000]", 1000),
            Err(LaunchEnvError::HostList { .. })
        ));
    }
}
