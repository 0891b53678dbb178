//! Text from files made safe to show: control characters escaped, quoted excerpts shortened,
//! whole messages bounded. Every message that quotes a user's file goes through
//! [`clean_message`] before it reaches a terminal or the window.

/// The most characters of one quoted excerpt a message shows (then `…`).
pub const MAX_EXCERPT_CHARS: usize = 60;
/// The most characters a whole message shows (then `…`).
pub const MAX_MESSAGE_CHARS: usize = 400;

/// `x` for a message, short: integers below a million as they are (`5000`), others to three
/// significant digits (`0.125`, `1.25e9`, `3.4e38` for f32's largest, not its 39 digits),
/// `inf`, `-inf` and `NaN` as Rust writes them.
#[must_use]
pub fn short_number(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if x == x.trunc() && a < 1e6 {
        return format!("{x}");
    }
    if (1e-3..1e6).contains(&a) {
        // Three significant digits, trailing zeros dropped.
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        return trim_zeros(&format!("{x:.decimals$}"));
    }
    let text = format!("{x:.2e}");
    match text.split_once('e') {
        Some((mantissa, exponent)) => format!("{}e{exponent}", trim_zeros(mantissa)),
        None => text,
    }
}

/// An `f32` for a message, exactly but short: in exponent form past 1e16 or below 1e-6
/// (`3e38`, `3.4028235e38`; Rust writes 3e38 as 39 digits), as Rust writes it otherwise.
#[must_use]
pub fn short_f32(x: f32) -> String {
    let a = x.abs();
    if a.is_finite() && (a >= 1e16 || (a != 0.0 && a < 1e-6)) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// For a word that is not a number: when it holds a space other than ASCII's (a no-break
/// space, U+00A0, as word processors put between numbers), a note that says so; else "".
#[must_use]
pub fn odd_space_note(word: &str) -> String {
    match word.chars().find(|c| c.is_whitespace() && !c.is_ascii()) {
        Some(c) => format!(
            " (it holds the space U+{:04X}, not an ASCII space: separate numbers with spaces or \
             tabs)",
            u32::from(c)
        ),
        None => String::new(),
    }
}

/// `1.50` as `1.5`, `2.00` as `2`.
fn trim_zeros(text: &str) -> String {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text.to_owned()
    }
}

/// `text` with every control character written as an escape (`\n`, `\t`, `\u{1b}`, ...), so
/// that no byte of a file can move the cursor, change colours, set a window title (ESC, OSC)
/// or ring the bell (BEL) when a message is printed.
#[must_use]
pub fn escape_controls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        // C0, DEL, C1 and the Unicode bidirectional overrides and isolates (which can make
        // a message read differently from what it says).
        c if c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}') => {
            out.push_str(&c.escape_unicode().to_string());
        }
        c => out.push(c),
    }
}

/// At most `max` characters of `text` (control characters escaped), with `…` when cut.
#[must_use]
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (count, c) in text.chars().enumerate() {
        if count == max {
            out.push('…');
            return out;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// A message made safe to print: control characters escaped; each quoted part (between a
/// pair of `"` or of `` ` ``) longer than [`MAX_EXCERPT_CHARS`] cut to that with `…`; the
/// whole cut to [`MAX_MESSAGE_CHARS`] characters with `…`.
#[must_use]
pub fn clean_message(message: &str) -> String {
    let chars: Vec<char> = message.chars().collect();
    let mut out = String::new();
    let mut shown = 0usize;
    let mut i = 0;
    while i < chars.len() {
        if shown >= MAX_MESSAGE_CHARS {
            out.push('…');
            return out;
        }
        let c = chars[i];
        if c == '"' || c == '`' {
            // A quoted part: up to the matching quote (or the end of the message).
            let end = chars[i + 1..]
                .iter()
                .position(|&d| d == c)
                .map_or(chars.len(), |k| i + 1 + k);
            let inner: String = chars[i + 1..end].iter().collect();
            out.push(c);
            let cut = excerpt(&inner, MAX_EXCERPT_CHARS);
            shown += 1 + cut.chars().count().min(MAX_EXCERPT_CHARS + 1);
            out.push_str(&cut);
            if end < chars.len() {
                out.push(c);
                shown += 1;
            }
            i = end + 1;
            continue;
        }
        push_escaped(&mut out, c);
        shown += 1;
        i += 1;
    }
    out
}

/// `n` and the noun for it: `1 step`, `0 steps`, `2 steps`.
#[must_use]
pub fn count(n: u64, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn f32_in_messages_are_exact_and_short() {
        assert_eq!(super::short_f32(3e38), "3e38");
        assert_eq!(super::short_f32(f32::MAX), "3.4028235e38");
        assert_eq!(super::short_f32(-1e20), "-1e20");
        assert_eq!(super::short_f32(1e-9), "1e-9");
        assert_eq!(super::short_f32(0.5), "0.5");
        assert_eq!(super::short_f32(12345.0), "12345");
        assert_eq!(super::short_f32(0.0), "0");
        assert_eq!(super::short_f32(f32::INFINITY), "inf");
    }

    #[test]
    fn numbers_in_messages_are_short() {
        let cases: [(f64, &str); 12] = [
            (5000.0, "5000"),
            (-12.0, "-12"),
            (0.125, "0.125"),
            (1.5, "1.5"),
            (123.456, "123"),
            (0.001234, "0.00123"),
            (50_000_000.0, "5e7"),
            (1_250_000_000.0, "1.25e9"),
            (f64::from(f32::MAX), "3.4e38"),
            (-f64::from(f32::MAX), "-3.4e38"),
            (1e-9, "1e-9"),
            (f64::INFINITY, "inf"),
        ];
        for (x, want) in cases {
            assert_eq!(super::short_number(x), want, "{x}");
        }
    }

    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_controls("a\u{1b}[31mb\u{7}"), "a\\u{1b}[31mb\\u{7}");
        assert_eq!(escape_controls("x\ny\tz"), "x\\ny\\tz");
        assert_eq!(escape_controls("\u{9b}\u{202e}ok"), "\\u{9b}\\u{202e}ok");
        assert_eq!(escape_controls("plain ünïcode"), "plain ünïcode");
    }

    #[test]
    fn long_quoted_parts_are_cut() {
        let long = "A".repeat(1_000_000);
        let msg = clean_message(&format!("unknown field `{long}`, expected one of `id`"));
        assert_eq!(
            msg,
            format!("unknown field `{}…`, expected one of `id`", "A".repeat(60))
        );
        let msg = clean_message(&format!("Unexpected field named \"{long}\""));
        assert_eq!(
            msg,
            format!("Unexpected field named \"{}…\"", "A".repeat(60))
        );
        // An unclosed quote is cut too.
        let msg = clean_message(&format!("name \"{long}"));
        assert_eq!(msg, format!("name \"{}…", "A".repeat(60)));
    }

    #[test]
    fn whole_messages_are_bounded() {
        let msg = clean_message(&"word ".repeat(10_000));
        assert_eq!(msg.chars().count(), MAX_MESSAGE_CHARS + 1);
        assert!(msg.ends_with('…'));
        let quoted = format!("`{}` ", "q".repeat(100)).repeat(100);
        assert!(clean_message(&quoted).chars().count() <= MAX_MESSAGE_CHARS + 70);
    }

    #[test]
    fn excerpt_counts_characters() {
        assert_eq!(excerpt("ééé", 2), "éé…");
        assert_eq!(excerpt("ab", 2), "ab");
        assert_eq!(excerpt("a\u{1b}", 5), "a\\u{1b}");
    }
}
