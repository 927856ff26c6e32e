//! What a validator returns for an element it refuses.

/// A validator's refusal of one element: the key it is about (`""`: the
/// element itself) and why.
pub(super) type Refusal = (&'static str, String);
