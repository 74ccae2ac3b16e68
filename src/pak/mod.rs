//! Pak files (`.pak`): the companion pak of an IoStore container.

pub mod crypto;
