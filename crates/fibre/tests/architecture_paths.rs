//! docs/ARCHITECTURE.md names, table by table, the functions one packet
//! (or one configuration line) passes through. This test keeps those
//! tables true: every row's file must exist and hold the function it
//! names, a `Type::method` inside an `impl` or `trait` block of that type,
//! a plain `function` outside any. A renamed, moved or deleted function
//! fails here with the rows to update.

#[path = "support/rust_source.rs"]
mod rust_source;

use rust_source::{code_only, repo_root, rust_files};

/// The header every path table starts with (the doc's "Table format").
const TABLE_HEADER: &str = "| Step | Function | File |";

/// What a step that does not exist yet has in its function cell.
const NOT_BUILT: &str = "*not built yet*";

/// The paths the tables must cover: each a word of some table's heading.
const REQUIRED_PATHS: [&str; 6] = [
    "Output",
    "Input",
    "batch APIs",
    "GRE transmit",
    "GRE receive",
    "writer",
];

/// One row of a path table.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    /// The `###` heading the table sits under.
    heading: String,
    /// Line number in the document (1-based).
    line: usize,
    /// The step cell, as written.
    step: String,
    /// The function cell without its backticks: `Type::method`,
    /// `function`, or [`NOT_BUILT`].
    function: String,
    /// The file cell without its backticks (`-` for a step not built).
    file: String,
}

/// The rows of every path table of `doc`, and the rows that do not follow
/// the table format (as messages).
fn path_rows(doc: &str) -> (Vec<Row>, Vec<String>) {
    let mut rows = Vec::new();
    let mut malformed = Vec::new();
    let mut heading = String::new();
    let mut in_table = false;
    for (index, text) in doc.lines().enumerate() {
        let line = index + 1;
        let trimmed = text.trim();
        if let Some(h) = trimmed.strip_prefix("#") {
            heading = h.trim_start_matches('#').trim().to_string();
        }
        if trimmed.starts_with(TABLE_HEADER) {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        if !trimmed.starts_with('|') {
            in_table = false;
            continue;
        }
        let cells: Vec<&str> = trimmed
            .trim_matches('|')
            .split('|')
            .map(str::trim)
            .collect();
        if cells
            .iter()
            .all(|c| !c.is_empty() && c.chars().all(|ch| ch == '-' || ch == ':'))
        {
            continue; // the separator row
        }
        match parse_row(&cells) {
            Ok((step, function, file)) => rows.push(Row {
                heading: heading.clone(),
                line,
                step,
                function,
                file,
            }),
            Err(why) => malformed.push(format!(
                "docs/ARCHITECTURE.md:{line}: {why}: keep the path table's format"
            )),
        }
    }
    (rows, malformed)
}

/// The step, function and file of one row's cells.
fn parse_row(cells: &[&str]) -> Result<(String, String, String), String> {
    let [step, function, file, ..] = cells else {
        return Err(format!(
            "a row with {} cells, expected step, function, file, ...",
            cells.len()
        ));
    };
    if *function == NOT_BUILT {
        if *file != "-" {
            return Err(format!("a step {NOT_BUILT} names file {file}, expected -"));
        }
        return Ok((step.to_string(), function.to_string(), file.to_string()));
    }
    let function = backticked(function)
        .filter(|f| is_function_name(f))
        .ok_or_else(|| {
            format!("function cell {function} is not a backticked `Type::method` or `function`")
        })?;
    let file = backticked(file)
        .filter(|f| f.ends_with(".rs") && !f.starts_with('/'))
        .ok_or_else(|| {
            format!("file cell {file} is not a backticked .rs path from the repository root")
        })?;
    Ok((step.to_string(), function.to_string(), file.to_string()))
}

fn backticked(cell: &str) -> Option<&str> {
    let inner = cell.strip_prefix('`')?.strip_suffix('`')?;
    (!inner.contains('`')).then_some(inner)
}

fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `function` or `Type::method`.
fn is_function_name(name: &str) -> bool {
    match name.split_once("::") {
        Some((ty, method)) => is_identifier(ty) && is_identifier(method),
        None => is_identifier(name),
    }
}

/// Tokens of code: identifiers (keywords included), lifetimes, and
/// punctuation, with `->`, `=>` and `::` as one token each.
fn tokens(code: &[char]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let c = code[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' || c == '\'' {
            let start = i;
            i += 1;
            while i < code.len() && (code[i].is_alphanumeric() || code[i] == '_') {
                i += 1;
            }
            out.push(code[start..i].iter().collect());
        } else {
            let pair: String = code[i..(i + 2).min(code.len())].iter().collect();
            if matches!(pair.as_str(), "->" | "=>" | "::") {
                out.push(pair);
                i += 2;
            } else {
                out.push(c.to_string());
                i += 1;
            }
        }
    }
    out
}

/// A `fn` of a source file and the `impl` or `trait` block around it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FnItem {
    name: String,
    /// The implemented type (or the trait's name) of the innermost `impl`
    /// or `trait` block around it; None for a free function.
    owner: Option<String>,
}

/// Every `fn` of `source` with its owner.
fn functions(source: &str) -> Vec<FnItem> {
    scan(source).functions
}

/// What [`scan`] reads of a source file.
#[derive(Debug)]
struct Scanned {
    functions: Vec<FnItem>,
    /// `{` left open at the end of the file, and `}` with no `{` to
    /// close: both 0 for any file that compiles, unless the scanner took
    /// a brace in a literal or comment for code.
    unclosed: usize,
    unopened: usize,
}

fn scan(source: &str) -> Scanned {
    let toks = tokens(&code_only(source));
    let mut unopened = 0;
    let mut found = Vec::new();
    // One entry per open `{`: the owner it opens, if an impl or trait.
    let mut blocks: Vec<Option<String>> = Vec::new();
    // An item header (`impl ...` or `trait ...`) read up to its `{`.
    let mut header: Option<Vec<&str>> = None;
    for (i, tok) in toks.iter().enumerate() {
        let tok = tok.as_str();
        let previous = i.checked_sub(1).map(|p| toks[p].as_str());
        match tok {
            "{" => blocks.push(header.take().and_then(|h| owner_of_header(&h))),
            "}" => {
                if blocks.pop().is_none() {
                    unopened += 1;
                }
            }
            ";" if header.is_some() => header = None,
            "impl" | "trait" if header.is_none() && starts_item(previous) => {
                header = Some(vec![tok]);
            }
            "fn" if header.is_none() => {
                if let Some(name) = toks.get(i + 1).filter(|n| is_identifier(n)) {
                    found.push(FnItem {
                        name: name.clone(),
                        owner: blocks.iter().rev().find_map(Clone::clone),
                    });
                }
            }
            _ => {
                if let Some(h) = header.as_mut() {
                    h.push(tok);
                }
            }
        }
    }
    Scanned {
        functions: found,
        unclosed: blocks.len(),
        unopened,
    }
}

/// Whether a keyword after `previous` begins an item: not `impl Trait` in
/// a parameter (`: impl`, `(impl`, `, impl`, `&impl`) or a return type
/// (`-> impl`).
fn starts_item(previous: Option<&str>) -> bool {
    matches!(
        previous,
        None | Some("}" | "{" | ";" | "]" | ")" | "pub" | "unsafe" | "default" | "auto")
    )
}

/// The type an `impl` header implements for, or the name of a `trait`.
fn owner_of_header(header: &[&str]) -> Option<String> {
    let (keyword, rest) = header.split_first()?;
    if *keyword == "trait" {
        return rest.first().map(|s| s.to_string());
    }
    // Skip the impl's own generic parameters.
    let mut rest = rest;
    if rest.first() == Some(&"<") {
        let mut depth = 0;
        let end = rest.iter().position(|t| {
            match *t {
                "<" => depth += 1,
                ">" => depth -= 1,
                _ => {}
            }
            depth == 0
        })?;
        rest = &rest[end + 1..];
    }
    // `impl Trait for Type`: the type after `for` (outside any `<...>`).
    let mut depth = 0i32;
    let for_at = rest.iter().position(|t| {
        match *t {
            "<" => depth += 1,
            ">" => depth -= 1,
            _ => {}
        }
        depth == 0 && *t == "for"
    });
    let ty = match for_at {
        Some(at) => &rest[at + 1..],
        None => rest,
    };
    let ty: Vec<&str> = ty
        .iter()
        .copied()
        .skip_while(|t| matches!(*t, "&" | "mut" | "dyn") || t.starts_with('\''))
        .collect();
    // A path `a::b::Type`: its last segment.
    let mut name = None;
    let mut i = 0;
    while let Some(segment) = ty.get(i).filter(|t| is_identifier(t)) {
        name = Some(segment.to_string());
        if ty.get(i + 1) != Some(&"::") {
            break;
        }
        i += 2;
    }
    name
}

/// Why `source` (the text of `file`) does not hold `function` as the doc
/// names it, or None when it does.
fn mismatch(source: &str, file: &str, function: &str) -> Option<String> {
    let fns = functions(source);
    let stale = |what: String| {
        Some(format!(
            "docs/ARCHITECTURE.md names {function} in {file} but {file} has {what}: update the path table"
        ))
    };
    match function.split_once("::") {
        Some((ty, method)) => {
            if !fns.iter().any(|f| f.name == method) {
                return stale(format!("no fn {method}"));
            }
            if !fns
                .iter()
                .any(|f| f.name == method && f.owner.as_deref() == Some(ty))
            {
                let owners: Vec<String> = fns
                    .iter()
                    .filter(|f| f.name == method)
                    .map(|f| {
                        f.owner
                            .clone()
                            .unwrap_or_else(|| "no impl (a free fn)".into())
                    })
                    .collect();
                return stale(format!(
                    "no fn {method} in an impl or trait of {ty} (only in {})",
                    owners.join(", ")
                ));
            }
            None
        }
        None => {
            if !fns.iter().any(|f| f.name == function) {
                return stale(format!("no fn {function}"));
            }
            if !fns.iter().any(|f| f.name == function && f.owner.is_none()) {
                let owners: Vec<String> = fns
                    .iter()
                    .filter(|f| f.name == function)
                    .filter_map(|f| f.owner.clone())
                    .collect();
                return stale(format!(
                    "no free fn {function} (only methods of {}: name it Type::{function})",
                    owners.join(", ")
                ));
            }
            None
        }
    }
}

#[test]
fn every_function_the_path_tables_name_is_where_they_say() {
    let root = repo_root();
    let doc_path = root.join("docs/ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&doc_path)
        .unwrap_or_else(|e| panic!("{}: {e}", doc_path.display()));
    let (rows, mut problems) = path_rows(&doc);
    for path in REQUIRED_PATHS {
        if !rows.iter().any(|r| r.heading.contains(path)) {
            problems.push(format!(
                "docs/ARCHITECTURE.md has no path table under a heading naming \"{path}\""
            ));
        }
    }
    for row in rows.iter().filter(|r| r.function != NOT_BUILT) {
        let path = root.join(&row.file);
        let at = format!("(line {}, {} step {})", row.line, row.heading, row.step);
        match std::fs::read_to_string(&path) {
            Err(_) => problems.push(format!(
                "docs/ARCHITECTURE.md names {} in {} but {} does not exist: update the path table {at}",
                row.function, row.file, row.file
            )),
            Ok(source) => {
                if let Some(why) = mismatch(&source, &row.file, &row.function) {
                    problems.push(format!("{why} {at}"));
                }
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} path-table rows no longer match the code:\n{}",
        problems.len(),
        rows.len(),
        problems.join("\n")
    );
}

// The checker itself, on made-up sources: each way a row can go stale is
// caught, and code the checker must see through does not fool it.

const SAMPLE: &str = r##"
//! Mentions fn documented_only in a comment.
use std::fmt;

/// `fn in_doc_comment` is not a function.
pub(crate) struct FamilyTable<K> { k: K }

impl<K: Key + Ord, const N: usize> FamilyTable<K> {
    pub fn longest_slot(&self, addr: K) -> Option<u32> {
        let s = "fn in_a_string() {";
        let c = '{';
        let r = r#"fn in_a_raw_string() { "#;
        None
    }

    /* fn in_a_block_comment() { /* nested */ } */
    pub fn matches(&self) -> impl Iterator<Item = &u32> + '_ {
        fn helper() {}
        std::iter::empty()
    }
}

impl fmt::Debug for dyn Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { Ok(()) }
}

impl<'a> Port for CountingDevice<'a> {
    fn transmit(&self, f: impl Fn(u8) -> u8) {}
}

pub trait Port: Send + Sync {
    fn index(&self) -> u32;
}

pub(crate) fn free_function(x: &dyn Fn(u8) -> u8) -> u8 { x(1) }
"##;

#[test]
fn methods_are_found_in_their_types_impl_or_trait() {
    for name in [
        "FamilyTable::longest_slot",
        "FamilyTable::matches",
        "CountingDevice::transmit",
        "Port::index",
        "Port::fmt",
        "free_function",
    ] {
        assert_eq!(mismatch(SAMPLE, "s.rs", name), None, "{name}");
    }
}

#[test]
fn a_stale_row_is_reported_with_what_to_do() {
    let why = mismatch(SAMPLE, "s.rs", "FamilyTable::longest").unwrap();
    assert_eq!(
        why,
        "docs/ARCHITECTURE.md names FamilyTable::longest in s.rs but s.rs has no fn longest: \
         update the path table"
    );
    // There, but under another type.
    let why = mismatch(SAMPLE, "s.rs", "Registry::transmit").unwrap();
    assert!(
        why.contains("has no fn transmit in an impl or trait of Registry (only in CountingDevice)"),
        "{why}"
    );
    // Only a trait's implementation, not its definition.
    assert!(mismatch(SAMPLE, "s.rs", "Port::transmit").is_some());
    // A method named as a free function, and the other way round.
    let why = mismatch(SAMPLE, "s.rs", "longest_slot").unwrap();
    assert!(why.contains("name it Type::longest_slot"), "{why}");
    assert!(mismatch(SAMPLE, "s.rs", "FamilyTable::free_function").is_some());
}

#[test]
fn comments_strings_and_impl_trait_types_are_not_code() {
    for hidden in [
        "documented_only",
        "in_doc_comment",
        "in_a_string",
        "in_a_raw_string",
        "in_a_block_comment",
    ] {
        assert!(mismatch(SAMPLE, "s.rs", hidden).is_some(), "{hidden}");
    }
    // `-> impl Iterator` opens no impl block: the fn inside the body still
    // belongs to FamilyTable's impl, and the braces stay balanced after it.
    let helper = functions(SAMPLE).into_iter().find(|f| f.name == "helper");
    assert_eq!(helper.unwrap().owner.as_deref(), Some("FamilyTable"));
    let free = functions(SAMPLE)
        .into_iter()
        .find(|f| f.name == "free_function");
    assert_eq!(free.unwrap().owner, None);
}

#[test]
fn rows_off_the_format_are_reported_not_skipped() {
    let doc = "\
### Output: a sample
| Step | Function | File | What it does | Kernel |
|---|---|---|---|---|
| 1 | `Fib::apply` | `crates/fibre-fib/src/fib.rs` | applies | `rtnetlink_rcv_msg` |
| 2 | Fib::apply | `crates/fibre-fib/src/fib.rs` | no backticks | |
| 3 | *not built yet* | `crates/x.rs` | a file for nothing | |
| 4 | *not built yet* | - | the neighbour | `neigh_output` |
| 5 | `Fib::apply` | `/abs/fib.rs` | absolute | |

| Step | What | not a path table |
|---|---|---|
| 1 | `nothing` | here |
";
    let (rows, malformed) = path_rows(doc);
    let names: Vec<(usize, &str, &str)> = rows
        .iter()
        .map(|r| (r.line, r.function.as_str(), r.file.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            (4, "Fib::apply", "crates/fibre-fib/src/fib.rs"),
            (7, NOT_BUILT, "-")
        ]
    );
    assert_eq!(rows[0].heading, "Output: a sample");
    assert_eq!(malformed.len(), 3, "{malformed:?}");
    assert!(malformed[0].starts_with("docs/ARCHITECTURE.md:5: function cell Fib::apply"));
    assert!(malformed[1].contains(":6: a step *not built yet* names file `crates/x.rs`"));
    assert!(malformed[2].contains(":8: file cell `/abs/fib.rs`"));
}

#[test]
fn the_scanner_balances_the_braces_of_every_workspace_source() {
    // A brace inside a literal or comment taken for code would shift the
    // blocks, and with them which type a fn is said to belong to.
    let mut files = Vec::new();
    rust_files(&repo_root().join("crates"), &mut files);
    assert!(files.len() > 100, "only {} sources found", files.len());
    let unbalanced: Vec<String> = files
        .iter()
        .filter_map(|path| {
            let source = std::fs::read_to_string(path).ok()?;
            let s = scan(&source);
            (s.unclosed != 0 || s.unopened != 0).then(|| {
                format!(
                    "{}: {} unclosed, {} unopened",
                    path.display(),
                    s.unclosed,
                    s.unopened
                )
            })
        })
        .collect();
    assert!(unbalanced.is_empty(), "{}", unbalanced.join("\n"));
}
