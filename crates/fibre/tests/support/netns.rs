//! A network namespace a test makes, deleted on drop, and the bounded `ip`
//! commands run in it: `fibre_testkit::netns`, which `fibre bench
//! converge` uses too. Kept as a module so that the tests' `netns::...`
//! paths stay as they were.

#[allow(unused_imports)] // each test uses the parts it needs
pub use fibre_testkit::netns::*;
