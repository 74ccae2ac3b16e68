//! Localized packages: a package under `…/L10N/<culture>/…` replaces its
//! source package for that culture. The engine finds them by name
//! (`RemapLocalizationPathIfNeeded` in `PackageStoreOptimizer.cpp`), keeps
//! those it can verify as redirects (`VerifyRedirect`), and lists them in
//! the container header (`CreateContainerHeader`: UE5's localized-package
//! table, UE4's culture map; see
//! [`crate::iostore::container_header::ContainerHeader::add_localized_package`]).

use std::collections::BTreeMap;

use super::package::ZenPackage;
use super::records::{ObjectIndexKind, PackageObjectIndex};
use crate::error::Result;
use crate::version::{EngineVersion, ZenLayout};

/// What a localized package's name says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Localization {
    /// The culture (the engine lowercases it), e.g. `fr` or `zh-hans`.
    pub(crate) culture: String,
    /// The package it replaces: the name without `/L10N/<culture>`.
    pub(crate) source_package_name: String,
}

/// The culture and source package of a localized package name
/// (`/Game/L10N/fr/UI/Title` → `fr`, `/Game/UI/Title`); `None` for other
/// names. The first `/L10N/` counts, in any case, followed by a culture of
/// at least two characters and a `/`.
pub(crate) fn localization_of(package_name: &str) -> Option<Localization> {
    const MARKER: &str = "/l10n/";
    let begin = package_name.to_ascii_lowercase().find(MARKER)?;
    let culture_start = begin + MARKER.len();
    let culture_len = package_name[culture_start..].find('/')?;
    if culture_len < 2 {
        return None;
    }
    let rest = &package_name[culture_start + culture_len..];
    Some(Localization {
        culture: package_name[culture_start..culture_start + culture_len].to_ascii_lowercase(),
        source_package_name: format!("{}{rest}", &package_name[..begin]),
    })
}

/// What redirect verification looks at in a package: its public exports
/// (package-relative path, lowercased, with class, template and super) and
/// whether it defines a top-level struct.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RedirectExports {
    public: Vec<(
        String,
        PackageObjectIndex,
        PackageObjectIndex,
        PackageObjectIndex,
    )>,
    defines_top_level_struct: bool,
}

impl RedirectExports {
    pub(crate) fn of(package: &ZenPackage) -> Self {
        // UE4 marks a private export with all bits set, UE5 with 0.
        let private = match package.engine.zen_layout() {
            ZenLayout::Ue4 => PackageObjectIndex::NULL.0,
            _ => 0,
        };
        let public = (0..package.exports.len())
            .filter(|&i| package.exports[i].public_export_hash != private)
            .map(|i| {
                let e = &package.exports[i];
                let path = export_path(package, i).to_ascii_lowercase();
                (path, e.class_index, e.template_index, e.super_index)
            })
            .collect();
        RedirectExports {
            public,
            // A class (an export with a super and no outer).
            defines_top_level_struct: package
                .exports
                .iter()
                .any(|e| !e.super_index.is_null() && e.outer_index.is_null()),
        }
    }
}

/// An export's path below its package (`Outer/Name`), the names the engine
/// compares when it verifies a redirect.
fn export_path(package: &ZenPackage, export: usize) -> String {
    let mut parts = Vec::new();
    let mut current = Some(export);
    while let Some(i) = current.filter(|_| parts.len() <= package.exports.len()) {
        let e = &package.exports[i];
        parts.push(package.name_text(e.object_name));
        current = (e.outer_index.kind() == ObjectIndexKind::Export)
            .then_some(e.outer_index.0 as usize)
            .filter(|&o| o < package.exports.len());
    }
    parts.reverse();
    parts.join("/")
}

/// Whether the engine keeps a localized package as a redirect of its
/// source (`VerifyRedirect`). A mod is built like a DLC: without the source
/// package in the container the package is kept unless it defines a
/// top-level struct (which a localized variant cannot replace); with the
/// source, every public export of the source must be public in the
/// localized package with the same class, template and super (the engine
/// matches exports by name, which the public export hash stands for).
pub(crate) fn is_redirect(localized: &RedirectExports, source: Option<&RedirectExports>) -> bool {
    match source {
        None => !localized.defines_top_level_struct,
        Some(source) => source.public.iter().all(|s| localized.public.contains(s)),
    }
}

/// The localized packages of a container, collected as packages are added
/// (the source of one may come before or after it).
#[derive(Debug, Default)]
pub(crate) struct LocalizedPackages {
    /// Ids of the packages whose exports redirects need (localized packages
    /// and their sources), when the container's package names were given
    /// up front ([`LocalizedPackages::for_packages`]); `None`: every package.
    wanted: Option<std::collections::BTreeSet<u64>>,
    candidates: Vec<(u64, Localization, RedirectExports)>,
    all: BTreeMap<u64, RedirectExports>,
}

impl LocalizedPackages {
    /// For a container whose package names are known before its packages
    /// are added: only localized packages and the sources they name are
    /// read (most containers have none, and then no package is).
    pub(crate) fn for_packages<'a>(package_names: impl IntoIterator<Item = &'a str>) -> Self {
        let mut wanted = std::collections::BTreeSet::new();
        for name in package_names {
            if let Some(localization) = localization_of(name) {
                wanted.insert(crate::hash::package_id(name));
                wanted.insert(crate::hash::package_id(&localization.source_package_name));
            }
        }
        LocalizedPackages {
            wanted: Some(wanted),
            ..Default::default()
        }
    }

    /// Whether [`add`](Self::add) reads the package's bytes (a localized
    /// package or the source of one, or every package when the names were
    /// not given up front).
    pub(crate) fn wants(&self, package_id: u64) -> bool {
        self.wanted
            .as_ref()
            .is_none_or(|wanted| wanted.contains(&package_id))
    }

    /// Notes a package of the container (`package_bytes`: its Zen chunk).
    pub(crate) fn add(
        &mut self,
        package_id: u64,
        package_name: &str,
        package_bytes: &[u8],
        engine: EngineVersion,
    ) -> Result<()> {
        if !self.wants(package_id) {
            return Ok(());
        }
        let exports = RedirectExports::of(&ZenPackage::read_header(package_bytes, engine)?);
        if let Some(localization) = localization_of(package_name) {
            self.candidates
                .push((package_id, localization, exports.clone()));
        }
        self.all.insert(package_id, exports);
        Ok(())
    }

    /// The localized packages the engine keeps as redirects: (localized
    /// package id, culture, source package name), by id.
    pub(crate) fn redirects(&self) -> Vec<(u64, String, String)> {
        let mut out: Vec<(u64, String, String)> = self
            .candidates
            .iter()
            .filter(|(_, l, exports)| {
                let source = self
                    .all
                    .get(&crate::hash::package_id(&l.source_package_name));
                is_redirect(exports, source)
            })
            .map(|(id, l, _)| (*id, l.culture.clone(), l.source_package_name.clone()))
            .collect();
        out.sort();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localized_names() {
        let l = localization_of("/Game/L10N/fr/UI/Title").unwrap();
        assert_eq!(l.culture, "fr");
        assert_eq!(l.source_package_name, "/Game/UI/Title");
        let l = localization_of("/MyPlugin/l10n/zh-Hans/Maps/Entry").unwrap();
        assert_eq!(l.culture, "zh-hans");
        assert_eq!(l.source_package_name, "/MyPlugin/Maps/Entry");
        assert_eq!(localization_of("/Game/L10N/x/A"), None);
        assert_eq!(localization_of("/Game/L10N/fr"), None);
        assert_eq!(localization_of("/Game/UI/Title"), None);
    }
}
