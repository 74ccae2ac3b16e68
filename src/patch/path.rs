//! A patch's property path: `Sword.Stats.Weight`, `Bow.Tags[0]`,
//! `Prices["Gold"]`, `["Row.With.Dots"].Damage`. Steps are separated by
//! `.`; `[n]` indexes an array, `["key"]` a map (or names a key that holds
//! `.`, `[` or `]`).

use std::fmt;

use crate::error::{Error, Result};

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Step {
    /// A property, a row, an export, a string-table key or a map key.
    Key(String),
    /// An array element.
    Index(usize),
}

/// A parsed path, at least one step long.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PropertyPath(pub Vec<Step>);

impl PropertyPath {
    /// Parses `text`; the error says which character does not fit.
    pub fn parse(text: &str) -> Result<PropertyPath> {
        let bad = |at: usize, what: &str| {
            Error::usage(format!(
                "the path `{text}` does not read: {what} at character {}",
                at + 1
            ))
            .with_hint("write `Row.Property`, `Row.Array[0]`, `Row.Map[\"key\"]`; a key holding `.` or `[` is written `[\"Key.1\"]`")
        };
        let chars: Vec<char> = text.chars().collect();
        let mut steps = Vec::new();
        let mut i = 0;
        let mut expect_key = true;
        while i < chars.len() {
            match chars[i] {
                '.' if !expect_key && !steps.is_empty() => {
                    expect_key = true;
                    i += 1;
                }
                '[' => {
                    i += 1;
                    if chars.get(i) == Some(&'"') {
                        let mut key = String::new();
                        i += 1;
                        loop {
                            match chars.get(i) {
                                None => return Err(bad(i, "an unclosed `\"`")),
                                Some('\\') if matches!(chars.get(i + 1), Some('"' | '\\')) => {
                                    key.push(chars[i + 1]);
                                    i += 2;
                                }
                                Some('"') => break,
                                Some(c) => {
                                    key.push(*c);
                                    i += 1;
                                }
                            }
                        }
                        i += 1;
                        steps.push(Step::Key(key));
                    } else {
                        let start = i;
                        while chars.get(i).is_some_and(char::is_ascii_digit) {
                            i += 1;
                        }
                        let digits: String = chars[start..i].iter().collect();
                        let index = digits
                            .parse::<usize>()
                            .map_err(|_| bad(start, "an index (a number) expected"))?;
                        steps.push(Step::Index(index));
                    }
                    if chars.get(i) != Some(&']') {
                        return Err(bad(i, "`]` expected"));
                    }
                    i += 1;
                    expect_key = false;
                }
                c if expect_key && !matches!(c, '.' | ']' | '"') => {
                    let start = i;
                    while chars
                        .get(i)
                        .is_some_and(|c| !matches!(c, '.' | '[' | ']' | '"'))
                    {
                        i += 1;
                    }
                    steps.push(Step::Key(chars[start..i].iter().collect()));
                    expect_key = false;
                }
                _ => return Err(bad(i, "a name expected")),
            }
        }
        if steps.is_empty() || expect_key {
            return Err(bad(chars.len(), "a name expected"));
        }
        Ok(PropertyPath(steps))
    }

    /// The first step's key (a row, an export, a string-table key).
    pub fn head(&self) -> Option<&str> {
        match self.0.first() {
            Some(Step::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// Whether `self` is `other` or leads into it (`Sword` of `Sword.Damage`).
    pub fn contains(&self, other: &PropertyPath) -> bool {
        other.0.starts_with(&self.0)
    }
}

impl fmt::Display for PropertyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.0.iter().enumerate() {
            match step {
                Step::Key(k) if k.contains(['.', '[', ']', '"']) || k.is_empty() => {
                    write!(f, "[\"{}\"]", k.replace('\\', "\\\\").replace('"', "\\\""))?
                }
                Step::Key(k) if i == 0 => f.write_str(k)?,
                Step::Key(k) => write!(f, ".{k}")?,
                Step::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(text: &str) -> Vec<Step> {
        PropertyPath::parse(text).unwrap().0
    }

    #[test]
    fn paths_read_keys_indices_and_quoted_keys() {
        use Step::{Index, Key};
        assert_eq!(
            steps("Sword.Stats.Weight"),
            [
                Key("Sword".into()),
                Key("Stats".into()),
                Key("Weight".into())
            ]
        );
        assert_eq!(
            steps("Bow.Tags[0]"),
            [Key("Bow".into()), Key("Tags".into()), Index(0)]
        );
        assert_eq!(
            steps(r#"["Row.1"].Prices["Gold \"bar\""][12]"#),
            [
                Key("Row.1".into()),
                Key("Prices".into()),
                Key("Gold \"bar\"".into()),
                Index(12)
            ]
        );
        assert_eq!(
            steps("Row With Space.X"),
            [Key("Row With Space".into()), Key("X".into())]
        );
    }

    #[test]
    fn bad_paths_are_usage_errors() {
        for text in ["", ".", "A.", "A..B", "A[", "A[x]", "A[\"k]", "A]", "[0"] {
            let e = PropertyPath::parse(text).unwrap_err();
            assert!(e.is_usage(), "{text}");
        }
    }

    #[test]
    fn paths_print_as_they_read() {
        for text in [
            "Sword.Stats.Weight",
            "Bow.Tags[0]",
            r#"["Row.1"].Prices["a\"b"][3]"#,
        ] {
            assert_eq!(PropertyPath::parse(text).unwrap().to_string(), text);
        }
    }
}
