//! Every compile-time assertion in the workspace says what it guards and
//! what to do when it stops the build, as the kernel's `dst_entry` does
//! ("if your kernel compilation stops here, please check the placement of
//! __rcuref", include/net/dst.h): a layout assertion that only says
//! `size_of::<X>() == 64` leaves whoever added a field to guess why 64 and
//! what to move. This test reads the sources and fails on an assertion in
//! const context (a `const` or `static` item, an inline `const { }` block)
//! whose message is missing or does not say, after "if this fires", what
//! the fix is.

#[path = "support/rust_source.rs"]
mod rust_source;

use rust_source::{code_only, repo_root, rust_files};

/// The words a message uses to say what to do: the invariant comes
/// before them, the fix after.
const FIX_MARKER: &str = "if this fires";

/// One compile-time assertion of a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ConstAssertion {
    /// 1-based line of the macro's name.
    line: usize,
    /// The invocation as written, whitespace collapsed.
    text: String,
    /// The message's text (string continuations joined), if it has one.
    message: Option<String>,
}

impl ConstAssertion {
    /// What is wrong with it, if anything.
    fn fault(&self) -> Option<&'static str> {
        match &self.message {
            None => Some(
                "no message: say which invariant it guards and why, then, after \
                 \"if this fires\", what to change",
            ),
            Some(m) if !m.to_lowercase().contains(FIX_MARKER) => {
                Some("its message names no fix: add \"if this fires, ...\" with what to change")
            }
            Some(_) => None,
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The identifier starting at `at` in `code` (empty if none).
fn word_at(code: &[char], at: usize) -> String {
    code[at.min(code.len())..]
        .iter()
        .take_while(|&&c| is_ident(c))
        .collect()
}

fn skip_space(code: &[char], mut at: usize) -> usize {
    while at < code.len() && code[at].is_whitespace() {
        at += 1;
    }
    at
}

/// The index just past the bracket that closes the one at `open`.
fn past_closing(code: &[char], open: usize) -> usize {
    let mut depth = 0usize;
    for (i, &c) in code.iter().enumerate().skip(open) {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The spans of `code` evaluated at compile time: the initialiser of every
/// `const` and `static` item (to its `;`) and every inline `const { }`
/// block. `const fn` bodies, const generic parameters and `*const T` are
/// not const context.
fn const_contexts(code: &[char]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let starts_word = i == 0 || !(is_ident(code[i - 1]) || code[i - 1] == '\'');
        let word = if starts_word {
            word_at(code, i)
        } else {
            String::new()
        };
        if word != "const" && word != "static" {
            i += word.len().max(1);
            continue;
        }
        let before = code[..i].iter().rev().find(|c| !c.is_whitespace()).copied();
        let mut at = skip_space(code, i + word.len());
        if word == "const" && code.get(at) == Some(&'{') {
            let end = past_closing(code, at);
            spans.push((at, end));
            i = end;
            continue;
        }
        let generic_or_pointer = matches!(before, Some('<' | ',' | '*'));
        let mut name = word_at(code, at);
        if word == "static" && name == "mut" {
            at = skip_space(code, at + name.len());
            name = word_at(code, at);
        }
        let after_name = skip_space(code, at + name.len());
        let item = !generic_or_pointer
            && !name.is_empty()
            && !matches!(name.as_str(), "fn" | "unsafe" | "extern" | "async")
            && code.get(after_name) == Some(&':')
            && code.get(after_name + 1) != Some(&':');
        if !item {
            i += word.len();
            continue;
        }
        let mut depth = 0usize;
        let mut end = after_name;
        while end < code.len() {
            match code[end] {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth = depth.saturating_sub(1),
                ';' if depth == 0 => break,
                _ => {}
            }
            end += 1;
        }
        spans.push((i, end));
        i = end;
    }
    spans
}

/// A string literal's text as the compiler reads it, for the two escapes a
/// message uses: `\` + newline (which also drops the next line's leading
/// blanks) and `\"`; whitespace is collapsed.
fn literal_text(literal: &str) -> String {
    let inner = literal
        .trim()
        .trim_start_matches('r')
        .trim_matches('#')
        .trim_matches('"');
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('\\', Some('\n')) => {
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            ('\\', Some('"')) => {
                out.push('"');
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every assertion macro inside const context in `source`.
fn const_assertions(source: &str) -> Vec<ConstAssertion> {
    let code = code_only(source);
    let original: Vec<char> = source.chars().collect();
    let text_of = |from: usize, to: usize| -> String { original[from..to].iter().collect() };
    let mut found = Vec::new();
    for (start, end) in const_contexts(&code) {
        let mut i = start;
        while i < end {
            if i > 0 && is_ident(code[i - 1]) {
                i += 1;
                continue;
            }
            let name = word_at(&code, i);
            let open = skip_space(&code, i + name.len() + 1);
            let invocation = name.contains("assert")
                && code.get(i + name.len()) == Some(&'!')
                && code.get(open) == Some(&'(');
            if !invocation {
                i += name.len().max(1);
                continue;
            }
            let close = past_closing(&code, open) - 1;
            // The arguments, split at the commas outside any bracket.
            let mut args = Vec::new();
            let (mut depth, mut from) = (0usize, open + 1);
            for (at, &c) in code.iter().enumerate().take(close).skip(open + 1) {
                match c {
                    '(' | '[' | '{' => depth += 1,
                    ')' | ']' | '}' => depth -= 1,
                    ',' if depth == 0 => {
                        args.push(text_of(from, at));
                        from = at + 1;
                    }
                    _ => {}
                }
            }
            args.push(text_of(from, close));
            if args.last().is_some_and(|a| a.trim().is_empty()) {
                args.pop(); // a trailing comma
            }
            // `assert!(cond, msg)`, `assert_eq!(a, b, msg)`: at least this
            // many arguments before the message. Any other
            // assertion macro (static_assertions' `const_assert!`) takes no
            // message, so it has none.
            let arguments_before_message = match name.as_str() {
                "assert" => Some(1),
                "assert_eq" | "assert_ne" => Some(2),
                _ => None,
            };
            // The message is the last argument: a comma of a turbofish
            // (`size_of::<A, B>`) may split the condition, never the message.
            let message = arguments_before_message
                .filter(|&k| args.len() > k)
                .and_then(|_| args.last())
                .and_then(|arg| {
                    let arg = arg.trim();
                    let literal =
                        arg.starts_with('"') || arg.starts_with("r\"") || arg.starts_with("r#");
                    literal.then(|| literal_text(arg))
                });
            found.push(ConstAssertion {
                line: 1 + original[..i].iter().filter(|&&c| c == '\n').count(),
                text: text_of(i, close + 1)
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" "),
                message,
            });
            i = close + 1;
        }
    }
    found
}

#[test]
fn every_compile_time_assertion_says_what_it_guards_and_what_to_do() {
    let root = repo_root();
    let mut files = Vec::new();
    rust_files(&root.join("crates"), &mut files);
    let mut total = 0;
    let mut faults = Vec::new();
    for path in &files {
        let relative = path
            .strip_prefix(&root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/");
        let source = std::fs::read_to_string(path).unwrap();
        let assertions = const_assertions(&source);
        total += assertions.len();
        faults.extend(assertions.iter().filter_map(|a| {
            a.fault()
                .map(|why| format!("{relative}:{}: {}\n    {why}", a.line, a.text))
        }));
    }
    // The workspace has dozens: finding none would mean the scanner broke.
    assert!(total > 40, "only {total} compile-time assertions found");
    assert!(
        faults.is_empty(),
        "{} compile-time assertion(s) that do not say what to do when they fire \
         (the kernel's model, include/net/dst.h: \"if your kernel compilation stops \
         here, please check the placement of __rcuref\"):\n{}",
        faults.len(),
        faults.join("\n")
    );
}

#[test]
fn assertions_are_found_in_every_const_context_and_only_there() {
    let source = r##"
        // const _: () = assert!(in_a_comment);
        /// const _: () = assert!(in_a_doc_comment);
        const _: () = assert!(size_of::<A>() == 8);
        pub(crate) const LIMIT: usize = {
            assert!(size_of::<B, C>() <= 16, "B fits; if this fires, shrink B");
            16
        };
        static TABLE: [u8; 2] = { assert!(X, concat!("no")); [0, 1] };
        const fn helper() -> u8 { assert!(runtime_or_const_fn); 1 }
        impl<const N: usize> Lanes<N> { fn f() { assert!(in_a_function); } }
        fn g(p: *const u8) { let _ = const { assert!(inline, r#"inline; if this fires, fix"#) }; }
        const S: &str = "const _: () = assert!(in_a_string);";
        const _: () = assert_eq!(A, B, "a message \
                                         if this fires, X");
    "##;
    let found = const_assertions(source);
    let texts: Vec<&str> = found.iter().map(|a| a.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "assert!(size_of::<A>() == 8)",
            "assert!(size_of::<B, C>() <= 16, \"B fits; if this fires, shrink B\")",
            "assert!(X, concat!(\"no\"))",
            "assert!(inline, r#\"inline; if this fires, fix\"#)",
            "assert_eq!(A, B, \"a message \\ if this fires, X\")",
        ]
    );
    assert_eq!(found[0].line, 4);
    let messages: Vec<Option<&str>> = found.iter().map(|a| a.message.as_deref()).collect();
    assert_eq!(
        messages,
        [
            None,
            Some("B fits; if this fires, shrink B"),
            None,
            Some("inline; if this fires, fix"),
            Some("a message if this fires, X"),
        ]
    );
}

#[test]
fn a_message_without_the_fix_is_a_fault_too() {
    let source = r#"
        const _: () = assert!(size_of::<A>() == 8);
        const _: () = assert!(size_of::<A>() == 8, "A is one word");
        const _: () = assert!(size_of::<A>() == 8, "A is one word: If This Fires, shrink A");
        const _: () = const_assert!(size_of::<A>() == 8);
    "#;
    let faults: Vec<Option<&str>> = const_assertions(source).iter().map(|a| a.fault()).collect();
    assert_eq!(faults.len(), 4);
    assert!(faults[0].is_some_and(|f| f.starts_with("no message")));
    assert!(faults[1].is_some_and(|f| f.contains("names no fix")));
    assert_eq!(faults[2], None);
    assert!(faults[3].is_some_and(|f| f.starts_with("no message")));
}
