//! The corpus: cases on which fibre's worker and the kernel once
//! differed, `tests/forward_corpus/*.case`, replayed every run against a
//! fresh kernel router (the kernel, asked afresh, is the expectation).
//! New cases, which still differ, are written to
//! `tests/forward_corpus/pending/` (replayed on request, `--ignored`, as
//! accept_refuse's pending cases are); one that agrees is moved up.
//!
//! A case holds everything needed without the generator (which may
//! change): the router's links (name and MTU), rp_filter, the
//! configuration lines, and the frames as hex, one a line:
//!
//! ```text
//! # comments
//! link r0 1500
//! link r1 1280
//! rp_filter 0
//! line route add 172.16.0.0/12 via 10.0.1.2
//! frame 17 ipv4 routed proto 17 ttl 1
//! port 1
//! hex 02fb0000000302fc...
//! ```

use std::path::{Path, PathBuf};

use super::frames::Frame;
use super::plan::{self, LinkPlan, Plan};

/// Where the corpus lives (`FIBRE_FWD_ORACLE_CORPUS_DIR` overrides it).
pub fn directory() -> PathBuf {
    std::env::var_os("FIBRE_FWD_ORACLE_CORPUS_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/forward_corpus"),
        PathBuf::from,
    )
}

/// Where new cases are written: those that still differ.
pub fn pending_directory() -> PathBuf {
    directory().join("pending")
}

/// A case: the plan and the frames.
#[derive(Debug, Clone)]
pub struct Case {
    /// The file it came from (empty for a new one).
    pub path: PathBuf,
    /// The router's configuration.
    pub plan: Plan,
    /// The frames.
    pub frames: Vec<Frame>,
}

/// The case's text, after `comments`.
pub fn render(comments: &[String], plan: &Plan, frames: &[Frame]) -> String {
    let mut text: String = comments.iter().map(|c| format!("# {c}\n")).collect();
    for link in &plan.links {
        text.push_str(&format!("link {} {}\n", link.name, link.mtu));
    }
    text.push_str(&format!("rp_filter {}\n", plan.rp_filter));
    for line in &plan.lines {
        text.push_str(&format!("line {line}\n"));
    }
    for f in frames {
        text.push_str(&format!("frame {} {}\n", f.id, f.kind));
        if f.port != 0 {
            text.push_str(&format!("port {}\n", f.port));
        }
        let hex: String = f.bytes.iter().map(|b| format!("{b:02x}")).collect();
        text.push_str(&format!("hex {hex}\n"));
    }
    text
}

/// Reads a case back; `path` names it in errors.
pub fn parse(path: &Path, text: &str) -> Result<Case, String> {
    let mut links = Vec::new();
    let mut rp_filter = 0;
    let mut lines = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let at = || format!("{}:{}", path.display(), number + 1);
        let raw = raw.trim_end();
        if raw.is_empty() || raw.starts_with('#') {
            continue;
        }
        let (key, rest) = raw.split_once(' ').unwrap_or((raw, ""));
        match key {
            "link" => {
                let (name, mtu) = rest
                    .split_once(' ')
                    .ok_or_else(|| format!("{}: expected `link NAME MTU`", at()))?;
                let mtu = mtu
                    .parse()
                    .map_err(|e| format!("{}: MTU {mtu}: {e}", at()))?;
                let i = links.len();
                links.push(LinkPlan {
                    name: name.to_string(),
                    peer: if i == 0 { "s0".into() } else { format!("c{i}") },
                    mtu,
                    mac: plan::model_mac(plan::model_index(i)),
                    peer_mac: [0x02, 0xfc, 0, 0, 0, i as u8],
                });
            }
            "rp_filter" => {
                rp_filter = rest
                    .parse()
                    .map_err(|e| format!("{}: rp_filter {rest}: {e}", at()))?;
            }
            "line" => lines.push(rest.to_string()),
            "frame" => {
                let (id, kind) = rest.split_once(' ').unwrap_or((rest, ""));
                frames.push(Frame {
                    id: id.parse().map_err(|e| format!("{}: id {id}: {e}", at()))?,
                    kind: kind.to_string(),
                    port: 0,
                    bytes: Vec::new(),
                });
            }
            "port" => {
                let frame = frames
                    .last_mut()
                    .ok_or_else(|| format!("{}: `port` before any `frame`", at()))?;
                frame.port = rest
                    .parse()
                    .map_err(|e| format!("{}: port {rest}: {e}", at()))?;
            }
            "hex" => {
                let frame = frames
                    .last_mut()
                    .ok_or_else(|| format!("{}: `hex` before any `frame`", at()))?;
                if rest.len() % 2 != 0 {
                    return Err(format!("{}: odd number of hex digits", at()));
                }
                frame.bytes = (0..rest.len())
                    .step_by(2)
                    .map(|i| u8::from_str_radix(&rest[i..i + 2], 16))
                    .collect::<Result<_, _>>()
                    .map_err(|e| format!("{}: {e}", at()))?;
            }
            other => return Err(format!("{}: unknown key {other}", at())),
        }
    }
    if links.is_empty() || frames.is_empty() {
        return Err(format!("{}: a case needs links and frames", path.display()));
    }
    if let Some(f) = frames.iter().find(|f| f.port >= links.len()) {
        return Err(format!(
            "{}: frame {} arrives on port {} of {} links",
            path.display(),
            f.id,
            f.port,
            links.len()
        ));
    }
    Ok(Case {
        path: path.to_path_buf(),
        plan: Plan::from_parts(0, links, rp_filter, lines),
        frames,
    })
}

/// Every `*.case` file in `dir`, in name order.
pub fn load_all(dir: &Path) -> Result<Vec<Case>, String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "case"))
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
            parse(p, &text)
        })
        .collect()
}

/// The causes the corpus's cases, pending or not, were saved for (their
/// `# cause then:` comments), so that a run adds a case only for a
/// cause not there yet.
pub fn causes() -> std::collections::BTreeSet<String> {
    [directory(), pending_directory()]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path()).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| l.strip_prefix("# cause then: ").map(str::to_string))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Writes a case (aside, then renamed, so that a concurrent reader never
/// sees half a file) unless one with the same name is there; returns
/// its path when written.
pub fn save(name: &str, text: &str) -> Result<Option<PathBuf>, String> {
    let dir = pending_directory();
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let path = dir.join(name);
    if path.exists() {
        return Ok(None);
    }
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).map_err(|e| format!("{}: {e}", partial.display()))?;
    std::fs::rename(&partial, &path).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_case_reads_back_as_written() {
        let plan = plan::plan(3);
        let frames = crate::frames::frames(&plan, true, 5, 3, 1 << 24);
        let text = render(&["a comment".to_string()], &plan, &frames);
        let case = parse(Path::new("x.case"), &text).unwrap();
        assert_eq!(case.plan.lines, plan.lines);
        assert_eq!(case.plan.model_lines, plan.model_lines);
        assert_eq!(case.plan.rp_filter, plan.rp_filter);
        let macs: Vec<_> = case
            .plan
            .links
            .iter()
            .map(|l| (l.mac, l.peer_mac, l.mtu))
            .collect();
        let want: Vec<_> = plan
            .links
            .iter()
            .map(|l| (l.mac, l.peer_mac, l.mtu))
            .collect();
        assert_eq!(macs, want);
        assert!(case.frames.iter().zip(&frames).all(|(a, b)| a.id == b.id
            && a.bytes == b.bytes
            && a.kind == b.kind
            && a.port == b.port));
        let bad = parse(Path::new("y.case"), "link r0 1500\nhex 00\n").unwrap_err();
        assert!(bad.contains("y.case:2"), "{bad}");
    }
}
