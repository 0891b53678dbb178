//! Text from files made safe to show: control characters escaped, quoted excerpts shortened,
//! whole messages bounded. Every message that quotes a user's file goes through
//! [`clean_message`] before it reaches a terminal or the window.

/// The most characters of one quoted excerpt a message shows (then `…`).
pub const MAX_EXCERPT_CHARS: usize = 60;
/// The most characters a whole message shows (then `…`).
pub const MAX_MESSAGE_CHARS: usize = 400;

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

#[cfg(test)]
mod tests {
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
