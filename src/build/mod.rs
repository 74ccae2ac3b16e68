//! The build pipeline: manifest → discover → read legacy → convert
//! (in parallel) → write the container triplet, with an incremental cache
//! and a report of what happened.

pub mod discover;
pub mod cache;
