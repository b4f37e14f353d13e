//! Functions and operators of the inet and cidr types: host, text,
//! abbrev, masklen, family, network, netmask, hostmask, broadcast,
//! set_masklen, inet_same_family, inet_client_addr, inet_client_port,
//! inet_server_addr and inet_server_port,
//! and the containment operators `<<`, `<<=`, `>>`, `>>=`, `&&`.

use sqltypes::inet::Inet;
use sqltypes::{DataType, Value};

use crate::bail;
use crate::error::Result;
use crate::expr::EvalContext;

/// One function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetFunc {
    /// host(inet): the address as text.
    Host,
    /// text(inet): address and mask length as text.
    Text,
    /// abbrev(inet | cidr)
    Abbrev,
    /// masklen(inet)
    MaskLen,
    /// family(inet): 4 or 6
    Family,
    /// network(inet): cidr
    Network,
    /// netmask(inet)
    NetMask,
    /// hostmask(inet)
    HostMask,
    /// broadcast(inet)
    Broadcast,
    /// set_masklen(inet | cidr, int)
    SetMaskLen,
    /// inet_same_family(inet, inet)
    SameFamily,
    /// `a << b` (strict) or `a <<= b`: a within b (`>>` and `>>=` swap
    /// the operands).
    Within(bool),
    /// `a && b`
    Overlaps,
    /// inet_client_addr()
    ClientAddr,
    /// inet_client_port()
    ClientPort,
    /// inet_server_addr()
    ServerAddr,
    /// inet_server_port()
    ServerPort,
}

/// A resolved call: the function, its result type, its argument types.
pub type Resolved = (NetFunc, DataType, Vec<Option<DataType>>);

fn is_net(t: &DataType) -> bool {
    matches!(t, DataType::Inet | DataType::Cidr)
}

/// The function `name` names with these arguments; None if `name` is not
/// one of them (or, for text, not with an inet argument).
pub fn resolve(name: &str, args: &[DataType]) -> Option<Result<Resolved>> {
    use DataType::{Bool, Cidr, Inet as I, Int4, Text};
    let inet = || vec![Some(I)];
    let (f, ty, params) = match (name, args) {
        ("text", [t]) if is_net(t) => (NetFunc::Text, Text, inet()),
        ("host", [_]) => (NetFunc::Host, Text, inet()),
        ("abbrev", [Cidr]) => (NetFunc::Abbrev, Text, vec![Some(Cidr)]),
        ("abbrev", [_]) => (NetFunc::Abbrev, Text, inet()),
        ("masklen", [_]) => (NetFunc::MaskLen, Int4, inet()),
        ("family", [_]) => (NetFunc::Family, Int4, inet()),
        ("network", [_]) => (NetFunc::Network, Cidr, inet()),
        ("netmask", [_]) => (NetFunc::NetMask, I, inet()),
        ("hostmask", [_]) => (NetFunc::HostMask, I, inet()),
        ("broadcast", [_]) => (NetFunc::Broadcast, I, inet()),
        ("set_masklen", [Cidr, _]) => (NetFunc::SetMaskLen, Cidr, vec![Some(Cidr), Some(Int4)]),
        ("set_masklen", [_, _]) => (NetFunc::SetMaskLen, I, vec![Some(I), Some(Int4)]),
        ("inet_same_family", [_, _]) => (NetFunc::SameFamily, Bool, vec![Some(I), Some(I)]),
        ("inet_client_addr", []) => (NetFunc::ClientAddr, I, vec![]),
        ("inet_client_port", []) => (NetFunc::ClientPort, Int4, vec![]),
        ("inet_server_addr", []) => (NetFunc::ServerAddr, I, vec![]),
        ("inet_server_port", []) => (NetFunc::ServerPort, Int4, vec![]),
        (
            "host" | "abbrev" | "masklen" | "family" | "network" | "netmask" | "hostmask"
            | "broadcast" | "set_masklen" | "inet_same_family" | "inet_client_addr"
            | "inet_client_port" | "inet_server_addr" | "inet_server_port",
            _,
        ) => return Some(Err(super::no_such_function(name, args))),
        _ => return None,
    };
    Some(Ok((f, ty, params)))
}

/// The containment operator `sym` between `lt` and `rt` when either is
/// inet or cidr (None otherwise): the function and whether the operands
/// swap.
pub fn operator(sym: &str, lt: &DataType, rt: &DataType) -> Option<(NetFunc, bool)> {
    let fits = |t: &DataType| is_net(t) || *t == DataType::Unknown;
    if !(is_net(lt) || is_net(rt)) || !fits(lt) || !fits(rt) {
        return None;
    }
    Some(match sym {
        "<<" => (NetFunc::Within(true), false),
        "<<=" => (NetFunc::Within(false), false),
        ">>" => (NetFunc::Within(true), true),
        ">>=" => (NetFunc::Within(false), true),
        "&&" => (NetFunc::Overlaps, false),
        _ => return None,
    })
}

/// Evaluates `f` (strict).
pub fn call(f: NetFunc, args: Vec<Value>, ctx: &EvalContext) -> Result<Value> {
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let net = |i: usize| match args.get(i) {
        Some(Value::Inet(v)) => Ok(*v),
        other => bail!(InternalError, "network function given {other:?}"),
    };
    let text = |s: String| Ok(Value::Text(s));
    match f {
        NetFunc::Host => text(net(0)?.host()),
        NetFunc::Text => text(net(0)?.text()),
        NetFunc::Abbrev => text(net(0)?.abbrev()),
        NetFunc::MaskLen => Ok(Value::Int4(net(0)?.bits as i32)),
        NetFunc::Family => Ok(Value::Int4(net(0)?.family())),
        NetFunc::Network => Ok(Value::Inet(net(0)?.network())),
        NetFunc::NetMask => Ok(Value::Inet(net(0)?.netmask())),
        NetFunc::HostMask => Ok(Value::Inet(net(0)?.hostmask())),
        NetFunc::Broadcast => Ok(Value::Inet(net(0)?.broadcast())),
        NetFunc::SetMaskLen => {
            let Some(Value::Int4(bits)) = args.get(1) else {
                bail!(InternalError, "set_masklen given {args:?}")
            };
            Ok(Value::Inet(net(0)?.set_masklen(*bits)?))
        }
        NetFunc::SameFamily => Ok(Value::Bool(net(0)?.family() == net(1)?.family())),
        NetFunc::Within(strict) => Ok(Value::Bool(net(0)?.within(&net(1)?, strict))),
        NetFunc::Overlaps => Ok(Value::Bool(net(0)?.overlaps(&net(1)?))),
        NetFunc::ClientAddr | NetFunc::ClientPort | NetFunc::ServerAddr | NetFunc::ServerPort => {
            let server = matches!(f, NetFunc::ServerAddr | NetFunc::ServerPort);
            let addr = ctx
                .backends
                .as_ref()
                .and_then(|b| b.registry().get(ctx.pid))
                .and_then(|b| if server { b.server } else { b.client });
            Ok(match (f, addr) {
                (_, None) => Value::Null,
                (NetFunc::ClientAddr | NetFunc::ServerAddr, Some(a)) => {
                    let bits = if a.is_ipv4() { 32 } else { 128 };
                    Value::Inet(Inet { addr: a.ip(), bits, cidr: false })
                }
                (_, Some(a)) => Value::Int4(a.port() as i32),
            })
        }
    }
}
