//! Integration tests: containers (one binary, one module per area).

#[path = "../common/mod.rs"]
mod common;

mod dotted_names;
mod game_fixture;
mod inspect_escapes;
mod iostore_bounded;
mod iostore_cli;
mod iostore_container_header;
mod iostore_corpus;
mod iostore_game_folder;
mod iostore_hostile;
mod iostore_round_trip;
mod on_demand;
mod pak_bounded;
mod pak_new_versions;
mod pak_unrealpak;
mod peers_retoc;
