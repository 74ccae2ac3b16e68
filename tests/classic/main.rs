//! Integration tests: classic (one binary, one module per area).

#[path = "../classic_maps/mod.rs"]
mod classic_maps;
#[path = "../common/mod.rs"]
mod common;

mod classic_bounded;
mod classic_cli;
mod classic_compact;
mod classic_consolidate;
mod classic_corpus;
mod classic_deps;
mod classic_mutation;
mod classic_object_data;
mod classic_writer;
