//! Integration tests: workflow (one binary, one module per area).

#[path = "../common/mod.rs"]
mod common;

mod add;
mod architecture;
mod build_e2e;
mod build_incremental;
mod build_pak_input;
mod cli_output;
mod command_names;
mod conflicts;
mod doctor;
mod engine_5_8;
mod example_mod;
mod game_check;
mod game_folder;
mod game_readers;
mod game_view_memory;
mod globs;
mod hostile_sources;
mod inputs;
mod install_interrupted;
mod lock_link;
mod manifest_agreement;
mod message_schema;
mod never_ship;
mod package_pairs;
mod platforms;
mod reliability;
mod rough_edges;
mod watch;
mod windows_paths;
mod workflows;
mod zen_store;
