//! placeholder for the wire crate; see backend.rs and output.rs
