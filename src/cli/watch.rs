//! `zenpak install --watch`: install, then rebuild (development build) and
//! reinstall whenever the cooked files or `mod.toml` change, until Ctrl-C.
//!
//! Changes are found by polling: every [`POLL`] the content folder (and the
//! manifest, and `[content] paks`) is listed with each file's size and
//! modification time; a change is acted on once the listing has stayed the
//! same for [`SETTLE`] (an editor's cook writes many files: one rebuild for
//! all of them). Polling needs no watcher crate, sees changes on network
//! and Wine-mapped drives alike, and costs one directory walk per poll.
//! Each rebuild is compared against the listing taken just before it
//! started, so a file saved while it runs (after it read that file) is a
//! change, and another rebuild follows: the installed mod ends with the
//! last edit.
//!
//! Ctrl-C between rebuilds ends the watch at once (exit 0, the JSON
//! `finished` line). Ctrl-C during a rebuild is the ordinary interrupt: the
//! publication under way completes (an install publishes the triplet in one
//! critical section, staged and renamed), every temporary is removed, so
//! the installed triplet is always whole: the previous one or the new one.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use zenpak::manifest::Manifest;
use zenpak::Result;

use super::output::Output;
use super::release::InstallArgs;

/// How often the files are listed.
const POLL: Duration = Duration::from_millis(200);
/// How long the listing must stay unchanged before a rebuild starts.
const SETTLE: Duration = Duration::from_millis(400);

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Not watching (any command but `install --watch`).
    Off,
    /// Waiting for a change: an interrupt ends the watch.
    Idle,
    /// Building or installing: an interrupt is the ordinary one.
    Busy,
    /// Asked to stop while idle.
    Stopping,
}

static STATE: Mutex<State> = Mutex::new(State::Off);

fn state() -> std::sync::MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// For the interrupt handler: true when a watch was idle and is now asked
/// to stop (the handler then returns and the watch ends by itself); false
/// when the interrupt is the ordinary one.
pub(crate) fn stop_if_idle() -> bool {
    let mut state = state();
    match *state {
        State::Idle | State::Stopping => {
            *state = State::Stopping;
            true
        }
        State::Off | State::Busy => false,
    }
}

/// Goes from idle to busy; false when a stop was asked meanwhile.
fn start_work() -> bool {
    let mut state = state();
    if *state == State::Stopping {
        return false;
    }
    *state = State::Busy;
    true
}

fn set_idle() -> bool {
    let mut state = state();
    if *state == State::Stopping {
        return false;
    }
    *state = State::Idle;
    true
}

#[derive(serde::Serialize)]
struct Watching<'a> {
    root: &'a Path,
    installs: usize,
}

/// Each watched file's path, size and modification time.
type Listing = Vec<(PathBuf, u64, Option<SystemTime>)>;

fn listing(manifest: &Manifest) -> Listing {
    let mut out = Listing::new();
    let mut roots = vec![manifest.content_root()];
    roots.extend(manifest.content_paks());
    roots.push(manifest.manifest_path().to_path_buf());
    let output = manifest.output_dir();
    for root in roots {
        let walk = walkdir::WalkDir::new(&root)
            .follow_links(manifest.content.follow_links)
            .into_iter()
            .filter_entry(|e| e.path() != output);
        for entry in walk.flatten() {
            let name = entry.file_name().to_string_lossy();
            if !entry.file_type().is_file() || zenpak::publish::temporary::is_temporary_name(&name)
            {
                continue;
            }
            if let Ok(meta) = entry.metadata() {
                out.push((entry.into_path(), meta.len(), meta.modified().ok()));
            }
        }
    }
    out.sort();
    out
}

/// `install --watch`: installs now, then again after each settled change,
/// until interrupted.
pub(crate) fn run(args: InstallArgs, out: &Output) -> Result<()> {
    let manifest = args.manifest.load()?;
    let game_dirs = &args.games.resolve(&manifest)?;
    let args = &args;
    let manifest_path = manifest.manifest_path().to_path_buf();
    let mut manifest = manifest;
    *state() = State::Busy;
    let mut installs = 0;
    let mut seen = listing(&manifest);
    let cycle = |manifest: &Manifest, installs: &mut usize| {
        match super::release::install(args, manifest, game_dirs, out) {
            Ok(()) => *installs += 1,
            // Said, and the watch goes on: the next change may fix it.
            Err(e) if !matches!(e.kind(), zenpak::error::ErrorKind::Interrupted) => out.error(&e),
            Err(e) => return Err(e),
        }
        Ok(())
    };
    cycle(&manifest, &mut installs)?;
    loop {
        // Idle before it says so: a Ctrl-C prompted by the line below ends
        // the watch cleanly, never as an interrupted build.
        if !set_idle() {
            return Ok(());
        }
        out.data(
            "watching",
            &Watching {
                root: &manifest.content_root(),
                installs,
            },
            || {
                out.status(
                    "Watching",
                    format!(
                        "{} for changes (Ctrl-C to stop)",
                        manifest.content_root().display()
                    ),
                )
            },
        );
        // Wait for a change, then for the files to settle.
        let mut changed_at: Option<Instant> = None;
        loop {
            std::thread::sleep(POLL);
            if *state() == State::Stopping {
                return Ok(());
            }
            let now = listing(&manifest);
            if now != seen {
                seen = now;
                changed_at = Some(Instant::now());
            } else if changed_at.is_some_and(|t| t.elapsed() >= SETTLE) {
                break;
            }
        }
        if !start_work() {
            return Ok(());
        }
        // mod.toml may have changed too.
        match Manifest::load(&manifest_path) {
            Ok(m) => manifest = m,
            Err(e) => {
                out.error(&e);
                continue;
            }
        }
        // What this rebuild starts from, taken before it reads a file: a
        // change saved while it runs differs from it, and brings another.
        seen = listing(&manifest);
        cycle(&manifest, &mut installs)?;
    }
}
