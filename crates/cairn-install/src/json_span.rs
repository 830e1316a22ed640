//! A JSON reader that keeps byte spans, so a settings file can be edited in place: new members
//! and items are inserted as text, removed ones cut out, and every other byte stays as it was.
//! Input must already be valid JSON (checked with serde_json first).

/// A value and where it is in the text.
#[derive(Debug, Clone)]
pub enum Node {
    Object {
        start: usize,
        end: usize,
        members: Vec<Member>,
    },
    Array {
        start: usize,
        end: usize,
        items: Vec<Node>,
    },
    Scalar {
        start: usize,
        end: usize,
    },
}

/// `"key": value` in an object.
#[derive(Debug, Clone)]
pub struct Member {
    pub key: String,
    pub key_start: usize,
    pub value: Node,
}

impl Node {
    pub fn start(&self) -> usize {
        match self {
            Node::Object { start, .. } | Node::Array { start, .. } | Node::Scalar { start, .. } => {
                *start
            }
        }
    }

    pub fn end(&self) -> usize {
        match self {
            Node::Object { end, .. } | Node::Array { end, .. } | Node::Scalar { end, .. } => *end,
        }
    }

    pub fn member(&self, key: &str) -> Option<&Member> {
        match self {
            Node::Object { members, .. } => members.iter().find(|m| m.key == key),
            _ => None,
        }
    }

    /// The decoded string of a scalar string node.
    pub fn as_str(&self, text: &str) -> Option<String> {
        match self {
            Node::Scalar { start, end } if text[*start..].starts_with('"') => {
                serde_json::from_str(&text[*start..*end]).ok()
            }
            _ => None,
        }
    }
}

/// Parses valid JSON text into spans.
pub fn parse(text: &str) -> Option<Node> {
    let mut p = SpanParser {
        b: text.as_bytes(),
        text,
        i: 0,
    };
    p.ws();
    let n = p.value()?;
    p.ws();
    (p.i == p.b.len()).then_some(n)
}

struct SpanParser<'a> {
    b: &'a [u8],
    text: &'a str,
    i: usize,
}

impl SpanParser<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn value(&mut self) -> Option<Node> {
        let start = self.i;
        match *self.b.get(self.i)? {
            b'{' => {
                self.i += 1;
                let mut members = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Some(Node::Object {
                        start,
                        end: self.i,
                        members,
                    });
                }
                loop {
                    self.ws();
                    let key_start = self.i;
                    self.string()?;
                    let key: String = serde_json::from_str(&self.text[key_start..self.i]).ok()?;
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return None;
                    }
                    self.i += 1;
                    self.ws();
                    let value = self.value()?;
                    members.push(Member {
                        key,
                        key_start,
                        value,
                    });
                    self.ws();
                    match self.b.get(self.i)? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(Node::Object {
                                start,
                                end: self.i,
                                members,
                            });
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Some(Node::Array {
                        start,
                        end: self.i,
                        items,
                    });
                }
                loop {
                    self.ws();
                    items.push(self.value()?);
                    self.ws();
                    match self.b.get(self.i)? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(Node::Array {
                                start,
                                end: self.i,
                                items,
                            });
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => {
                self.string()?;
                Some(Node::Scalar { start, end: self.i })
            }
            _ => {
                while self.i < self.b.len()
                    && !matches!(
                        self.b[self.i],
                        b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'
                    )
                {
                    self.i += 1;
                }
                (self.i > start).then_some(Node::Scalar { start, end: self.i })
            }
        }
    }

    fn string(&mut self) -> Option<()> {
        if self.b.get(self.i) != Some(&b'"') {
            return None;
        }
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    return Some(());
                }
                _ => self.i += 1,
            }
        }
        None
    }
}

/// A text replacement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    pub start: usize,
    pub end: usize,
    pub text: String,
}

/// Applies non-overlapping edits.
pub fn apply(text: &str, mut edits: Vec<Edit>) -> String {
    edits.sort_by_key(|e| std::cmp::Reverse(e.start));
    let mut out = text.to_owned();
    for e in edits {
        out.replace_range(e.start..e.end, &e.text);
    }
    out
}

/// The leading whitespace of the line that contains `pos`.
pub fn line_indent(text: &str, pos: usize) -> &str {
    let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line_start..];
    let n = rest.len() - rest.trim_start_matches([' ', '\t']).len();
    &rest[..n]
}

/// The file's indentation unit: the indentation of its first indented line (two spaces if none).
pub fn indent_unit(text: &str) -> String {
    for l in text.lines() {
        let n = l.len() - l.trim_start_matches([' ', '\t']).len();
        if n > 0 && !l.trim().is_empty() {
            return l[..n].to_owned();
        }
    }
    "  ".to_owned()
}

/// Inserts `entries` (already rendered, each starting at the child indentation) at the end of
/// a container (object members or array items).
pub fn append_to(text: &str, container: &Node, entries: &[String], unit: &str) -> Edit {
    let (start, end, last_end, last_start) = match container {
        Node::Object {
            start,
            end,
            members,
        } => (
            *start,
            *end,
            members.last().map(|m| m.value.end()),
            members.last().map(|m| m.key_start),
        ),
        Node::Array { start, end, items } => (
            *start,
            *end,
            items.last().map(Node::end),
            items.last().map(Node::start),
        ),
        Node::Scalar { start, .. } => (*start, *start, None, None),
    };
    match (last_end, last_start) {
        (Some(le), Some(ls)) => {
            let child = line_indent(text, ls);
            let mut s = String::new();
            for e in entries {
                s.push_str(",\n");
                s.push_str(child);
                s.push_str(e);
            }
            Edit {
                start: le,
                end: le,
                text: s,
            }
        }
        _ => {
            let own = line_indent(text, start);
            let child = format!("{own}{unit}");
            let mut s = String::from("\n");
            for (k, e) in entries.iter().enumerate() {
                if k > 0 {
                    s.push_str(",\n");
                }
                s.push_str(&child);
                s.push_str(e);
            }
            s.push('\n');
            s.push_str(own);
            Edit {
                start: start + 1,
                end: end - 1,
                text: s,
            }
        }
    }
}

/// Removes member/item `idx` from a container, with the separator it brought.
pub fn remove_from(container: &Node, idx: usize) -> Option<Edit> {
    let (start, end, spans): (usize, usize, Vec<(usize, usize)>) = match container {
        Node::Object {
            start,
            end,
            members,
        } => (
            *start,
            *end,
            members
                .iter()
                .map(|m| (m.key_start, m.value.end()))
                .collect(),
        ),
        Node::Array { start, end, items } => (
            *start,
            *end,
            items.iter().map(|n| (n.start(), n.end())).collect(),
        ),
        Node::Scalar { .. } => return None,
    };
    let n = spans.len();
    if idx >= n {
        return None;
    }
    Some(if n == 1 {
        Edit {
            start: start + 1,
            end: end - 1,
            text: String::new(),
        }
    } else if idx == n - 1 {
        Edit {
            start: spans[idx - 1].1,
            end: spans[idx].1,
            text: String::new(),
        }
    } else {
        Edit {
            start: spans[idx].0,
            end: spans[idx + 1].0,
            text: String::new(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_and_round_trip() {
        let t = "{\n  \"a\": 1,\n  \"b\": [true, {\"c\": \"x\\\"y\"}]\n}\n";
        let n = parse(t).unwrap();
        let b = n.member("b").unwrap();
        assert_eq!(
            &t[b.value.start()..b.value.end()],
            "[true, {\"c\": \"x\\\"y\"}]"
        );
        let e = append_to(t, &n, &["\"z\": null".into()], "  ");
        let t2 = apply(t, vec![e]);
        assert_eq!(
            t2,
            "{\n  \"a\": 1,\n  \"b\": [true, {\"c\": \"x\\\"y\"}],\n  \"z\": null\n}\n"
        );
        let n2 = parse(&t2).unwrap();
        let e = remove_from(&n2, 2).unwrap();
        assert_eq!(apply(&t2, vec![e]), t);
    }

    #[test]
    fn empty_containers() {
        let t = "{}";
        let n = parse(t).unwrap();
        let t2 = apply(t, vec![append_to(t, &n, &["\"k\": 1".into()], "  ")]);
        assert_eq!(t2, "{\n  \"k\": 1\n}");
        let n2 = parse(&t2).unwrap();
        assert_eq!(apply(&t2, vec![remove_from(&n2, 0).unwrap()]), "{}");
    }
}
