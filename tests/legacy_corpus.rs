//! Every legacy package of the shared corpus parses with its folder's
//! engine version, its tables match the summary's counts, every export's
//! data lies in the `.uexp`, and writing the parsed header gives the
//! original bytes.

mod common;

use zenpak::legacy::{LegacyPackage, PackageFiles};

#[test]
fn every_corpus_package_parses_and_round_trips() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let packages = common::legacy_packages(&corpus);
    assert!(
        packages.len() > 250,
        "expected the corpus's ~260 legacy packages, found {}",
        packages.len()
    );
    let mut failures = Vec::new();
    for (path, engine) in &packages {
        let result = (|| -> zenpak::Result<()> {
            let files = PackageFiles::load(path)?;
            let package = files.read_package(Some(*engine))?;
            let s = &package.summary;
            assert_eq!(
                package.names.len() as i32,
                s.name_count,
                "{}",
                path.display()
            );
            assert_eq!(
                package.imports.len() as i32,
                s.import_count,
                "{}",
                path.display()
            );
            assert_eq!(
                package.exports.len() as i32,
                s.export_count,
                "{}",
                path.display()
            );
            assert_eq!(
                s.total_header_size as usize,
                files.header.len(),
                "{}",
                path.display()
            );
            files.check_exports(&package)?;
            for i in 0..package.imports.len() {
                package.import_path(i)?;
            }
            let written = package.write()?;
            if written != files.header {
                let at = written.iter().zip(&files.header).position(|(a, b)| a != b);
                return Err(zenpak::Error::other(format!(
                    "rewrite differs (first difference at {at:?}, lengths {} vs {})",
                    written.len(),
                    files.header.len()
                )));
            }
            // A second parse of the written bytes gives the same model.
            assert_eq!(LegacyPackage::read(&written, Some(*engine))?, package);
            Ok(())
        })();
        if let Err(e) = result {
            failures.push(format!("{} ({engine}): {e}", path.display()));
        }
    }
    eprintln!(
        "{} legacy packages checked, {} failed",
        packages.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
