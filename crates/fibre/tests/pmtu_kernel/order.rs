//! The order of a listing is not part of the answer: the kernel lists a
//! route's exceptions in the order of their hash buckets, and the bucket
//! comes from a siphash keyed at random at each boot: `fnhe_hashfun()` for
//! IPv4 (Linux commit 6457378fe796, "ipv4: use siphash instead of Jenkins
//! in fnhe_hashfun()") and `rt6_exception_hash()` for IPv6 (commit
//! 4785305c05b2, "ipv6: use siphash in rt6_exception_hash()"). Two
//! exceptions therefore come out in either order,
//! depending on the boot. `ip route show cache` is compared as a set of
//! entries: each entry byte for byte, the entries sorted the same way on
//! both sides.

/// `text` with its entries sorted: for `ip -j` output (a JSON array) each
/// top-level element as written; for text output each entry with its
/// continuation lines (those that start with whitespace, such as
/// `    cache expires 599sec mtu 1300`). Anything that is neither is
/// returned unchanged, so a malformed answer still differs.
pub fn sorted_entries(text: &str) -> String {
    match json_elements(text) {
        Some(mut elements) => {
            elements.sort_unstable();
            let trailer = &text[text.trim_end().len()..];
            format!("[{}]{trailer}", elements.join(","))
        }
        None => {
            let mut entries = text_entries(text);
            entries.sort_unstable();
            entries.concat()
        }
    }
}

/// The top-level elements of a JSON array written on one line
/// (`[{...},{...}]`), each as its exact text; `None` when `text` is not
/// such an array.
fn json_elements(text: &str) -> Option<Vec<&str>> {
    let body = text.trim_end().strip_prefix('[')?.strip_suffix(']')?;
    let mut elements = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0usize, false, false, 0);
    for (at, byte) in body.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b',' if depth == 0 => {
                elements.push(&body[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if depth != 0 || in_string {
        return None;
    }
    if !body[start..].is_empty() {
        elements.push(&body[start..]);
    }
    Some(elements)
}

/// Text output cut into entries: a line that starts with a non-blank
/// character opens an entry, indented lines continue it. Each entry keeps
/// its line ends.
fn text_entries(text: &str) -> Vec<&str> {
    let mut entries = Vec::new();
    let mut start = 0;
    for (at, _) in text.match_indices('\n') {
        let next = at + 1;
        let continues = text[next..].starts_with([' ', '\t']);
        if !continues {
            entries.push(&text[start..next]);
            start = next;
        }
    }
    if start < text.len() {
        entries.push(&text[start..]);
    }
    entries
}

#[test]
fn either_order_of_the_kernels_exceptions_compares_equal() {
    let one = "10.0.2.2 via 10.0.1.1 dev a0 \n    cache expires 599sec mtu 1300 \n\
               10.0.3.2 via 10.0.1.1 dev a0 \n    cache expires 598sec mtu lock 552 \n";
    let other = "10.0.3.2 via 10.0.1.1 dev a0 \n    cache expires 598sec mtu lock 552 \n\
                 10.0.2.2 via 10.0.1.1 dev a0 \n    cache expires 599sec mtu 1300 \n";
    assert_eq!(sorted_entries(one), sorted_entries(other));
    let json_one = "[{\"dst\":\"10.0.2.2\",\"x\":[1,2]},{\"dst\":\"10.0.3.2\",\"s\":\"a,}\"}]\n";
    let json_other = "[{\"dst\":\"10.0.3.2\",\"s\":\"a,}\"},{\"dst\":\"10.0.2.2\",\"x\":[1,2]}]\n";
    assert_eq!(sorted_entries(json_one), sorted_entries(json_other));
    assert_eq!(sorted_entries(json_one), json_one);
}

#[test]
fn a_different_entry_still_differs() {
    let kernel = "10.0.2.2 via 10.0.1.1 dev a0 \n    cache expires 599sec mtu 1300 \n";
    let fibre = "10.0.2.2 via 10.0.1.1 dev a0 \n    cache expires 599sec mtu 1400 \n";
    assert_ne!(sorted_entries(kernel), sorted_entries(fibre));
    let entry_moved = "10.0.2.2 via 10.0.1.1 dev a0 \n10.0.3.2 dev a0\n    cache mtu 1300 \n";
    let other_owner = "10.0.2.2 via 10.0.1.1 dev a0 \n    cache mtu 1300 \n10.0.3.2 dev a0\n";
    assert_ne!(sorted_entries(entry_moved), sorted_entries(other_owner));
}
