//! The shift machinery's tests: unit tests of each piece on literal
//! numbers and bytes, and simulations of both endpoints' sequence spaces
//! with a segment stream cut, lost, retransmitted and reordered at random.

mod adjust;
mod ftp;
mod ftp_state;
mod once;
mod sim;
mod sim_ftp;
mod sim_header;
