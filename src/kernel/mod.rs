//! The kernel's side of the exception path: network namespaces and
//! interfaces configured over netlink (never by running `ip`).
//!
//! * [`netns`] — named network namespaces as `ip netns` keeps them (a bind
//!   mount at `/run/netns/NAME`), created when missing, entered on a scoped
//!   thread.
//! * [`link`] — an rtnetlink socket ([`link::Rtnl`]) bound in one namespace:
//!   a link's MAC, MTU, up/down and namespace, its IPv4 and IPv6 (`nodad`)
//!   addresses, and what the kernel reports about it; plus the
//!   interface-name and MAC rules
//!   ([`link::valid_ifname`], [`link::locally_administered`]).
//! * [`route`] — device routes in a table, tagged with a protocol number
//!   ([`route::DevRoute`]): added, removed and listed with the same socket
//!   (how dirigo announces its VIPs to a routing daemon).
//!
//! Every failure is a [`KernelError`] (defined in [`error`]) whose message is one line naming the
//! interface or namespace, what was attempted and the errno's text.

pub mod error;
pub mod link;
pub mod netns;
pub mod route;

pub use error::KernelError;

#[cfg(test)]
mod tests;
