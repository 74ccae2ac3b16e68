//! Integration tests: packages (one binary, one module per area).

#[path = "../common/mod.rs"]
mod common;

mod legacy_corpus;
mod legacy_inspect;
mod legacy_mutation;
mod legacy_versions;
mod zen_cli;
mod zen_conformance;
mod zen_container_bundles;
mod zen_container_layout;
mod zen_corpus;
mod zen_diff;
mod zen_graph_data;
mod zen_mutation;
mod zen_roundtrip;
mod zen_shader_library;
mod zen_versioned;
