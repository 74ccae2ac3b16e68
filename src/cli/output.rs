//! The one output layer of the command line: every command prints through
//! an [`Output`], so every command follows the same rules.
//!
//! - Human format: status lines (`    Building …`) and diagnostics
//!   (`warning: …`, `error: …`, with colour on a terminal unless `NO_COLOR`
//!   or `--color never`) go to stderr; a command's data (tables, reports) to
//!   stdout. `--quiet` silences everything but errors.
//! - `--message-format json`: stdout carries one JSON object per line and
//!   nothing else. Every line has a `reason`: `diagnostic` (errors, warnings
//!   and notes, each with `level`, `code`, `message`, `file`, `structure`,
//!   `offset`, `line`, `column`, `hint`), one line of data named by the
//!   command (`build-finished`, `check`, `list`, …), and always, last, a
//!   `finished` line of the same shape for success and failure.
//! - `--json` (where a command has it): its data as pretty JSON on stdout,
//!   the same object the JSON line would carry, diagnostics as text on stderr.
//! - Exit codes: 0 ok, 1 the work failed (including warnings under
//!   `--deny-warnings`), 2 usage or manifest error.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use zenpak::diagnostic::{printable, PrintableWriter};

use anstyle::{AnsiColor, Style};
use clap::ValueEnum;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use serde::Serialize;
use zenpak::diagnostic::{Diagnostic, Level};
use zenpak::{Error, Result};

/// How results and diagnostics are printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum MessageFormat {
    /// Text for people.
    #[default]
    Human,
    /// One JSON object per line on stdout, for CI.
    Json,
}

/// When to colour human output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    Always,
    Never,
}

/// Options every subcommand understands.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct GlobalOptions {
    /// Print nothing but errors.
    #[arg(short, long, global = true, help_heading = "Global options")]
    pub(crate) quiet: bool,
    /// Print more: every note, every file.
    #[arg(
        short,
        long,
        global = true,
        help_heading = "Global options",
        conflicts_with = "quiet"
    )]
    pub(crate) verbose: bool,
    /// Output format of messages.
    #[arg(long, value_enum, value_name = "FMT", default_value_t = MessageFormat::Human, global = true, help_heading = "Global options")]
    pub(crate) message_format: MessageFormat,
    /// Colour human output.
    #[arg(long, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto, global = true, help_heading = "Global options")]
    pub(crate) color: ColorWhen,
    /// Treat warnings as errors (exit 1 when any warning was printed); for CI.
    #[arg(long, global = true, help_heading = "Global options")]
    pub(crate) deny_warnings: bool,
}

const VERB: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Green)));
const ERROR: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Red)));
const WARNING: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Yellow)));
const NOTE: Style = Style::new()
    .bold()
    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan)));
const DIM: Style = Style::new().dimmed();

/// How many errors of one kind are printed before the rest are counted.
const SAME_ERROR_SHOWN: usize = 3;

/// The printer every command uses. Thread-safe: the build reports from its workers.
pub(crate) struct Output {
    pub(crate) format: MessageFormat,
    pub(crate) quiet: bool,
    pub(crate) verbose: bool,
    deny_warnings: bool,
    /// Whether stderr gets colour (resolved from `--color`, `NO_COLOR` and the terminal).
    color: bool,
    command: &'static str,
    warnings: AtomicUsize,
    errors: AtomicUsize,
    bar: Mutex<Option<ProgressBar>>,
}

impl Output {
    pub(crate) fn new(global: &GlobalOptions, command: &'static str) -> Output {
        let choice = match global.color {
            ColorWhen::Auto => anstream::ColorChoice::Auto,
            ColorWhen::Always => anstream::ColorChoice::Always,
            ColorWhen::Never => anstream::ColorChoice::Never,
        };
        choice.write_global();
        let color = !matches!(
            anstream::AutoStream::choice(&std::io::stderr()),
            anstream::ColorChoice::Never
        );
        Output {
            format: global.message_format,
            quiet: global.quiet,
            verbose: global.verbose,
            deny_warnings: global.deny_warnings,
            color,
            command,
            warnings: AtomicUsize::new(0),
            errors: AtomicUsize::new(0),
            bar: Mutex::new(None),
        }
    }

    pub(crate) fn is_json(&self) -> bool {
        self.format == MessageFormat::Json
    }

    /// True when human status lines and data are wanted.
    pub(crate) fn is_human_verbose_enough(&self) -> bool {
        self.format == MessageFormat::Human && !self.quiet
    }

    fn paint(&self, style: Style, text: &str) -> String {
        if self.color {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    /// Prints a line on stderr, above the progress bar if one is shown.
    fn eprint_line(&self, line: &str) {
        self.with_bar_suspended(|| eprint_raw(line));
    }

    /// A cargo-style status line: `   Building MyMod v0.1.0`, right-aligned verb.
    pub(crate) fn status(&self, verb: &str, message: impl std::fmt::Display) {
        if self.is_human_verbose_enough() {
            // Names in the message may come from a container: no raw control characters.
            self.eprint_line(&format!(
                "{} {}",
                self.paint(VERB, &format!("{verb:>12}")),
                printable(&message.to_string())
            ));
        }
    }

    /// A status line shown only with `--verbose`.
    pub(crate) fn verbose_status(&self, verb: &str, message: impl std::fmt::Display) {
        if self.verbose {
            self.status(verb, message);
        }
    }

    /// One diagnostic: a JSON line, or `level: location: message` on stderr.
    /// Warnings and notes are silenced by `--quiet` in human output; errors never are.
    pub(crate) fn diagnostic(&self, diagnostic: &Diagnostic) {
        debug_assert!(
            zenpak::codes::is_known(&diagnostic.code),
            "diagnostic code `{}` is not in zenpak::codes::ALL",
            diagnostic.code
        );
        let split = split_hint(diagnostic);
        let diagnostic = split.as_ref();
        match diagnostic.level {
            Level::Error => self.errors.fetch_add(1, Ordering::Relaxed),
            Level::Warning => self.warnings.fetch_add(1, Ordering::Relaxed),
            Level::Note => 0,
        };
        if self.is_json() {
            print_json_line(&DiagnosticLine {
                reason: "diagnostic",
                diagnostic,
            });
            return;
        }
        if self.quiet && diagnostic.level != Level::Error {
            return;
        }
        self.eprint_line(&self.render(diagnostic));
    }

    /// Several diagnostics; in human output, runs of the same error (same
    /// code and message) past the first few are folded into one count line.
    pub(crate) fn diagnostics(&self, diagnostics: &[Diagnostic]) {
        if self.is_json() || self.verbose {
            for d in diagnostics {
                self.diagnostic(d);
            }
            return;
        }
        let mut groups: Vec<(&Diagnostic, Vec<&Diagnostic>)> = Vec::new();
        for d in diagnostics {
            match groups.iter_mut().find(|(first, _)| {
                first.code == d.code && first.message == d.message && first.level == d.level
            }) {
                Some((_, members)) => members.push(d),
                None => groups.push((d, vec![d])),
            }
        }
        for (_, members) in groups {
            for d in members.iter().take(SAME_ERROR_SHOWN) {
                self.diagnostic(d);
            }
            if members.len() > SAME_ERROR_SHOWN {
                let rest = &members[SAME_ERROR_SHOWN..];
                for d in rest {
                    // Counted, not printed.
                    match d.level {
                        Level::Error => self.errors.fetch_add(1, Ordering::Relaxed),
                        Level::Warning => self.warnings.fetch_add(1, Ordering::Relaxed),
                        Level::Note => 0,
                    };
                }
                if !self.quiet || members[0].level == Level::Error {
                    self.eprint_line(&format!(
                        "{} {} more with the same {}: {} (--verbose lists them all)",
                        self.paint(DIM, "..."),
                        rest.len(),
                        members[0].level.as_str(),
                        printable(&members[0].message)
                    ));
                }
            }
        }
    }

    /// A warning from the command line itself.
    pub(crate) fn warning(&self, code: &str, message: impl Into<String>) {
        self.diagnostic(&Diagnostic::warning(code, message));
    }

    /// A note from the command line itself (shown in human output unless quiet).
    pub(crate) fn note(&self, code: &str, message: impl Into<String>) {
        self.diagnostic(&Diagnostic::note(code, message));
    }

    /// Renders a diagnostic for people: `level: location: message`, then the
    /// source line with a caret when the diagnostic points into a text file,
    /// then the hint.
    fn render(&self, d: &Diagnostic) -> String {
        let (style, label) = match d.level {
            Level::Error => (ERROR, "error"),
            Level::Warning => (WARNING, "warning"),
            Level::Note => (NOTE, "note"),
        };
        let mut out = format!("{}: ", self.paint(style, label));
        if let (Some(file), Some(line), Some(column)) = (&d.file, d.line, d.column) {
            out.push_str(&d.message);
            out.push_str(&format!(
                "\n  {} {file}:{line}:{column}",
                self.paint(DIM, "-->")
            ));
            if let Some(source) = source_line(file, line) {
                let gutter = line.to_string();
                let pad = " ".repeat(gutter.len());
                let (source, caret_at, width) = caret_window(&source, column);
                out.push_str(&format!(
                    "\n  {pad} {bar}\n  {gutter} {bar} {source}\n  {pad} {bar} {}{}",
                    " ".repeat(caret_at),
                    self.paint(style, &"^".repeat(width)),
                    bar = self.paint(DIM, "|"),
                ));
            }
        } else {
            let location = d.location();
            if !location.is_empty() {
                out.push_str(&printable(&location));
                out.push_str(": ");
            }
            out.push_str(&printable(&d.message));
        }
        if let Some(hint) = &d.hint {
            out.push_str(&format!("\n  {} {hint}", self.paint(NOTE, "hint:")));
        }
        out
    }

    /// Prints an error: each failure as its own diagnostic (folded when many
    /// are the same), then for a many-failure error one summary line.
    pub(crate) fn error(&self, error: &Error) {
        let diagnostics = Diagnostic::from_error(error);
        self.diagnostics(&diagnostics);
        if let zenpak::error::ErrorKind::Many { .. } = error.kind() {
            if !self.is_json() {
                let mut summary = format!("{}: {}", self.paint(ERROR, "error"), error.message());
                if let Some(hint) = error.hint() {
                    summary.push_str(&format!("\n  {} {hint}", self.paint(NOTE, "hint:")));
                }
                self.eprint_line(&summary);
            }
        }
    }

    /// A command's data: one JSON line `{"reason": reason, ...value}` with
    /// `--message-format json`, else `human` prints it (on stdout) unless quiet.
    /// The line is streamed to stdout as it is serialized (a report may be
    /// far larger than its input), `reason` first, then the value's fields;
    /// a value that is not an object is carried as `{"reason": …, "data": …}`.
    pub(crate) fn data<T: Serialize>(&self, reason: &str, value: &T, human: impl FnOnce()) {
        if self.is_json() {
            stream_json_line(reason, value);
        } else if !self.quiet {
            self.with_bar_suspended(human);
        }
    }

    /// [`data`](Self::data) for a command that also has its own `--json`:
    /// with it (and human messages) the same value is printed as pretty JSON,
    /// without the `reason`.
    pub(crate) fn report<T: Serialize>(
        &self,
        pretty: bool,
        reason: &str,
        value: &T,
        human: impl FnOnce(),
    ) {
        if pretty && !self.is_json() {
            // Streamed to stdout: a report may be far larger than its input.
            // (No colour codes in JSON: the plain stdout, without the strip adapter.)
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            let written = write_json(&mut out, value, true);
            if let Err(e) = &written {
                if !e.is_io() {
                    drop(out);
                    self.error(&Error::json(written.unwrap_err()));
                    return;
                }
            }
            if written.is_err() || out.write_all(b"\n").and_then(|()| out.flush()).is_err() {
                // A closed pipe ends the process quietly, as Unix tools do.
                std::process::exit(0);
            }
            return;
        }
        self.data(reason, value, human)
    }

    /// [`report`](Self::report) whose text is made of names read from
    /// files: `human` writes it into a [`PrintableWriter`] over buffered
    /// stdout, so no control character from a file reaches the terminal.
    /// A closed pipe ends the process quietly, as Unix tools do.
    pub(crate) fn report_text<T: Serialize>(
        &self,
        pretty: bool,
        reason: &str,
        value: &T,
        human: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) {
        self.report(pretty, reason, value, || {
            let mut out = PrintableWriter::new(std::io::BufWriter::with_capacity(
                1 << 16,
                std::io::stdout().lock(),
            ));
            if human(&mut out).and_then(|()| out.flush()).is_err() {
                std::process::exit(0);
            }
        })
    }

    /// Runs `f` with the progress bar (if any) out of the way. The lock is
    /// not held while `f` runs: `f` may print through this output again.
    fn with_bar_suspended(&self, f: impl FnOnce()) {
        let bar = self.bar.lock().unwrap_or_else(|e| e.into_inner()).clone();
        match bar {
            Some(bar) if !bar.is_hidden() => bar.suspend(f),
            _ => f(),
        }
    }

    /// Starts a progress bar of `len` steps on stderr (hidden when stderr is
    /// not a terminal, with `--quiet` or with JSON output).
    pub(crate) fn progress(&self, verb: &str, len: u64) -> Progress<'_> {
        let visible = self.is_human_verbose_enough() && std::io::stderr().is_terminal();
        let bar = ProgressBar::with_draw_target(
            Some(len),
            if visible {
                ProgressDrawTarget::stderr()
            } else {
                ProgressDrawTarget::hidden()
            },
        );
        let template = format!(
            "{} [{{bar:30}}] {{pos}}/{{len}} {{elapsed}} {{rate}} {{wide_msg}}",
            self.paint(
                Style::new()
                    .bold()
                    .fg_color(Some(anstyle::Color::Ansi(AnsiColor::Cyan))),
                &format!("{verb:>12}")
            )
        );
        bar.set_style(
            ProgressStyle::with_template(&template)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ")
                // Whole steps per second (indicatif's `per_sec` shows four decimals).
                .with_key(
                    "rate",
                    |state: &ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{:.0}/s", state.per_sec());
                    },
                ),
        );
        if visible {
            bar.enable_steady_tick(Duration::from_millis(200));
        }
        *self.bar.lock().unwrap_or_else(|e| e.into_inner()) = Some(bar.clone());
        Progress { output: self, bar }
    }

    /// An error when `--deny-warnings` is on and a warning was printed: for
    /// commands that must not go on to ship after a warning.
    pub(crate) fn check_warnings_denied(&self) -> Result<()> {
        let warnings = self.warnings.load(Ordering::Relaxed);
        if self.deny_warnings && warnings > 0 {
            return Err(Error::invalid(format!(
                "{}, and --deny-warnings treats them as errors; nothing was shipped",
                count(warnings, "warning")
            )));
        }
        Ok(())
    }

    /// Ends the command: prints the error if there is one, applies
    /// `--deny-warnings`, prints the JSON `finished` line, and gives the exit code.
    pub(crate) fn finish(&self, result: Result<()>) -> ExitCode {
        self.clear_progress();
        let mut result = result;
        if result.is_ok() && self.deny_warnings {
            let warnings = self.warnings.load(Ordering::Relaxed);
            if warnings > 0 {
                result = Err(Error::invalid(format!(
                    "{}, and --deny-warnings treats them as errors",
                    count(warnings, "warning")
                )));
            }
        }
        let code = match &result {
            Ok(()) => 0,
            Err(e) => {
                self.error(e);
                e.exit_code()
            }
        };
        if self.is_json() {
            print_json_line(&Finished {
                reason: "finished",
                command: self.command,
                success: code == 0,
                exit_code: code,
                warnings: self.warnings.load(Ordering::Relaxed),
                errors: self.errors.load(Ordering::Relaxed),
            });
        }
        ExitCode::from(code)
    }

    fn clear_progress(&self) {
        if let Some(bar) = self.bar.lock().unwrap_or_else(|e| e.into_inner()).take() {
            bar.finish_and_clear();
        }
    }
}

/// A progress bar that disappears when dropped.
pub(crate) struct Progress<'a> {
    output: &'a Output,
    bar: ProgressBar,
}

impl Progress<'_> {
    /// One step done; `message` names it (the whole name, not a prefix).
    pub(crate) fn step(&self, message: &str) {
        self.bar.inc(1);
        // A hidden bar (`--quiet`, JSON, no terminal) gets no message made.
        if !self.bar.is_hidden() {
            self.bar.set_message(message.to_string());
        }
    }
}

impl Drop for Progress<'_> {
    fn drop(&mut self) {
        self.output.clear_progress();
    }
}

#[derive(Serialize)]
struct DiagnosticLine<'a> {
    reason: &'static str,
    #[serde(flatten)]
    diagnostic: &'a Diagnostic,
}

#[derive(Serialize)]
struct Finished {
    reason: &'static str,
    command: &'static str,
    success: bool,
    exit_code: u8,
    warnings: usize,
    errors: usize,
}

/// `{"reason": reason, ...value}` as one line of stdout, written while it
/// is serialized. A value that is not an object fails to flatten before a
/// byte leaves the buffer, and is then printed as `{"reason", "data"}`.
fn stream_json_line<T: Serialize>(reason: &str, value: &T) {
    #[derive(Serialize)]
    struct Line<'a, T> {
        reason: &'a str,
        #[serde(flatten)]
        value: &'a T,
    }
    let mut out = std::io::BufWriter::with_capacity(
        1 << 16,
        Counted {
            inner: std::io::stdout().lock(),
            written: 0,
        },
    );
    match write_json(&mut out, &Line { reason, value }, false) {
        Ok(()) => {
            if out.write_all(b"\n").and_then(|()| out.flush()).is_err() {
                // A closed pipe ends the process quietly, as Unix tools do.
                std::process::exit(0);
            }
        }
        Err(e) if e.is_io() => std::process::exit(0),
        Err(e) => {
            let (counted, _unwritten) = out.into_parts();
            let written = counted.written;
            drop(counted);
            if written == 0 {
                let data = serde_json::to_value(value).unwrap_or(serde_json::Value::Null);
                print_json_line(&serde_json::json!({ "reason": reason, "data": data }));
            } else {
                // Part of the line is out: end it, and say why it is cut.
                write_stdout("\n");
                eprint_raw(&format!("error: cannot encode JSON: {e}"));
            }
        }
    }
}

/// A writer that counts the bytes it passed on.
struct Counted<W> {
    inner: W,
    written: u64,
}

impl<W: Write> Write for Counted<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// `1 package`, `2 packages`.
pub(crate) fn count(n: usize, noun: &str) -> String {
    match n {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// One JSON object on one line of stdout.
pub(crate) fn print_json_line<T: Serialize>(value: &T) {
    let mut line = Vec::new();
    match write_json(&mut line, value, false) {
        Ok(()) => {
            line.push(b'\n');
            write_stdout(&String::from_utf8_lossy(&line));
        }
        Err(e) => eprint_raw(&format!("error: cannot encode JSON: {e}")),
    }
}

/// `value` as JSON (compact, or pretty) into `out`. serde_json escapes the
/// C0 controls; DEL, the C1 controls and the bidirectional overrides, which
/// it would write raw, are written as `\uXXXX` too (the same strings to a
/// JSON reader), so no name from a file acts on a terminal showing the JSON.
fn write_json<W: Write, T: Serialize + ?Sized>(
    out: W,
    value: &T,
    pretty: bool,
) -> serde_json::Result<()> {
    if pretty {
        let formatter = TerminalSafe(serde_json::ser::PrettyFormatter::new());
        value.serialize(&mut serde_json::Serializer::with_formatter(out, formatter))
    } else {
        let formatter = TerminalSafe(serde_json::ser::CompactFormatter);
        value.serialize(&mut serde_json::Serializer::with_formatter(out, formatter))
    }
}

/// A JSON formatter that writes what a terminal would act on escaped (see
/// [`write_json`]); the layout is `F`'s.
struct TerminalSafe<F>(F);

impl<F: serde_json::ser::Formatter> serde_json::ser::Formatter for TerminalSafe<F> {
    fn write_string_fragment<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if zenpak::diagnostic::is_unprintable(c) {
                writer.write_all(&fragment.as_bytes()[start..i])?;
                // Every such character is in the Basic Multilingual Plane.
                write!(writer, "\\u{:04x}", c as u32)?;
                start = i + c.len_utf8();
            }
        }
        writer.write_all(&fragment.as_bytes()[start..])
    }

    // The layout: what PrettyFormatter overrides, passed on.
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

/// Writes to stdout; a closed pipe ends the process quietly, as Unix tools do.
pub(crate) fn write_stdout(text: &str) {
    let mut out = anstream::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        std::process::exit(0);
    }
}

fn eprint_raw(line: &str) {
    let mut err = anstream::stderr().lock();
    let _ = writeln!(err, "{line}");
}

/// The diagnostic with any hint text its message carries (an error's
/// rendering, `message\n  hint: …`, taken into a message) moved into `hint`:
/// `message` is the finding alone, `hint` what to do.
fn split_hint(d: &Diagnostic) -> std::borrow::Cow<'_, Diagnostic> {
    const MARK: &str = "\n  hint: ";
    let Some(at) = d.message.find(MARK) else {
        return std::borrow::Cow::Borrowed(d);
    };
    let mut d = d.clone();
    let embedded = d.message[at + MARK.len()..].to_string();
    d.message.truncate(at);
    d.hint = Some(match d.hint.take() {
        Some(own) if own != embedded => format!("{own}; {embedded}"),
        _ => embedded,
    });
    std::borrow::Cow::Owned(d)
}

/// Characters of a source line shown around the caret: a longer line (a
/// manifest holding a 1 MB line) shows this many around the column, with
/// `…` where it is cut.
const SOURCE_WINDOW: usize = 120;

/// The part of `source` shown under a diagnostic at `column` (1-based, in
/// characters): at most [`SOURCE_WINDOW`] characters around it, `…` at a
/// cut end, tabs as spaces and other characters a terminal would act on as
/// `�` (one column each, so the caret stays under its character); with the
/// caret's column in what is shown and its width (the token at the column,
/// at least 1, never past the window).
fn caret_window(source: &str, column: usize) -> (String, usize, usize) {
    let chars: Vec<char> = source.chars().collect();
    let at = column.saturating_sub(1).min(chars.len());
    let start = at
        .saturating_sub(SOURCE_WINDOW / 2)
        .min(chars.len().saturating_sub(SOURCE_WINDOW));
    let end = (start + SOURCE_WINDOW).min(chars.len());
    let shown = chars[start..end].iter().map(|&c| match c {
        '\t' => ' ',
        c if zenpak::diagnostic::is_unprintable(c) => '\u{fffd}',
        c => c,
    });
    let mut text = String::new();
    let cut_before = start > 0;
    if cut_before {
        text.push('…');
    }
    text.extend(shown);
    if end < chars.len() {
        text.push('…');
    }
    let width = chars[at..end]
        .iter()
        .take_while(|c| !c.is_whitespace() && **c != '=')
        .count()
        .max(1);
    (text, at - start + usize::from(cut_before), width)
}

/// Line `line` (1-based) of a text file, for the caret under a manifest error.
fn source_line(file: &str, line: usize) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().nth(line.checked_sub(1)?).map(str::to_string)
}
