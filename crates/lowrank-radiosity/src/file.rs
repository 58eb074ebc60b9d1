//! The factorisation file: its magic bytes, version and checksum
//! ([`Factorization::save`](crate::factor::Factorization::save)).

pub use crate::factor::{MAGIC, VERSION, checksum};
