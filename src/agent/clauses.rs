//! Splitting a request into clauses, for the lexical baseline's multi-tool rule.
//!
//! A clause ends at a sentence end (`.`, `?` or `!` before a space or the end), at `;` or a line break,
//! and before a connector that starts a new request: `then`, `also`, `additionally`, `furthermore`,
//! `moreover`, `as well as`, `after that`, `afterwards`, and `and` when a comma precedes it (`…, and
//! assign …`) or an imperative verb follows it (`… and delete its branch`; a fixed list of common verbs). Text inside quotes (`"…"`, `“…”`, `'…'` opened after a space) is never split, so a quoted
//! message body stays whole. Connector words stay in the clause they open; callers analyse clauses with
//! the same stop words as the query. Pure and deterministic.

/// Connectors that open a new clause (matched on word boundaries, case-insensitively).
const CONNECTORS: &[&str] = &[
    "and then",
    "then",
    "and also",
    "also",
    "additionally",
    "furthermore",
    "moreover",
    "as well as",
    "after that",
    "afterwards",
];

/// Imperative verbs: `and` followed by one of them opens a new request (`… and delete its branch`).
const VERBS: &[&str] = &[
    "add", "approve", "archive", "ask", "assign", "book", "cancel", "change", "check", "close",
    "comment", "copy", "create", "decline", "delete", "download", "edit", "email", "end", "fetch",
    "file", "find", "forward", "get", "give", "invite", "leave", "let", "list", "log", "look",
    "mail", "make", "mark", "merge", "message", "move", "notify", "open", "pay", "ping", "post",
    "put", "read", "refund", "reject", "remove", "rename", "reply", "request", "reserve",
    "restore", "run", "save", "schedule", "search", "send", "set", "share", "show", "start",
    "stop", "switch", "tag", "tell", "update", "upload", "write",
];

/// The clauses of `text`, trimmed, in order; empty pieces are dropped.
pub fn clauses(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let lower: Vec<char> = text.to_lowercase().chars().collect();
    // Lower-casing can change the length of a few characters; fall back to the text itself then.
    let lower = if lower.len() == chars.len() { lower } else { chars.clone() };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let prev = if i > 0 { chars[i - 1] } else { ' ' };
        let next = chars.get(i + 1).copied().unwrap_or(' ');
        if let Some(close) = quote {
            cur.push(c);
            if c == close && (close != '\'' || !next.is_alphanumeric()) {
                quote = None;
            }
            i += 1;
            continue;
        }
        match c {
            '"' => quote = Some('"'),
            '“' => quote = Some('”'),
            '\'' if !prev.is_alphanumeric() => quote = Some('\''),
            _ => {}
        }
        if quote.is_some() {
            cur.push(c);
            i += 1;
            continue;
        }
        if c == ';' || c == '\n' || (matches!(c, '.' | '?' | '!') && next.is_whitespace()) {
            cur.push(c);
            out.push(std::mem::take(&mut cur));
            i += 1;
            continue;
        }
        if !prev.is_alphanumeric()
            && let Some(len) = connector_at(&lower, i, &cur)
        {
            out.push(std::mem::take(&mut cur));
            cur.extend(&chars[i..i + len]);
            i += len;
            continue;
        }
        cur.push(c);
        i += 1;
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| s.chars().any(char::is_alphanumeric))
        .collect()
}

/// Length of a connector starting at `i` (on a word boundary), if one does; `and` counts only after a
/// comma (`cur` is the clause so far) or before an imperative verb.
fn connector_at(lower: &[char], i: usize, cur: &str) -> Option<usize> {
    let rest: String = lower[i..lower.len().min(i + 16)].iter().collect();
    let word_end = |len: usize| lower.get(i + len).is_none_or(|c| !c.is_alphanumeric());
    for k in CONNECTORS {
        let len = k.chars().count();
        if rest.starts_with(k) && word_end(len) {
            return Some(len);
        }
    }
    if rest.starts_with("and") && word_end(3) {
        let next: String = lower[i + 3..]
            .iter()
            .skip_while(|c| c.is_whitespace())
            .take_while(|c| c.is_alphanumeric())
            .collect();
        if cur.trim_end().ends_with(',') || VERBS.contains(&next.as_str()) {
            return Some(3);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::clauses;

    #[test]
    fn splits_at_sentences_semicolons_and_connectors() {
        assert_eq!(
            clauses("Squash-merge PR 412 in billing-api, then move PAY-219 to done."),
            vec!["Squash-merge PR 412 in billing-api,", "then move PAY-219 to done."]
        );
        assert_eq!(
            clauses("How is OPS sprint 42 doing? Also show me the OPS board."),
            vec!["How is OPS sprint 42 doing?", "Also show me the OPS board."]
        );
        assert_eq!(clauses("Archive it; label it"), vec!["Archive it;", "label it"]);
        assert_eq!(
            clauses(
                "Put OPS-1501 and OPS-1502 into OPS sprint 42, and assign OPS-1501 to dana.kim@example.com."
            ),
            vec![
                "Put OPS-1501 and OPS-1502 into OPS sprint 42,",
                "and assign OPS-1501 to dana.kim@example.com."
            ]
        );
    }

    #[test]
    fn keeps_quotes_words_and_plain_lists_whole() {
        // `and` without a comma, `thence`/`Althen` (not words on their own), quoted text, e-mail dots, decimals.
        assert_eq!(
            clauses("Compare web-app and mobile-app"),
            vec!["Compare web-app and mobile-app"]
        );
        assert_eq!(
            clauses("Close PR 201 and delete its branch"),
            vec!["Close PR 201", "and delete its branch"]
        );
        assert_eq!(clauses("Send it to Althen thence"), vec!["Send it to Althen thence"]);
        assert_eq!(
            clauses("Post 'Done. Then relax; ok' on #ops"),
            vec!["Post 'Done. Then relax; ok' on #ops"]
        );
        assert_eq!(
            clauses("Say \"Fix it. Then ship\" to ana@example.com, it's 2.5 h"),
            vec!["Say \"Fix it. Then ship\" to ana@example.com, it's 2.5 h"]
        );
        assert!(clauses("  ... ").is_empty());
    }
}
