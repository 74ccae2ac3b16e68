//! End to end: `zenpak convert` on real 5.7 packages (no game files), then
//! `zenpak inspect --json` and `zenpak diff` on the result.

use crate::common;

use std::process::Command;

fn zenpak() -> Command {
    Command::new(env!("CARGO_BIN_EXE_zenpak"))
}

#[test]
fn convert_inspect_and_diff_from_the_command_line() {
    let Some(corpus) = common::corpus() else {
        return;
    };
    let out = common::temp_dir("zen-cli");
    std::fs::create_dir_all(&out).unwrap();

    let packages: Vec<_> = common::complete_legacy_packages(&corpus)
        .into_iter()
        .filter(|(_, v)| *v == zenpak::EngineVersion::UE5_7)
        .take(5)
        .collect();
    assert!(!packages.is_empty());
    for (i, (path, _)) in packages.iter().enumerate() {
        let target = out.join(format!("p{i}.uzenasset"));
        let entry = out.join(format!("p{i}.json"));
        let status = zenpak()
            .args([
                "convert",
                path.to_str().unwrap(),
                "--engine",
                "5.7",
                "-o",
                target.to_str().unwrap(),
                "--store-entry",
                entry.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        let store: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
        assert!(store["package_name"].as_str().unwrap().starts_with('/'));

        let inspect = zenpak()
            .args([
                "inspect",
                target.to_str().unwrap(),
                "--engine",
                "5.7",
                "--json",
            ])
            .output()
            .unwrap();
        assert!(
            inspect.status.success(),
            "{}",
            String::from_utf8_lossy(&inspect.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&inspect.stdout).unwrap();
        assert_eq!(json["kind"], "zen-package");
        assert_eq!(json["package_name"], store["package_name"]);
    }

    // diff: identical to itself (exit 0), names the first difference otherwise (exit 1).
    let engine_file = corpus.join("retoc/UE5.6/SM_Cube.uzenasset");
    let same = zenpak()
        .args([
            "diff",
            engine_file.to_str().unwrap(),
            engine_file.to_str().unwrap(),
            "--engine",
            "5.6",
        ])
        .output()
        .unwrap();
    assert!(same.status.success());
    let mut bytes = std::fs::read(&engine_file).unwrap();
    let package = zenpak::zen::ZenPackage::read(&bytes, zenpak::EngineVersion::UE5_6).unwrap();
    let export_map = package.summary.export_map_offset as usize;
    bytes[export_map + 8] ^= 0xff; // cooked serial size of export 0
    let changed = out.join("changed.uzenasset");
    std::fs::write(&changed, &bytes).unwrap();
    let diff = zenpak()
        .args([
            "diff",
            engine_file.to_str().unwrap(),
            changed.to_str().unwrap(),
            "--engine",
            "5.6",
        ])
        .output()
        .unwrap();
    assert_eq!(diff.status.code(), Some(1));
    let text = String::from_utf8_lossy(&diff.stdout);
    assert!(
        text.contains("first difference: exports > entry 0 > cooked_serial_size"),
        "{text}"
    );

    // UE4 cooks do not carry their name: a clear usage error without --package-name.
    let ue4 = corpus.join("retoc/UE4.27/TestModUI.uasset");
    let missing = zenpak()
        .args([
            "convert",
            ue4.to_str().unwrap(),
            "--engine",
            "4.27",
            "-o",
            out.join("t.uzenasset").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("--package-name"));
    std::fs::remove_dir_all(&out).ok();
}
