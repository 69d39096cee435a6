//! A tunnel device's configuration: its name and the [`GreSpec`] the
//! control plane holds. Parsing and the checks against a router are
//! fibre-fib's (the configuration language's `link add NAME type gre ...`);
//! this module only adapts them to a device.

use fibre_fib::config::{parse_words, ParseError};
use fibre_fib::{Command, Fib, LinkKind, TunnelError};

pub use fibre_fib::{GreKind, GreSpec, Inheritable};

/// A GRE tunnel's configuration: the device name and its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GreConfig {
    /// Device name.
    pub name: String,
    /// The tunnel's parameters (kind, endpoints, keys, flags).
    pub spec: GreSpec,
}

/// Why a tunnel configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GreConfigError {
    /// The words do not parse as `link add NAME type gre ...` (the
    /// configuration language's message: keyword, expectation, token and
    /// iproute2's own message).
    #[error("{0}")]
    Parse(ParseError),
    /// The words make a link that is not a GRE tunnel, or set link state
    /// (`mtu`, `up`, `down`) a tunnel configuration does not carry.
    #[error("expected `NAME type gre|ip6gre|gretap|ip6gretap remote ADDR ...` without mtu, up or down, got {0}")]
    NotATunnel(String),
    /// The tunnel does not fit the router (foreign `local`, looping underlay).
    #[error(transparent)]
    Tunnel(#[from] TunnelError),
}

impl GreConfig {
    /// Parses the words after `link add`, as the configuration language
    /// does: `NAME type gre|ip6gre|gretap|ip6gretap remote A [local B]
    /// [ttl N|inherit] [tos T|inherit] [key K | ikey K okey K]
    /// [csum|icsum|ocsum] [seq|iseq|oseq]`. Only the syntax and families
    /// are checked here; [`GreConfig::validate`] checks against a router.
    ///
    /// ```
    /// use fibre_dev::gre::GreConfig;
    /// let c = GreConfig::parse(&["gt0", "type", "gre", "remote", "192.0.2.2", "local", "192.0.2.1",
    ///                            "key", "7", "oseq", "csum"]).unwrap();
    /// assert_eq!((c.spec.ikey, c.spec.okey, c.spec.oseq, c.spec.iseq, c.spec.icsum), (Some(7), Some(7), true, false, true));
    /// let err = GreConfig::parse(&["gt0", "type", "gre", "remote", "2001:db8::1"]).unwrap_err();
    /// assert!(err.to_string().contains("(Error: inet address is expected rather than \"2001:db8::1\".)"));
    /// ```
    pub fn parse(tokens: &[&str]) -> Result<GreConfig, GreConfigError> {
        let words: Vec<String> = ["link", "add"]
            .iter()
            .chain(tokens)
            .map(|w| w.to_string())
            .collect();
        let commands = parse_words(&words).map_err(GreConfigError::Parse)?;
        match commands.as_slice() {
            [Command::LinkAdd {
                name,
                kind: LinkKind::Gre(spec),
                mtu: None,
            }] => Ok(GreConfig {
                name: name.clone(),
                spec: spec.clone(),
            }),
            _ => Err(GreConfigError::NotATunnel(format!(
                "`{}`",
                tokens.join(" ")
            ))),
        }
    }

    /// Checks the configuration against the router: `local` must be one of
    /// its addresses, and the route to `remote` must not leave through the
    /// tunnel itself (a link of the same name in the FIB).
    ///
    /// ```
    /// use fibre_dev::gre::{GreConfig, GreConfigError};
    /// let fib = fibre_fib::Fib::new();
    /// let c = GreConfig::parse(&["gt0", "type", "gre", "remote", "192.0.2.2", "local", "192.0.2.1"]).unwrap();
    /// assert!(matches!(c.validate(&fib), Err(GreConfigError::Tunnel(fibre_fib::TunnelError::LocalNotOnRouter { .. }))));
    /// ```
    pub fn validate(&self, router: &Fib) -> Result<(), GreConfigError> {
        Ok(self.spec.check_against(&self.name, router)?)
    }

    /// Bytes the tunnel prepends: outer IP header plus GRE header (for the
    /// tap kinds the inner Ethernet header is payload, not overhead).
    pub fn overhead(&self) -> usize {
        self.spec.overhead() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<GreConfig, GreConfigError> {
        GreConfig::parse(&line.split_whitespace().collect::<Vec<_>>())
    }

    #[test]
    fn iproute2_spellings_reach_the_device_config() {
        let c = parse("g6 type ip6gre remote 2001:db8::2 local 2001:db8::1 ikey 1.2.3.4 okey 9 icsum oseq hoplimit 5 tclass inherit").unwrap();
        assert_eq!(c.name, "g6");
        assert_eq!(c.spec.kind, GreKind::Ip6Gre);
        assert_eq!((c.spec.ikey, c.spec.okey), (Some(0x0102_0304), Some(9)));
        assert_eq!(
            (c.spec.ttl, c.spec.tos),
            (Inheritable::Fixed(5), Inheritable::Inherit)
        );
        assert_eq!(c.overhead(), 40 + 12);
        let c = parse("g4 type gre remote 192.0.2.2 ttl 0 tos 0x10 seq").unwrap();
        assert_eq!(c.overhead(), 20 + 8);
    }

    #[test]
    fn other_links_and_link_state_are_not_tunnel_configs() {
        for line in [
            "d0 type dummy",
            "g up type gre remote 192.0.2.2",
            "g mtu 1400 type gre remote 192.0.2.2",
        ] {
            assert!(
                matches!(parse(line), Err(GreConfigError::NotATunnel(_))),
                "{line}"
            );
        }
        let err = parse("g type gre remote 192.0.2.2 key 4294967296").unwrap_err();
        assert!(matches!(err, GreConfigError::Parse(_)));
        assert!(err.to_string().ends_with(
            "(invalid value for \"key\": \"4294967296\"; it should be an unsigned integer)"
        ));
        assert!(matches!(parse(""), Err(GreConfigError::Parse(_))));
    }
}
