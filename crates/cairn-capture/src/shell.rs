//! A small POSIX-shell reader: enough of the grammar to split a command line into simple
//! commands (argv after quote removal), notice output redirections, and pull out the scripts of
//! command and process substitutions. It never runs or expands anything.

/// One simple command: its words after quote removal (assignments included), and whether it
/// redirects output somewhere other than `/dev/null` or another descriptor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    pub words: Vec<String>,
    pub writes_file: bool,
}

/// What a command line is made of.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    pub commands: Vec<SimpleCommand>,
    /// Scripts of `$(…)`, `` `…` ``, `<(…)` and `>(…)`, to be judged like the outer one.
    pub substitutions: Vec<String>,
    /// A `>(…)` process substitution: output fed into another process.
    pub writes_to_process: bool,
}

/// Why a line could not be read (unbalanced quotes or parentheses).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unparsable;

/// Reads a command line. Heredoc bodies are skipped.
pub fn parse(src: &str) -> Result<Script, Unparsable> {
    let mut p = Reader {
        s: src.as_bytes(),
        src,
        i: 0,
        out: Script::default(),
        cur: SimpleCommand::default(),
        heredocs: Vec::new(),
    };
    p.run()?;
    Ok(p.out)
}

struct Reader<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    out: Script,
    cur: SimpleCommand,
    /// Heredoc delimiters waiting for the end of the line (delimiter, strip tabs).
    heredocs: Vec<(String, bool)>,
}

impl Reader<'_> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.s.get(self.i + k).copied()
    }

    fn end_command(&mut self) {
        let c = std::mem::take(&mut self.cur);
        if !c.words.is_empty() || c.writes_file {
            self.out.commands.push(c);
        }
    }

    fn run(&mut self) -> Result<(), Unparsable> {
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\n' => {
                    self.i += 1;
                    self.end_command();
                    self.skip_heredocs();
                }
                b';' | b'&' | b'|' | b'(' | b')' | b'{' | b'}' => {
                    // `&>` is a redirection, `>&` is handled with `>`.
                    if c == b'&' && self.peek(1) == Some(b'>') {
                        self.i += 1;
                        self.redirect_out()?;
                        continue;
                    }
                    // `{`/`}` only separate when they stand alone.
                    if (c == b'{' || c == b'}')
                        && !matches!(self.peek(1), None | Some(b' ' | b'\t' | b'\n' | b';'))
                    {
                        self.word()?;
                        continue;
                    }
                    self.i += 1;
                    self.end_command();
                }
                b'#' => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b'>' => self.redirect_out()?,
                b'<' => self.redirect_in()?,
                b'0'..=b'9' if self.digit_redirect() => {
                    while self.peek(0).is_some_and(|d| d.is_ascii_digit()) {
                        self.i += 1;
                    }
                }
                _ => self.word()?,
            }
        }
        self.end_command();
        Ok(())
    }

    /// `2>file`, `1>>x`: digits directly followed by a redirection operator.
    fn digit_redirect(&self) -> bool {
        let mut k = 0;
        while self.peek(k).is_some_and(|d| d.is_ascii_digit()) {
            k += 1;
        }
        matches!(self.peek(k), Some(b'>' | b'<'))
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(0), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn redirect_out(&mut self) -> Result<(), Unparsable> {
        // At '>'.
        self.i += 1;
        if self.peek(0) == Some(b'(') {
            // Process substitution `>(cmd)`.
            self.i += 1;
            let inner = self.balanced(b')')?;
            self.out.substitutions.push(inner);
            self.out.writes_to_process = true;
            return Ok(());
        }
        if matches!(self.peek(0), Some(b'>' | b'|')) {
            self.i += 1;
        }
        if self.peek(0) == Some(b'&') {
            // `>&2`, `>&-`: descriptor duplication; `>& file` (csh style) writes a file.
            self.i += 1;
            self.skip_blanks();
            let t = self.read_word()?;
            if !(t.chars().all(|c| c.is_ascii_digit()) || t == "-") {
                self.cur.writes_file = true;
            }
            return Ok(());
        }
        self.skip_blanks();
        let target = self.read_word()?;
        if !matches!(
            target.as_str(),
            "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty"
        ) {
            self.cur.writes_file = true;
        }
        Ok(())
    }

    fn redirect_in(&mut self) -> Result<(), Unparsable> {
        // At '<'.
        self.i += 1;
        match self.peek(0) {
            Some(b'(') => {
                self.i += 1;
                let inner = self.balanced(b')')?;
                self.out.substitutions.push(inner);
            }
            Some(b'<') => {
                self.i += 1;
                if self.peek(0) == Some(b'<') {
                    // Here-string.
                    self.i += 1;
                    self.skip_blanks();
                    self.read_word()?;
                } else {
                    let strip = self.peek(0) == Some(b'-');
                    if strip {
                        self.i += 1;
                    }
                    self.skip_blanks();
                    let delim = self.read_word()?;
                    self.heredocs.push((delim, strip));
                }
            }
            Some(b'>') => {
                // `<>file` opens for reading and writing.
                self.i += 1;
                self.skip_blanks();
                self.read_word()?;
                self.cur.writes_file = true;
            }
            Some(b'&') => {
                self.i += 1;
                self.skip_blanks();
                self.read_word()?;
            }
            _ => {
                self.skip_blanks();
                self.read_word()?;
            }
        }
        Ok(())
    }

    fn skip_heredocs(&mut self) {
        for (delim, strip) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.i >= self.s.len() {
                    return;
                }
                let end =
                    memchr::memchr(b'\n', &self.s[self.i..]).map_or(self.s.len(), |k| self.i + k);
                let line = &self.src[self.i..end];
                self.i = (end + 1).min(self.s.len());
                let line = if strip {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                if line.trim_end_matches('\r') == delim {
                    break;
                }
            }
        }
    }

    fn word(&mut self) -> Result<(), Unparsable> {
        let w = self.read_word()?;
        self.cur.words.push(w);
        Ok(())
    }

    /// Reads one word with quote removal; substitutions inside are recorded.
    fn read_word(&mut self) -> Result<String, Unparsable> {
        let mut w = String::new();
        let start = self.i;
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'|' | b'<' | b'>' => break,
                b'&' => break,
                b'(' if self.i > start => {
                    // `foo(`: not shell syntax we care about; keep it in the word.
                    w.push('(');
                    self.i += 1;
                }
                b'(' | b')' => break,
                b'\\' => {
                    self.i += 1;
                    if let Some(n) = self.peek(0) {
                        if n != b'\n' {
                            self.push_char(&mut w);
                        } else {
                            self.i += 1;
                        }
                    }
                }
                b'\'' => {
                    self.i += 1;
                    let end = memchr::memchr(b'\'', &self.s[self.i..]).ok_or(Unparsable)?;
                    w.push_str(&self.src[self.i..self.i + end]);
                    self.i += end + 1;
                }
                b'"' => {
                    self.i += 1;
                    self.double_quoted(&mut w)?;
                }
                b'`' => {
                    self.i += 1;
                    let end = memchr::memchr(b'`', &self.s[self.i..]).ok_or(Unparsable)?;
                    self.out
                        .substitutions
                        .push(self.src[self.i..self.i + end].to_owned());
                    self.i += end + 1;
                    w.push_str("$SUBST");
                }
                b'$' if self.peek(1) == Some(b'(') => {
                    if self.peek(2) == Some(b'(') {
                        // Arithmetic: no commands inside.
                        self.i += 3;
                        self.balanced(b')')?;
                        if self.peek(0) == Some(b')') {
                            self.i += 1;
                        }
                    } else {
                        self.i += 2;
                        let inner = self.balanced(b')')?;
                        self.out.substitutions.push(inner);
                    }
                    w.push_str("$SUBST");
                }
                b'$' if self.peek(1) == Some(b'\'') => {
                    self.i += 2;
                    while self.i < self.s.len() && self.s[self.i] != b'\'' {
                        if self.s[self.i] == b'\\' {
                            self.i += 1;
                        }
                        self.i += 1;
                    }
                    if self.i >= self.s.len() {
                        return Err(Unparsable);
                    }
                    self.i += 1;
                    w.push_str("$STR");
                }
                _ => self.push_char(&mut w),
            }
        }
        Ok(w)
    }

    fn push_char(&mut self, w: &mut String) {
        let rest = &self.src[self.i..];
        if let Some(ch) = rest.chars().next() {
            w.push(ch);
            self.i += ch.len_utf8();
        } else {
            self.i += 1;
        }
    }

    fn double_quoted(&mut self, w: &mut String) -> Result<(), Unparsable> {
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'"' => {
                    self.i += 1;
                    return Ok(());
                }
                b'\\' => {
                    self.i += 1;
                    if self.i < self.s.len() {
                        self.push_char(w);
                    }
                }
                b'`' => {
                    self.i += 1;
                    let end = memchr::memchr(b'`', &self.s[self.i..]).ok_or(Unparsable)?;
                    self.out
                        .substitutions
                        .push(self.src[self.i..self.i + end].to_owned());
                    self.i += end + 1;
                }
                b'$' if self.peek(1) == Some(b'(') && self.peek(2) != Some(b'(') => {
                    self.i += 2;
                    let inner = self.balanced(b')')?;
                    self.out.substitutions.push(inner);
                }
                _ => self.push_char(w),
            }
        }
        Err(Unparsable)
    }

    /// Reads up to the `close` that balances an already consumed opener; returns the text
    /// inside. Quotes inside are respected.
    fn balanced(&mut self, close: u8) -> Result<String, Unparsable> {
        let open = if close == b')' { b'(' } else { b'{' };
        let start = self.i;
        let mut depth = 1usize;
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\\' => self.i += 2,
                b'\'' => {
                    self.i += 1;
                    let end = memchr::memchr(b'\'', &self.s[self.i..]).ok_or(Unparsable)?;
                    self.i += end + 1;
                }
                b'"' => {
                    self.i += 1;
                    while self.i < self.s.len() && self.s[self.i] != b'"' {
                        if self.s[self.i] == b'\\' {
                            self.i += 1;
                        }
                        self.i += 1;
                    }
                    self.i += 1;
                }
                c if c == open => {
                    depth += 1;
                    self.i += 1;
                }
                c if c == close => {
                    depth -= 1;
                    if depth == 0 {
                        let inner = self.src.get(start..self.i).ok_or(Unparsable)?.to_owned();
                        self.i += 1;
                        return Ok(inner);
                    }
                    self.i += 1;
                }
                _ => self.i += 1,
            }
        }
        Err(Unparsable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Vec<String>> {
        parse(s)
            .unwrap()
            .commands
            .into_iter()
            .map(|c| c.words)
            .collect()
    }

    #[test]
    fn splits_and_unquotes() {
        assert_eq!(
            words("rg -n 'a b' src && cat \"x y\" | wc -l; ls"),
            vec![
                vec!["rg", "-n", "a b", "src"],
                vec!["cat", "x y"],
                vec!["wc", "-l"],
                vec!["ls"]
            ]
        );
    }

    #[test]
    fn redirections() {
        let s = parse("ls > out.txt").unwrap();
        assert!(s.commands[0].writes_file);
        let s = parse("cargo test 2>&1 >/dev/null").unwrap();
        assert!(!s.commands[0].writes_file);
        let s = parse("echo hi 2> err.log").unwrap();
        assert!(s.commands[0].writes_file);
        let s = parse("cat <<'EOF' > f.txt\nhello > world\nEOF\nls").unwrap();
        assert!(s.commands[0].writes_file);
        assert_eq!(s.commands[1].words, vec!["ls"]);
        let s = parse("grep x <<EOF\na > b\nEOF").unwrap();
        assert!(!s.commands[0].writes_file);
    }

    #[test]
    fn substitutions() {
        let s = parse("echo $(rm -rf x) `touch y` \"$(date)\"").unwrap();
        assert_eq!(s.substitutions, vec!["rm -rf x", "touch y", "date"]);
        let s = parse("tee >(gzip > f.gz)").unwrap();
        assert!(s.writes_to_process);
    }

    #[test]
    fn unbalanced_is_an_error() {
        assert_eq!(parse("echo 'oops"), Err(Unparsable));
        assert_eq!(parse("echo $(ls"), Err(Unparsable));
    }
}
