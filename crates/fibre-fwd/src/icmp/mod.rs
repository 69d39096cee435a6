//! ICMP and ICMPv6 messages as the Linux kernel sends them (RFC 792, 1812,
//! 4443): which error a drop earns, its source address, how much of the
//! offending packet it quotes, and the rate limits in front of it.
