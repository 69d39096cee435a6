//! The one part of an answer that may differ between the kernel and fibre:
//! the seconds an exception has left (`cache expires 599sec mtu 1300`,
//! `"expires":599`). They are taken out of the text, which must then match
//! byte for byte, and checked against a range instead.

use std::ops::RangeInclusive;

/// Seconds left that an exception learnt moments ago may show: the kernel
/// gives it `ip_rt_mtu_expires` (600 s) and counts down in whole seconds;
/// the test takes well under ten of them.
pub const FRESH: RangeInclusive<u64> = 590..=600;

/// Where the seconds are written: after the first part, digits, then the
/// second (text output, then `ip -j`).
const FORMS: [(&str, &str); 2] = [("expires ", "sec"), ("\"expires\":", "")];

/// `text` with every expiry's seconds replaced by `N`, and those seconds
/// in order of appearance.
pub fn mask(text: &str) -> (String, Vec<u64>) {
    let mut masked = String::with_capacity(text.len());
    let mut seconds = Vec::new();
    let mut rest = text;
    'scan: while !rest.is_empty() {
        for (before, after) in FORMS {
            let Some(tail) = rest.strip_prefix(before) else {
                continue;
            };
            let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 || !tail[digits..].starts_with(after) {
                continue;
            }
            let Ok(value) = tail[..digits].parse() else {
                continue;
            };
            seconds.push(value);
            masked.push_str(before);
            masked.push('N');
            masked.push_str(after);
            rest = &tail[digits + after.len()..];
            continue 'scan;
        }
        let mut chars = rest.chars();
        masked.extend(chars.next());
        rest = chars.as_str();
    }
    (masked, seconds)
}

/// The seconds outside [`FRESH`], described, or `None` when all are in it.
pub fn stale(seconds: &[u64]) -> Option<String> {
    let outside: Vec<String> = seconds
        .iter()
        .filter(|s| !FRESH.contains(s))
        .map(u64::to_string)
        .collect();
    (!outside.is_empty()).then(|| {
        format!(
            "expiry seconds {} outside {}..={}",
            outside.join(", "),
            FRESH.start(),
            FRESH.end()
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_json_expiries_are_masked_and_collected() {
        let text = "10.0.2.2 via 10.0.1.1 dev a0 src 10.0.1.2 uid 0 \n    cache expires 599sec mtu 1300 \n";
        let (masked, seconds) = mask(text);
        assert_eq!(
            masked,
            "10.0.2.2 via 10.0.1.1 dev a0 src 10.0.1.2 uid 0 \n    cache expires Nsec mtu 1300 \n"
        );
        assert_eq!(seconds, vec![599]);
        let json = r#"[{"dst":"10.0.2.2","expires":599,"metrics":[{"mtu":1300}]},{"expires":12}]"#;
        let (masked, seconds) = mask(json);
        assert_eq!(
            masked,
            r#"[{"dst":"10.0.2.2","expires":N,"metrics":[{"mtu":1300}]},{"expires":N}]"#
        );
        assert_eq!(seconds, vec![599, 12]);
    }

    #[test]
    fn lookalikes_are_left_alone() {
        // No digits, or digits not followed by `sec`: not an expiry.
        for text in [
            "expires sec",
            "expires 12s",
            "expires",
            "\"expires\":\"x\"",
            "é expires",
        ] {
            assert_eq!(mask(text), (text.to_string(), vec![]), "{text}");
        }
    }

    #[test]
    fn seconds_out_of_range_are_named() {
        assert_eq!(stale(&[590, 600, 599]), None);
        assert_eq!(
            stale(&[599, 0, 601]).as_deref(),
            Some("expiry seconds 0, 601 outside 590..=600")
        );
    }
}
