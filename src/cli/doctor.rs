//! `zenpak doctor --game-dir GAME [--write]`: what the game's own files say
//! (engine releases, compression, encryption, signing, IoStore or paks,
//! where mods go, installed mods), from `game::doctor::examine`; `--write`
//! puts the engine, project and profile into the nearest `mod.toml`.

use std::io::Write;
use std::path::PathBuf;

use serde::Serialize;
use zenpak::game::doctor::{examine, DoctorReport, Placement};
use zenpak::game::folder::GameFolder;
use zenpak::manifest::{edit_game_keys, KeyChange, Manifest};
use zenpak::{Error, Result};

use zenpak::diagnostic::bounded_list;

use super::args::{KeyArgs, ManifestArgs};

/// How many pak names a line of the text report names (`--message-format
/// json` has them all).
const NAMES_SHOWN: usize = 8;
use super::Output;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The game's install folder (or any folder of it down to `~mods`).
    #[arg(long = "game-dir", value_name = "DIR")]
    pub(crate) game_dir: PathBuf,
    /// The game's project folder name, when the install folder holds several.
    #[arg(long, value_name = "NAME")]
    pub(crate) project: Option<String>,
    /// Set `[game] engine`, `project` (and a recognised `profile`) in the
    /// nearest mod.toml, keeping its comments; the change is shown first.
    #[arg(long)]
    pub(crate) write: bool,
    #[command(flatten)]
    pub(crate) manifest: ManifestArgs,
    #[command(flatten)]
    pub(crate) key: KeyArgs,
}

/// What `--write` did.
#[derive(Serialize)]
struct Written {
    manifest: PathBuf,
    changes: Vec<KeyChange>,
}

/// The report with the write, as the one JSON object.
#[derive(Serialize)]
struct Doctor<'a> {
    #[serde(flatten)]
    report: &'a DoctorReport,
    written: Option<Written>,
}

pub(crate) fn run(args: Args, out: &Output) -> Result<()> {
    // Without a manifest `--write` is a usage error before anything is read.
    let manifest_path = if args.write {
        Some(match &args.manifest.manifest_path {
            Some(p) => p.clone(),
            None => {
                let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
                Manifest::find(&cwd).map_err(|_| {
                    Error::usage(format!(
                        "--write needs a mod.toml, and there is none in {} or above",
                        cwd.display()
                    ))
                    .with_hint("run it inside the mod, or pass --manifest-path")
                })?
            }
        })
    } else {
        None
    };
    let folder = GameFolder::locate(&args.game_dir, args.project.as_deref())?;
    let report = examine(&folder, &args.key.keys()?)?;

    let written = match &manifest_path {
        Some(path) => Some(write_manifest(path, &report, out)?),
        None => None,
    };
    // Also as the stream's own diagnostic lines, so that counts and
    // `--deny-warnings` are the same in text and JSON.
    out.diagnostics(&report.diagnostics);
    let doctor = Doctor {
        report: &report,
        written,
    };
    out.report_text(false, "doctor", &doctor, |w| text(w, &doctor));
    if let Some(unreadable) = &report.unreadable {
        return Err(unreadable.clone());
    }
    if report
        .diagnostics
        .iter()
        .any(|d| d.level == zenpak::diagnostic::Level::Error)
    {
        return Err(Error::invalid(
            "the game's files contradict each other (see the diagnostics)",
        ));
    }
    Ok(())
}

/// Sets the keys in the manifest, after printing the change.
fn write_manifest(path: &std::path::Path, report: &DoctorReport, out: &Output) -> Result<Written> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut values: Vec<(&str, &str)> = Vec::new();
    match report.engine.release {
        Some(release) => values.push(("engine", release.as_str())),
        None => out.warning(
            "engine-not-written",
            format!(
                "`[game] engine` left as it is: the game's files allow {}",
                report
                    .engine
                    .range
                    .as_deref()
                    .unwrap_or("no release zenpak knows")
            ),
        ),
    }
    values.push(("project", report.project.as_str()));
    if let Some(profile) = report.profile {
        values.push(("profile", profile.name()));
    }
    let (new_text, changes) = edit_game_keys(&text, path, &values)?;
    if !out.is_json() {
        for change in &changes {
            println!(
                "{}: {} = {} -> {}",
                path.display(),
                change.key,
                change.before.as_deref().unwrap_or("(not set)"),
                change.after
            );
        }
    }
    if !changes.is_empty() {
        zenpak::publish::write_file(path, |temp| {
            temp.file()
                .write_all(new_text.as_bytes())
                .map_err(|e| Error::io(path, e))
        })?;
    }
    Ok(Written {
        manifest: path.to_path_buf(),
        changes,
    })
}

fn placement(p: Placement) -> &'static str {
    match p {
        Placement::Game => "game",
        Placement::Mods => "~mods",
        Placement::LogicMods => "LogicMods",
    }
}

fn text(w: &mut dyn Write, doctor: &Doctor) -> std::io::Result<()> {
    let r = doctor.report;
    writeln!(w, "game:        {} (project {})", r.root, r.project)?;
    let engine = &r.engine;
    writeln!(
        w,
        "engine:      {}",
        engine.range.as_deref().unwrap_or("unknown")
    )?;
    for e in &engine.evidence {
        writeln!(
            w,
            "  {} {} allows {} ({})",
            e.fact,
            e.value,
            zenpak::game::doctor::range_text(&e.releases).unwrap_or_else(|| "none".into()),
            bounded_list(&e.sources, NAMES_SHOWN)
        )?;
    }
    for d in &engine.tells_apart {
        let values: Vec<String> = d.values.iter().map(|(r, v)| format!("{r}: {v}")).collect();
        writeln!(w, "  told apart by {}: {}", d.fact, values.join(", "))?;
    }
    if r.compression.is_empty() {
        writeln!(w, "compression: none")?;
    }
    for c in &r.compression {
        let sizes: Vec<String> = c.block_sizes.iter().map(|s| s.to_string()).collect();
        writeln!(
            w,
            "compression: {} (block size {}; {})",
            c.method,
            if sizes.is_empty() {
                "-".into()
            } else {
                sizes.join(", ")
            },
            bounded_list(&c.sources, NAMES_SHOWN)
        )?;
    }
    if r.encryption.is_empty() {
        writeln!(w, "encryption:  none")?;
    }
    for e in &r.encryption {
        writeln!(
            w,
            "encryption:  {} key GUID {} ({})",
            e.source,
            e.key_guid,
            match e.key {
                "opened" => "opened with the key given",
                "wrong-key" => "not opened: the key given does not open it",
                _ => "not opened: no key given for it",
            }
        )?;
    }
    let s = &r.signing;
    writeln!(
        w,
        "signing:     {}",
        if s.signed {
            format!(
                "signed ({} .sig files; Signed containers: {}); zenpak does not sign, and a signature bypass is the player's business",
                s.sig_files.len(),
                if s.signed_containers.is_empty() { "none".into() } else { bounded_list(&s.signed_containers, NAMES_SHOWN) }
            )
        } else {
            "not signed".into()
        }
    )?;
    let l = &r.loading;
    writeln!(
        w,
        "loads:       {}{}; a mod's packages go in {}",
        if l.io_store {
            "IoStore containers"
        } else {
            "paks only"
        },
        if l.pak_only_sources.is_empty() {
            String::new()
        } else {
            format!(
                " and paks ({})",
                bounded_list(&l.pak_only_sources, NAMES_SHOWN)
            )
        },
        if l.mod_packages == "io-store" {
            "a .utoc/.ucas with its .pak"
        } else {
            "a .pak"
        }
    )?;
    for f in &r.mod_folders {
        writeln!(
            w,
            "mods go in:  {} ({})",
            f.path,
            if f.exists { "exists" } else { "not there yet" }
        )?;
    }
    if let Some(p) = r.profile {
        writeln!(w, "profile:     {}", p.name())?;
    }
    writeln!(w, "installed mods: {}", r.installed_mods.len())?;
    for m in &r.installed_mods {
        writeln!(
            w,
            "  {:<24} {:<10} container {:<16} order {:>4} sequence {}{}",
            m.name,
            placement(m.placement),
            m.container_id.as_deref().unwrap_or("-"),
            m.order,
            m.sequence.map_or("-".into(), |s| s.to_string()),
            if m.locked { " (locked)" } else { "" }
        )?;
    }
    if let Some(written) = &doctor.written {
        if written.changes.is_empty() {
            writeln!(w, "{}: already up to date", written.manifest.display())?;
        } else {
            writeln!(w, "wrote {}", written.manifest.display())?;
        }
    }
    Ok(())
}
