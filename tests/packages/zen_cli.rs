//! End to end: `zenpak convert` on real 5.7 packages (no game files), then
//! `zenpak inspect --json` and `zenpak diff` on the result.

use crate::common;

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
        let status = common::run_command(common::command(None, &[]).args([
            "convert",
            path.to_str().unwrap(),
            "--engine",
            "5.7",
            "-o",
            target.to_str().unwrap(),
            "--store-entry",
            entry.to_str().unwrap(),
        ]));
        status.ok();
        let store: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
        assert!(store["package_name"].as_str().unwrap().starts_with('/'));

        let inspect = common::run_command(common::command(None, &[]).args([
            "inspect",
            target.to_str().unwrap(),
            "--engine",
            "5.7",
            "--json",
        ]));
        inspect.ok();
        let json: serde_json::Value = serde_json::from_str(&inspect.stdout).unwrap();
        assert_eq!(json["kind"], "zen-package");
        assert_eq!(json["package_name"], store["package_name"]);
    }

    // diff: identical to itself (exit 0), names the first difference otherwise (exit 1).
    let engine_file = corpus.join("retoc/UE5.6/SM_Cube.uzenasset");
    let same = common::run_command(common::command(None, &[]).args([
        "diff",
        engine_file.to_str().unwrap(),
        engine_file.to_str().unwrap(),
        "--engine",
        "5.6",
    ]));
    same.ok();
    let mut bytes = std::fs::read(&engine_file).unwrap();
    let package = zenpak::zen::ZenPackage::read(&bytes, zenpak::EngineVersion::UE5_6).unwrap();
    let export_map = package.summary.export_map_offset as usize;
    bytes[export_map + 8] ^= 0xff; // cooked serial size of export 0
    let changed = out.join("changed.uzenasset");
    std::fs::write(&changed, &bytes).unwrap();
    let diff = common::run_command(common::command(None, &[]).args([
        "diff",
        engine_file.to_str().unwrap(),
        changed.to_str().unwrap(),
        "--engine",
        "5.6",
        "--message-format",
        "json",
    ]));
    diff.assert_code(1);
    let first = &diff.line_of("diff")["first_difference"];
    assert_eq!(first["section"], "exports", "{first}");
    assert_eq!(first["entry"], 0, "{first}");
    assert_eq!(first["field"], "cooked_serial_size", "{first}");

    // UE4 cooks do not carry their name: a clear usage error without --package-name.
    let ue4 = corpus.join("retoc/UE4.27/TestModUI.uasset");
    let missing = common::run_command(common::command(None, &[]).args([
        "convert",
        ue4.to_str().unwrap(),
        "--engine",
        "4.27",
        "-o",
        out.join("t.uzenasset").to_str().unwrap(),
        "--message-format",
        "json",
    ]));
    let error = missing.assert_code(2).error();
    assert_eq!(error["code"], "usage", "{error}");
    std::fs::remove_dir_all(&out).ok();
}
