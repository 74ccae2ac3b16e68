//! Integration tests: extract (one binary, one module per area).

#[path = "../common/mod.rs"]
mod common;
#[path = "../extract_game/mod.rs"]
mod extract_game;

mod extract_cli;
mod extract_mutation;
mod extract_round_trip;
mod extract_script_objects;
mod extract_to_json;
mod patch_build;
mod patch_merge;
mod redecode_check;
