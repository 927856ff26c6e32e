use super::wire::{mutation_ops, other_ops, ALL_OPS};
use super::*;
use dirigo_core::lb::sched::{SchedFlags, SchedKind};
use dirigo_core::lb::spec::{DestKey, DestSpec, Method, Proto, ServiceKey, ServiceSpec, Timeouts};
use std::net::Ipv4Addr;

fn key() -> ServiceKey {
    ServiceKey {
        fwmark: 0,
        proto: Proto::Tcp,
        vip: std::net::IpAddr::V4(Ipv4Addr::new(10, 0, 0, 100)),
        port: 80,
    }
}

#[test]
fn request_wire_shape() {
    let env = RequestEnvelope {
        v: 1,
        id: 7,
        req: Request::Mutate(BatchCmd::DelService { key: key() }),
    };
    let s = serde_json::to_string(&env).unwrap();
    assert_eq!(
        s,
        r#"{"v":1,"id":7,"req":{"op":"del_service","key":{"proto":"tcp","vip":"10.0.0.100","port":80}}}"#
    );
    let back = parse_request_line(s.as_bytes()).unwrap();
    assert_eq!(back, env);
    let clear = serde_json::to_string(&RequestEnvelope {
        v: 1,
        id: 1,
        req: Request::Mutate(BatchCmd::Clear),
    })
    .unwrap();
    assert_eq!(clear, r#"{"v":1,"id":1,"req":{"op":"clear"}}"#);
}

#[test]
fn response_wire_shape() {
    let ok = ResponseEnvelope::new(3, Ok(Response::Done));
    assert_eq!(
        serde_json::to_string(&ok).unwrap(),
        r#"{"v":1,"id":3,"ok":{"kind":"done"}}"#
    );
    let err = ResponseEnvelope::new(4, Err(CtlError::no_service()));
    assert_eq!(
        serde_json::to_string(&err).unwrap(),
        r#"{"v":1,"id":4,"err":{"code":"no_service","msg":"No such service"}}"#
    );
    let back: ResponseEnvelope =
        serde_json::from_str(r#"{"v":1,"id":4,"err":{"code":"from_the_future","msg":"x"}}"#)
            .unwrap();
    assert_eq!(back.into_result().unwrap_err().code, ErrCode::Other);
}

#[test]
fn every_request_round_trips() {
    let (svc, dest) = spec();
    let reqs = vec![
        Request::Mutate(BatchCmd::AddService {
            service: svc.clone(),
        }),
        Request::Mutate(BatchCmd::EditService {
            service: svc.clone(),
        }),
        Request::Mutate(BatchCmd::DelService { key: key() }),
        Request::Mutate(BatchCmd::Clear),
        Request::Mutate(BatchCmd::AddDest {
            service: key(),
            dest: dest.clone(),
        }),
        Request::Mutate(BatchCmd::EditDest {
            service: key(),
            dest: dest.clone(),
        }),
        Request::Mutate(BatchCmd::DelDest {
            service: key(),
            dest: dest.key,
        }),
        Request::List(ListOpts {
            service: Some(key()),
            stats: true,
            rate: false,
        }),
        Request::ListConns {
            service: None,
            limit: Some(10),
        },
        Request::Mutate(BatchCmd::Zero { service: None }),
        Request::Mutate(BatchCmd::SetTimeouts {
            timeouts: Timeouts::default(),
        }),
        Request::GetTimeouts,
        Request::RestoreBatch {
            cmds: vec![
                BatchCmd::Clear,
                BatchCmd::AddService { service: svc },
                BatchCmd::AddDest {
                    service: key(),
                    dest,
                },
            ],
        },
        Request::Ports { xstats: true },
        Request::Addresses,
        Request::AddrAdd {
            port: 0,
            addr: Ipv4Addr::new(10, 0, 0, 1).into(),
            prefix_len: 24,
        },
        Request::AddrAdd {
            port: 1,
            addr: "2001:db8::1".parse().unwrap(),
            prefix_len: 64,
        },
        Request::AddrDel {
            port: 0,
            addr: Ipv4Addr::new(10, 0, 0, 1).into(),
        },
        Request::Routes,
        Request::Neighbors,
        Request::NeighAdd {
            port: 1,
            addr: Ipv4Addr::new(10, 0, 0, 2).into(),
            mac: "02:00:00:00:00:01".parse().unwrap(),
        },
        Request::NeighFlush { port: None },
        Request::Lcores,
        Request::Drops,
        Request::Reload,
        Request::Version,
        Request::Fingerprint { service: None },
        Request::Vips,
        Request::Census,
        Request::Handoff,
        Request::Marks,
        Request::Snat,
        Request::MarkAdd {
            rule: "udp 2001:db8::/64 53-60 from 2001:db8:1::/48 mark 7"
                .parse()
                .unwrap(),
        },
        Request::MarkDel {
            rule: "tcp 10.0.0.0/8 80 mark 1".parse().unwrap(),
        },
        Request::Mutate(BatchCmd::AddService {
            service: ServiceSpec {
                key: ServiceKey::fwmark(9, true),
                ..spec().0
            },
        }),
    ];
    for (i, req) in reqs.into_iter().enumerate() {
        let env = RequestEnvelope {
            v: 1,
            id: i as u64,
            req,
        };
        let s = serde_json::to_string(&env).unwrap();
        assert_eq!(parse_request_line(s.as_bytes()).unwrap(), env, "{s}");
    }
}

#[test]
fn parse_errors_are_classified() {
    let e = parse_request_line(b"garbage").unwrap_err();
    assert_eq!((e.0, e.1.code), (0, ErrCode::BadRequest));
    let e = parse_request_line(b"[1,2]").unwrap_err();
    assert_eq!((e.0, e.1.code), (0, ErrCode::BadRequest));
    let e = parse_request_line(br#"{"v":2,"id":9,"req":{"op":"clear"}}"#).unwrap_err();
    assert_eq!((e.0, e.1.code), (9, ErrCode::BadVersion));
    let e = parse_request_line(br#"{"v":1,"id":5,"req":{"op":"fly"}}"#).unwrap_err();
    assert_eq!((e.0, e.1.code), (5, ErrCode::UnknownRequest));
    let e = parse_request_line(br#"{"v":1,"id":5}"#).unwrap_err();
    assert_eq!((e.0, e.1.code), (5, ErrCode::BadRequest));
    let e = parse_request_line(br#"{"v":1,"req":{"op":"clear"}}"#).unwrap_err();
    assert_eq!((e.0, e.1.code), (0, ErrCode::BadRequest));
    let e = parse_request_line(br#"{"v":1,"id":6,"req":{"op":"add_service","service":{}}}"#)
        .unwrap_err();
    assert_eq!((e.0, e.1.code), (6, ErrCode::UnknownRequest));
}

#[test]
fn optional_fields_default() {
    let e = parse_request_line(br#"{"v":1,"id":1,"req":{"op":"list"}}"#).unwrap();
    assert_eq!(e.req, Request::List(ListOpts::default()));
    let e = parse_request_line(br#"{"v":1,"id":1,"req":{"op":"zero"}}"#).unwrap();
    assert_eq!(e.req, Request::Mutate(BatchCmd::Zero { service: None }));
    let e = parse_request_line(br#"{"v":1,"id":1,"req":{"op":"ports"}}"#).unwrap();
    assert_eq!(e.req, Request::Ports { xstats: false });
    let e = parse_request_line(br#"{"v":1,"id":1,"req":{"op":"fingerprint"}}"#).unwrap();
    assert_eq!(e.req, Request::Fingerprint { service: None });
    // A service spec without the optional fields gets ipvsadm's defaults.
    let e = parse_request_line(
        br#"{"v":1,"id":2,"req":{"op":"add_service","service":{"key":{"proto":"udp","vip":"1.2.3.4","port":53},"sched":"rr"}}}"#,
    )
    .unwrap();
    match e.req {
        Request::Mutate(BatchCmd::AddService { service }) => {
            assert_eq!(service.persistent, None);
            assert_eq!(service.netmask, Ipv4Addr::BROADCAST);
            assert_eq!(service.flags, SchedFlags::default());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn batch_error_index_on_the_wire() {
    let env = ResponseEnvelope::new(1, Err(CtlError::no_dest().at(3)));
    let s = serde_json::to_string(&env).unwrap();
    assert_eq!(
        s,
        r#"{"v":1,"id":1,"err":{"code":"no_dest","msg":"No such destination","at":3}}"#
    );
    let back: ResponseEnvelope = serde_json::from_str(&s).unwrap();
    assert_eq!(back.into_result().unwrap_err().at, Some(3));
}

fn spec() -> (ServiceSpec, DestSpec) {
    let svc = ServiceSpec {
        members: Vec::new(),
        local_addresses: Vec::new(),
        key: key(),
        sched: SchedKind::Mh,
        flags: SchedFlags {
            fallback: true,
            port: false,
        },
        persistent: Some(300),
        netmask: Ipv4Addr::new(255, 255, 255, 0),
        prefix6: 128,
        synproxy: false,
        ops: false,
        client_address: Default::default(),
    };
    let dest = DestSpec {
        key: DestKey {
            addr: std::net::IpAddr::V4(Ipv4Addr::new(172, 16, 0, 11)),
            port: 8080,
        },
        method: Method::Nat,
        weight: 3,
        upper: 10,
        lower: 2,
        tun: Default::default(),
    };
    (svc, dest)
}

/// The nine service-table mutations, each with its exact wire form (as a
/// request and as a `restore_batch` command).
fn golden_mutations() -> Vec<(BatchCmd, &'static str)> {
    let (svc, dest) = spec();
    let timeouts = Timeouts {
        tcp: 900,
        tcpfin: 0,
        udp: 300,
    };
    vec![
        (
            BatchCmd::AddService {
                service: svc.clone(),
            },
            r#"{"op":"add_service","service":{"key":{"proto":"tcp","vip":"10.0.0.100","port":80},"sched":"mh","flags":{"fallback":true,"port":false},"persistent":300,"netmask":"255.255.255.0"}}"#,
        ),
        (
            BatchCmd::EditService { service: svc },
            r#"{"op":"edit_service","service":{"key":{"proto":"tcp","vip":"10.0.0.100","port":80},"sched":"mh","flags":{"fallback":true,"port":false},"persistent":300,"netmask":"255.255.255.0"}}"#,
        ),
        (
            BatchCmd::DelService { key: key() },
            r#"{"op":"del_service","key":{"proto":"tcp","vip":"10.0.0.100","port":80}}"#,
        ),
        (BatchCmd::Clear, r#"{"op":"clear"}"#),
        (
            BatchCmd::AddDest {
                service: key(),
                dest: dest.clone(),
            },
            r#"{"op":"add_dest","service":{"proto":"tcp","vip":"10.0.0.100","port":80},"dest":{"key":{"addr":"172.16.0.11","port":8080},"method":"nat","weight":3,"upper":10,"lower":2}}"#,
        ),
        (
            BatchCmd::EditDest {
                service: key(),
                dest: dest.clone(),
            },
            r#"{"op":"edit_dest","service":{"proto":"tcp","vip":"10.0.0.100","port":80},"dest":{"key":{"addr":"172.16.0.11","port":8080},"method":"nat","weight":3,"upper":10,"lower":2}}"#,
        ),
        (
            BatchCmd::DelDest {
                service: key(),
                dest: dest.key,
            },
            r#"{"op":"del_dest","service":{"proto":"tcp","vip":"10.0.0.100","port":80},"dest":{"addr":"172.16.0.11","port":8080}}"#,
        ),
        (
            BatchCmd::SetTimeouts { timeouts },
            r#"{"op":"set_timeouts","timeouts":{"tcp":900,"tcpfin":0,"udp":300}}"#,
        ),
        (
            BatchCmd::Zero { service: None },
            r#"{"op":"zero","service":null}"#,
        ),
        (
            BatchCmd::Zero {
                service: Some(key()),
            },
            r#"{"op":"zero","service":{"proto":"tcp","vip":"10.0.0.100","port":80}}"#,
        ),
    ]
}

fn assert_golden(req: Request, line: &str) {
    let env = RequestEnvelope { v: 1, id: 42, req };
    assert_eq!(serde_json::to_string(&env).unwrap(), line);
    assert_eq!(parse_request_line(line.as_bytes()).unwrap(), env, "{line}");
}

/// Protocol v1 on the wire, byte for byte: every mutating request as one
/// line, alone and inside a `restore_batch`.
#[test]
fn mutating_requests_golden_lines() {
    let mut batch = Vec::new();
    let mut batch_line = Vec::new();
    for (cmd, body) in golden_mutations() {
        let line = format!(r#"{{"v":1,"id":42,"req":{body}}}"#);
        assert_golden(Request::Mutate(cmd.clone()), &line);
        batch.push(cmd);
        batch_line.push(body);
    }
    assert_golden(
        Request::RestoreBatch { cmds: batch },
        &format!(
            r#"{{"v":1,"id":42,"req":{{"op":"restore_batch","cmds":[{}]}}}}"#,
            batch_line.join(",")
        ),
    );
    let others = [
        (
            Request::AddrAdd {
                port: 0,
                addr: Ipv4Addr::new(10, 0, 0, 1).into(),
                prefix_len: 24,
            },
            r#"{"v":1,"id":42,"req":{"op":"addr_add","port":0,"addr":"10.0.0.1","prefix_len":24}}"#,
        ),
        (
            Request::AddrAdd {
                port: 0,
                addr: "2001:db8::1".parse().unwrap(),
                prefix_len: 64,
            },
            r#"{"v":1,"id":42,"req":{"op":"addr_add","port":0,"addr":"2001:db8::1","prefix_len":64}}"#,
        ),
        (
            Request::AddrDel {
                port: 1,
                addr: Ipv4Addr::new(10, 0, 0, 1).into(),
            },
            r#"{"v":1,"id":42,"req":{"op":"addr_del","port":1,"addr":"10.0.0.1"}}"#,
        ),
        (
            Request::NeighAdd {
                port: 1,
                addr: Ipv4Addr::new(10, 0, 0, 2).into(),
                mac: "02:00:00:00:00:01".parse().unwrap(),
            },
            r#"{"v":1,"id":42,"req":{"op":"neigh_add","port":1,"addr":"10.0.0.2","mac":"02:00:00:00:00:01"}}"#,
        ),
        (
            Request::NeighAdd {
                port: 0,
                addr: "2001:db8::5".parse::<std::net::Ipv6Addr>().unwrap().into(),
                mac: "02:00:00:00:00:01".parse().unwrap(),
            },
            r#"{"v":1,"id":42,"req":{"op":"neigh_add","port":0,"addr":"2001:db8::5","mac":"02:00:00:00:00:01"}}"#,
        ),
        (
            Request::NeighFlush { port: None },
            r#"{"v":1,"id":42,"req":{"op":"neigh_flush","port":null}}"#,
        ),
        (
            Request::NeighFlush { port: Some(2) },
            r#"{"v":1,"id":42,"req":{"op":"neigh_flush","port":2}}"#,
        ),
        (Request::Reload, r#"{"v":1,"id":42,"req":{"op":"reload"}}"#),
        (Request::Sync, r#"{"v":1,"id":42,"req":{"op":"sync"}}"#),
        (
            Request::Fingerprint { service: None },
            r#"{"v":1,"id":42,"req":{"op":"fingerprint","service":null}}"#,
        ),
        (
            Request::Fingerprint {
                service: Some(key()),
            },
            r#"{"v":1,"id":42,"req":{"op":"fingerprint","service":{"proto":"tcp","vip":"10.0.0.100","port":80}}}"#,
        ),
        (Request::Vips, r#"{"v":1,"id":42,"req":{"op":"vips"}}"#),
        (
            Request::Handoff,
            r#"{"v":1,"id":42,"req":{"op":"handoff"}}"#,
        ),
        (Request::Marks, r#"{"v":1,"id":42,"req":{"op":"marks"}}"#),
        (Request::Snat, r#"{"v":1,"id":42,"req":{"op":"snat"}}"#),
        (
            Request::MarkAdd {
                rule: "tcp 192.0.2.10/32 80-443 from 198.51.100.0/24 mark 1"
                    .parse()
                    .unwrap(),
            },
            r#"{"v":1,"id":42,"req":{"op":"mark_add","rule":{"proto":"tcp","dst":{"addr":"192.0.2.10","len":32},"port_lo":80,"port_hi":443,"src":{"addr":"198.51.100.0","len":24},"mark":1}}}"#,
        ),
        (
            Request::MarkDel {
                rule: "udp 2001:db8::/64 53 mark 2".parse().unwrap(),
            },
            r#"{"v":1,"id":42,"req":{"op":"mark_del","rule":{"proto":"udp","dst":{"addr":"2001:db8::","len":64},"port_lo":53,"port_hi":53,"mark":2}}}"#,
        ),
    ];
    for (req, line) in others {
        assert_golden(req, line);
    }
}

/// What a malformed request is answered with, message included.
#[test]
fn bad_request_golden_answers() {
    let cases = [
        (
            r#"{"v":1,"id":5,"req":{"op":"fly"}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: unknown variant `fly`, expected one of `add_service`, `edit_service`, `del_service`, `clear`, `add_dest`, `edit_dest`, `del_dest`, `list`, `list_conns`, `zero`, `set_timeouts`, `get_timeouts`, `restore_batch`, `ports`, `addresses`, `addr_add`, `addr_del`, `routes`, `neighbors`, `neigh_add`, `neigh_flush`, `lcores`, `drops`, `reload`, `version`, `health`, `health_set`, `sync`, `fingerprint`, `vips`, `census`, `handoff`, `marks`, `mark_add`, `mark_del`, `add_laddr`, `del_laddr`, `snat`"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: missing field `op`"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{"op":5}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: invalid type: integer `5`, expected variant identifier"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{"op":"add_service","service":{}}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: missing field `key`"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{"op":"del_service"}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: missing field `key`"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{"op":"del_dest","service":{"proto":"tcp","vip":"10.0.0.100","port":80},"dest":{"addr":"x"}}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: invalid IP address syntax"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{"op":"addr_add","port":0}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: missing field `addr`"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{"op":"list","stats":"yes"}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: invalid type: string \"yes\", expected a boolean"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":{"op":"restore_batch","cmds":[{"op":"list"}]}}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: unknown variant `list`, expected one of `add_service`, `edit_service`, `del_service`, `clear`, `add_dest`, `edit_dest`, `del_dest`, `set_timeouts`, `add_laddr`, `del_laddr`, `zero`"}}"#,
        ),
        (
            r#"{"v":1,"id":5,"req":"clear"}"#,
            r#"{"v":1,"id":5,"err":{"code":"unknown_request","msg":"bad request: invalid type: string \"clear\", expected internally tagged enum Request"}}"#,
        ),
    ];
    for (line, want) in cases {
        let (id, e) = parse_request_line(line.as_bytes()).unwrap_err();
        let got = serde_json::to_string(&ResponseEnvelope::new(id, Err(e))).unwrap();
        assert_eq!(got, want, "{line}");
    }
    // Unknown fields are ignored, as before.
    let e = parse_request_line(br#"{"v":1,"id":5,"req":{"op":"clear","extra":1}}"#).unwrap();
    assert_eq!(e.req, Request::Mutate(BatchCmd::Clear));
}

#[test]
fn unknown_op_lists_every_op() {
    let mut listed = ALL_OPS.to_vec();
    let mut derived = [mutation_ops(), other_ops()].concat();
    listed.sort_unstable();
    derived.sort_unstable();
    assert_eq!(listed, derived);
}
