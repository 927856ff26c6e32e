//! rr and wrr.
