//! inet and cidr: an IPv4 or IPv6 address with a netmask length. A cidr
//! value is a network (no bits set right of the mask); an inet value is a
//! host address that may name its network's size.
//!
//! Text, binary and key encodings follow PostgreSQL's network type: text
//! `addr[/bits]` (inet leaves out `/32` and `/128`), binary
//! `family, bits, is_cidr, length, address`, and the order of
//! network_cmp (family, then the common prefix, then the mask length, then
//! the whole address).

use std::cmp::Ordering;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::err;
use crate::ErrorReport;

/// PostgreSQL's family codes in the binary format (PGSQL_AF_INET, _INET6).
const AF_INET: u8 = 2;
const AF_INET6: u8 = 3;

/// An inet or cidr value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Inet {
    /// The address.
    pub addr: IpAddr,
    /// The netmask length (0..=32 or 0..=128).
    pub bits: u8,
    /// A cidr value (else inet).
    pub cidr: bool,
}

impl Inet {
    /// Bits in an address of this family.
    pub fn max_bits(&self) -> u8 {
        match self.addr {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        }
    }

    /// PostgreSQL's family() result: 4 or 6.
    pub fn family(&self) -> i32 {
        match self.addr {
            IpAddr::V4(_) => 4,
            IpAddr::V6(_) => 6,
        }
    }

    /// The address bytes (4 or 16).
    pub fn octets(&self) -> Vec<u8> {
        match self.addr {
            IpAddr::V4(a) => a.octets().to_vec(),
            IpAddr::V6(a) => a.octets().to_vec(),
        }
    }

    fn with_octets(&self, bytes: &[u8]) -> IpAddr {
        match self.addr {
            IpAddr::V4(_) => {
                IpAddr::V4(Ipv4Addr::from(<[u8; 4]>::try_from(bytes).unwrap_or([0; 4])))
            }
            IpAddr::V6(_) => {
                IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(bytes).unwrap_or([0; 16])))
            }
        }
    }

    /// The address with every bit right of `bits` cleared (or set, with
    /// `ones`).
    fn fill_host(&self, bits: u8, ones: bool) -> IpAddr {
        let mut b = self.octets();
        for (i, byte) in b.iter_mut().enumerate() {
            let start = (i * 8) as u32;
            let keep = (bits as u32).saturating_sub(start).min(8);
            let mask: u8 = if keep == 0 { 0 } else { 0xffu8 << (8 - keep) };
            *byte = if ones { *byte | !mask } else { *byte & mask };
        }
        self.with_octets(&b)
    }

    /// network(): the network part, as cidr.
    pub fn network(&self) -> Inet {
        Inet { addr: self.fill_host(self.bits, false), bits: self.bits, cidr: true }
    }

    /// broadcast(): the address with every host bit set, as inet.
    pub fn broadcast(&self) -> Inet {
        Inet { addr: self.fill_host(self.bits, true), bits: self.bits, cidr: false }
    }

    /// netmask(): the mask as an address (inet, full length).
    pub fn netmask(&self) -> Inet {
        let zero = Inet { addr: self.with_octets(&vec![0; self.octets().len()]), ..*self };
        let ones = zero.with_octets(&vec![0xff; self.octets().len()]);
        let mask = Inet { addr: ones, ..zero }.fill_host(self.bits, false);
        Inet { addr: mask, bits: self.max_bits(), cidr: false }
    }

    /// hostmask(): the host bits as an address (inet, full length).
    pub fn hostmask(&self) -> Inet {
        let zero = self.with_octets(&vec![0; self.octets().len()]);
        let mask = Inet { addr: zero, ..*self }.fill_host(self.bits, true);
        Inet { addr: mask, bits: self.max_bits(), cidr: false }
    }

    /// True when bits right of the mask are set (which a cidr may not).
    pub fn has_host_bits(&self) -> bool {
        self.fill_host(self.bits, false) != self.addr
    }

    /// host(): the address alone.
    pub fn host(&self) -> String {
        self.addr.to_string()
    }

    /// text(): the address and mask length, always.
    pub fn text(&self) -> String {
        format!("{}/{}", self.addr, self.bits)
    }

    /// abbrev(): inet leaves out a full mask; cidr leaves out zero octets
    /// right of the mask (IPv4).
    pub fn abbrev(&self) -> String {
        match (self.cidr, self.addr) {
            (true, IpAddr::V4(a)) => {
                let o = a.octets();
                let n = (self.bits as usize).div_ceil(8).max(1);
                let parts: Vec<String> = o[..n].iter().map(|b| b.to_string()).collect();
                format!("{}/{}", parts.join("."), self.bits)
            }
            _ => self.to_string(),
        }
    }

    /// set_masklen(): the same address with another mask length; 22023
    /// past the family's maximum (-1 means the maximum).
    pub fn set_masklen(&self, bits: i32) -> Result<Inet, ErrorReport> {
        let bits = if bits == -1 { self.max_bits() as i32 } else { bits };
        if bits < 0 || bits > self.max_bits() as i32 {
            return Err(err!(InvalidParameterValue, "invalid mask length: {bits}"));
        }
        let mut out = Inet { bits: bits as u8, ..*self };
        if out.cidr {
            out.addr = out.fill_host(out.bits, false);
        }
        Ok(out)
    }

    /// `a << b` (`strict`) and `a <<= b`: a is within network b.
    pub fn within(&self, other: &Inet, strict: bool) -> bool {
        let fits = if strict { self.bits > other.bits } else { self.bits >= other.bits };
        self.family() == other.family()
            && fits
            && self.fill_host(other.bits, false) == other.fill_host(other.bits, false)
    }

    /// `a && b`: either network contains the other.
    pub fn overlaps(&self, other: &Inet) -> bool {
        let bits = self.bits.min(other.bits);
        self.family() == other.family()
            && self.fill_host(bits, false) == other.fill_host(bits, false)
    }

    /// network_cmp's order: family, the common prefix, the mask length,
    /// then the whole address (inet and cidr compare alike).
    pub fn compare(&self, other: &Inet) -> Ordering {
        let family = self.family().cmp(&other.family());
        if family != Ordering::Equal {
            return family;
        }
        let common = self.bits.min(other.bits);
        self.fill_host(common, false)
            .cmp(&other.fill_host(common, false))
            .then(self.bits.cmp(&other.bits))
            .then(self.addr.cmp(&other.addr))
    }

    /// A key that sorts bytewise as [`Inet::compare`]: family, the address
    /// masked to its own length, the length, the address.
    pub fn key(&self, out: &mut Vec<u8>) {
        out.push(self.family() as u8);
        out.extend(Inet { addr: self.fill_host(self.bits, false), ..*self }.octets());
        out.push(self.bits);
        out.extend(self.octets());
    }

    /// The binary wire format: family, bits, is_cidr, length, address.
    pub fn to_binary(&self, out: &mut Vec<u8>) {
        let bytes = self.octets();
        let family = if bytes.len() == 4 { AF_INET } else { AF_INET6 };
        out.extend([family, self.bits, self.cidr as u8, bytes.len() as u8]);
        out.extend(bytes);
    }

    /// Reads the binary wire format (`cidr` says which type is expected).
    pub fn from_binary(b: &[u8], cidr: bool) -> Result<Inet, ErrorReport> {
        let what = if cidr { "cidr" } else { "inet" };
        let invalid = || err!(InvalidBinaryRepresentation, "invalid external \"{what}\" value");
        let [family, bits, _is_cidr, len, rest @ ..] = b else { return Err(invalid()) };
        let addr = match (*family, *len, rest.len()) {
            (AF_INET, 4, 4) => IpAddr::V4(Ipv4Addr::new(rest[0], rest[1], rest[2], rest[3])),
            (AF_INET6, 16, 16) => {
                IpAddr::V6(Ipv6Addr::from(<[u8; 16]>::try_from(rest).map_err(|_| invalid())?))
            }
            _ => return Err(invalid()),
        };
        let v = Inet { addr, bits: *bits, cidr };
        if v.bits > v.max_bits() {
            return Err(invalid());
        }
        if cidr && v.has_host_bits() {
            return Err(invalid());
        }
        Ok(v)
    }

    /// Reads the text form: `addr[/bits]`; a cidr's IPv4 address may leave
    /// out trailing octets (`10/8`, `192.168` is /16).
    pub fn parse(s: &str, cidr: bool) -> Result<Inet, ErrorReport> {
        let what = if cidr { "cidr" } else { "inet" };
        let invalid =
            || err!(InvalidTextRepresentation, "invalid input syntax for type {what}: \"{s}\"");
        let t = s.trim();
        let (addr_text, bits_text) = match t.split_once('/') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let bits: Option<u8> = match bits_text {
            Some(b) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => {
                Some(b.parse().map_err(|_| invalid())?)
            }
            Some(_) => return Err(invalid()),
            None => None,
        };
        let (addr, given_octets) = match addr_text.parse::<IpAddr>() {
            Ok(a) => (a, 4),
            Err(_) if cidr && !addr_text.contains(':') => {
                // Abbreviated IPv4 network: 1 to 3 octets.
                let parts: Vec<&str> = addr_text.split('.').collect();
                if parts.is_empty() || parts.len() > 3 {
                    return Err(invalid());
                }
                let mut o = [0u8; 4];
                for (i, p) in parts.iter().enumerate() {
                    o[i] = p.parse().map_err(|_| invalid())?;
                }
                (IpAddr::V4(Ipv4Addr::from(o)), parts.len())
            }
            Err(_) => return Err(invalid()),
        };
        let max = match addr {
            IpAddr::V4(_) => 32,
            IpAddr::V6(_) => 128,
        };
        let bits = match bits {
            Some(b) if b > max => return Err(invalid()),
            Some(b) => b,
            // A cidr without a length takes its class's (PostgreSQL's
            // classful default), an inet the full length.
            None if cidr && matches!(addr, IpAddr::V4(_)) => classful_bits(&addr, given_octets),
            None => max,
        };
        let v = Inet { addr, bits, cidr };
        if cidr && v.has_host_bits() {
            return Err(err!(InvalidTextRepresentation, "invalid cidr value: \"{s}\"")
                .with_detail("Value has bits set to right of mask."));
        }
        Ok(v)
    }
}

/// The mask length an IPv4 cidr written without one gets: its class's
/// (A /8, B /16, C /24, D /8, E /32), widened to cover the octets written;
/// a lone class D octet 224 is /4 (PostgreSQL's inet_cidr_pton).
fn classful_bits(addr: &IpAddr, written_octets: usize) -> u8 {
    let IpAddr::V4(a) = addr else { return 128 };
    let first = a.octets()[0];
    let mut bits = match first {
        240.. => 32,
        224.. => 8,
        192.. => 24,
        128.. => 16,
        _ => 8,
    };
    bits = bits.max((written_octets * 8) as u8);
    if bits == 8 && first == 224 {
        bits = 4;
    }
    bits
}

impl std::fmt::Display for Inet {
    /// The text form: inet leaves out a full-length mask, cidr never does.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.cidr && self.bits == self.max_bits() {
            write!(f, "{}", self.addr)
        } else {
            write!(f, "{}/{}", self.addr, self.bits)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inet(s: &str) -> Inet {
        Inet::parse(s, false).expect("inet")
    }

    fn cidr(s: &str) -> Inet {
        Inet::parse(s, true).expect("cidr")
    }

    #[test]
    fn text_forms() {
        assert_eq!(inet("192.168.1.5").to_string(), "192.168.1.5");
        assert_eq!(inet("192.168.1.5/24").to_string(), "192.168.1.5/24");
        assert_eq!(cidr("192.168.1.0/24").to_string(), "192.168.1.0/24");
        // As PostgreSQL 15 prints them.
        assert_eq!(cidr("10").to_string(), "10.0.0.0/8");
        assert_eq!(cidr("192.168").to_string(), "192.168.0.0/24");
        assert_eq!(cidr("128.1").to_string(), "128.1.0.0/16");
        assert_eq!(cidr("128").to_string(), "128.0.0.0/16");
        assert_eq!(cidr("224.1").to_string(), "224.1.0.0/16");
        assert_eq!(cidr("10.0.0.0").to_string(), "10.0.0.0/32");
        assert_eq!(cidr("10.1.0.0/17").abbrev(), "10.1.0/17");
        assert_eq!(inet("::1/64").netmask().to_string(), "ffff:ffff:ffff:ffff::");
        assert_eq!(inet("::1").to_string(), "::1");
        assert_eq!(inet("2001:db8::1/64").to_string(), "2001:db8::1/64");
        assert!(Inet::parse("192.168.1.5/24", true).is_err());
        assert!(Inet::parse("1.2.3.4/33", false).is_err());
        assert!(Inet::parse("x", false).is_err());
    }

    #[test]
    fn functions() {
        let a = inet("192.168.1.5/24");
        assert_eq!(a.network().to_string(), "192.168.1.0/24");
        assert_eq!(a.broadcast().to_string(), "192.168.1.255/24");
        assert_eq!(a.netmask().to_string(), "255.255.255.0");
        assert_eq!(a.hostmask().to_string(), "0.0.0.255");
        assert_eq!(cidr("10.1.0.0/16").abbrev(), "10.1/16");
        assert!(inet("10.1.2.3").within(&cidr("10.0.0.0/8"), true));
        assert!(!cidr("10.0.0.0/8").within(&cidr("10.0.0.0/8"), true));
        assert!(cidr("10.0.0.0/8").within(&cidr("10.0.0.0/8"), false));
        assert!(cidr("10.0.0.0/8").overlaps(&cidr("10.1.0.0/16")));
    }

    #[test]
    fn order_and_keys_agree() {
        let vals = [
            "10.0.0.0/8",
            "10.2.0.0/8",
            "10.1.0.0/16",
            "10.1.0.5/8",
            "10.1.0.5",
            "9.9.9.9",
            "::1",
            "192.168.0.0/16",
            "0.0.0.0/0",
        ];
        for x in vals {
            for y in vals {
                let (a, b) = (inet(x), inet(y));
                let (mut ka, mut kb) = (Vec::new(), Vec::new());
                a.key(&mut ka);
                b.key(&mut kb);
                assert_eq!(a.compare(&b), ka.cmp(&kb), "{x} vs {y}");
            }
        }
        let mut bin = Vec::new();
        inet("2001:db8::1/64").to_binary(&mut bin);
        assert_eq!(Inet::from_binary(&bin, false).expect("binary"), inet("2001:db8::1/64"));
    }
}
