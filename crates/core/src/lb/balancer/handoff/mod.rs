//! The balancer's side of the connection handoff
//! ([`crate::lb::handoff`]): `export` hands out a stopped worker's
//! connections and templates as entries; `install` puts an entry into
//! the worker that owns it, at start, before the ports forward.

mod export;
mod install;
