//! The configuration language: `ip -batch` lines without the leading `ip`.
//!
//! SKELETON: being written.
