//! `FText`: its flags and history, read and written side by side.

use crate::binary::{Reader, Writer};
use crate::error::{Error, Result};

use super::super::tree::*;
use super::super::MAX_DEPTH;
use super::{len_i32, write_fstring, Codec};

impl Codec<'_> {
    pub(super) fn text(&self, r: &mut Reader, depth: usize) -> Result<Text> {
        if depth > MAX_DEPTH {
            return Err(r.error("texts nest too deeply"));
        }
        let flags = r.u32()?;
        let history = match r.i8()? {
            -1 => {
                let invariant = if r.bool32()? {
                    Some(self.fstring(r)?)
                } else {
                    None
                };
                TextHistory::None { invariant }
            }
            0 => TextHistory::Base {
                namespace: self.fstring(r)?,
                key: self.fstring(r)?,
                source: self.fstring(r)?,
            },
            kind @ (1..=3) => {
                let pattern = Box::new(self.text(r, depth + 1)?);
                let n = r.count_i32(if kind == 2 { 1 } else { 5 })?;
                let mut arguments = Vec::with_capacity(n);
                for _ in 0..n {
                    let name = if kind == 2 {
                        None
                    } else {
                        Some(self.fstring(r)?)
                    };
                    let value = self.format_value(r, depth)?;
                    arguments.push(FormatArgument { name, value });
                }
                TextHistory::Format {
                    kind,
                    pattern,
                    arguments,
                }
            }
            10 => TextHistory::Transform {
                source: Box::new(self.text(r, depth + 1)?),
                transform: r.u8()?,
            },
            11 => TextHistory::StringTable {
                table: self.name(r)?,
                key: self.fstring(r)?,
            },
            other => {
                return Err(Error::unsupported(format!(
                    "text history type {other} is not decoded by zenpak"
                ))
                .at(r.offset() - 1))
            }
        };
        Ok(Text { flags, history })
    }

    pub(super) fn write_text(&self, w: &mut Writer, t: &Text, depth: usize) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(Error::invalid("texts nest too deeply"));
        }
        w.u32(t.flags);
        match &t.history {
            TextHistory::None { invariant } => {
                w.u8(-1i8 as u8);
                match invariant {
                    None => w.bool32(false),
                    Some(s) => {
                        w.bool32(true);
                        write_fstring(w, s);
                    }
                }
            }
            TextHistory::Base {
                namespace,
                key,
                source,
            } => {
                w.u8(0);
                for s in [namespace, key, source] {
                    write_fstring(w, s);
                }
            }
            TextHistory::Format {
                kind,
                pattern,
                arguments,
            } => {
                if !(1..=3).contains(kind) {
                    return Err(Error::invalid(format!(
                        "text format kind {kind} is not 1 (named), 2 (ordered) or 3 (argument)"
                    )));
                }
                w.u8(*kind as u8);
                self.write_text(w, pattern, depth + 1)?;
                w.i32(len_i32(arguments.len())?);
                for a in arguments {
                    match (&a.name, *kind == 2) {
                        (None, true) => {}
                        (Some(n), false) => write_fstring(w, n),
                        _ => return Err(Error::invalid(
                            "named and argument formats name each argument; ordered ones do not",
                        )),
                    }
                    self.write_format_value(w, &a.value, depth)?;
                }
            }
            TextHistory::Transform { source, transform } => {
                w.u8(10);
                self.write_text(w, source, depth + 1)?;
                w.u8(*transform);
            }
            TextHistory::StringTable { table, key } => {
                w.u8(11);
                self.write_name(w, table)?;
                write_fstring(w, key);
            }
        }
        Ok(())
    }

    fn format_value(&self, r: &mut Reader, depth: usize) -> Result<FormatValue> {
        let at = r.pos();
        Ok(match r.i8()? {
            0 => FormatValue::Int(Wide(r.i64()?)),
            1 => FormatValue::UInt(Wide(r.u64()?)),
            2 => FormatValue::Float(F32(r.f32()?)),
            3 => FormatValue::Double(F64(r.f64()?)),
            4 => FormatValue::Text(Box::new(self.text(r, depth + 1)?)),
            5 => FormatValue::Gender(r.u8()?),
            t => return Err(r.error_at(at, format!("unknown text format argument type {t}"))),
        })
    }

    fn write_format_value(&self, w: &mut Writer, v: &FormatValue, depth: usize) -> Result<()> {
        match v {
            FormatValue::Int(x) => {
                w.u8(0);
                w.i64(x.0);
            }
            FormatValue::UInt(x) => {
                w.u8(1);
                w.u64(x.0);
            }
            FormatValue::Float(x) => {
                w.u8(2);
                w.f32(x.0);
            }
            FormatValue::Double(x) => {
                w.u8(3);
                w.bytes(&x.0.to_le_bytes());
            }
            FormatValue::Text(t) => {
                w.u8(4);
                self.write_text(w, t, depth + 1)?;
            }
            FormatValue::Gender(g) => {
                w.u8(5);
                w.u8(*g);
            }
        }
        Ok(())
    }
}
