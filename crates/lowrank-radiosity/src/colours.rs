//! The Cornell box's colours, which [`Surfaces::closed_box`](crate::surfaces::Surfaces::closed_box)
//! paints its walls with.

pub use crate::surfaces::{GREEN, LIGHT_KD, LIGHT_KE, RED, WHITE};
