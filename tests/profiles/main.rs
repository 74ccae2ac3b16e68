//! Integration tests: profiles (one binary, one module per area).

#[path = "../common/mod.rs"]
mod common;
#[path = "../fixups_support/mod.rs"]
mod fixups_support;

mod asset_json;
mod asset_json_schemas;
mod fixups_cli;
mod fixups_convert;
mod fixups_marvel_rivals;
mod fixups_rivals_carrier;
mod fixups_rivals_container;
mod fixups_rivals_corpus;
mod fixups_rivals_static_mesh;
mod fixups_rivals_string_table;
mod mappings_bounded;
mod mappings_corpus;
mod properties_codec;
mod properties_corpus;
mod properties_header_encoding;
mod properties_mutation;
mod properties_synthetic;
mod properties_tagged;
mod redecode_corpus;
