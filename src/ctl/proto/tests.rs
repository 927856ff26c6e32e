use super::*;
use crate::lb::sched::{SchedFlags, SchedKind};
use crate::lb::spec::{Method, Proto};

fn key() -> ServiceKey {
    ServiceKey {
        proto: Proto::Tcp,
        vip: Ipv4Addr::new(10, 0, 0, 100),
        port: 80,
    }
}

#[test]
fn request_wire_shape() {
    let env = RequestEnvelope {
        v: 1,
        id: 7,
        req: Request::DelService { key: key() },
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
        req: Request::Clear,
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
    let svc = ServiceSpec {
        key: key(),
        sched: SchedKind::Mh,
        flags: SchedFlags {
            fallback: true,
            port: false,
        },
        persistent: Some(300),
        netmask: Ipv4Addr::new(255, 255, 255, 0),
    };
    let dest = DestSpec {
        key: DestKey {
            addr: Ipv4Addr::new(172, 16, 0, 11),
            port: 80,
        },
        method: Method::Nat,
        weight: 3,
        upper: 10,
        lower: 2,
    };
    let reqs = vec![
        Request::AddService {
            service: svc.clone(),
        },
        Request::EditService {
            service: svc.clone(),
        },
        Request::DelService { key: key() },
        Request::Clear,
        Request::AddDest {
            service: key(),
            dest: dest.clone(),
        },
        Request::EditDest {
            service: key(),
            dest: dest.clone(),
        },
        Request::DelDest {
            service: key(),
            dest: dest.key,
        },
        Request::List(ListOpts {
            service: Some(key()),
            stats: true,
            rate: false,
        }),
        Request::ListConns {
            service: None,
            limit: Some(10),
        },
        Request::Zero { service: None },
        Request::SetTimeouts {
            timeouts: Timeouts::default(),
        },
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
            addr: Ipv4Addr::new(10, 0, 0, 1),
            prefix_len: 24,
        },
        Request::AddrDel {
            port: 0,
            addr: Ipv4Addr::new(10, 0, 0, 1),
        },
        Request::Routes,
        Request::Neighbors,
        Request::NeighAdd {
            port: 1,
            addr: Ipv4Addr::new(10, 0, 0, 2),
            mac: "02:00:00:00:00:01".parse().unwrap(),
        },
        Request::NeighFlush { port: None },
        Request::Lcores,
        Request::Drops,
        Request::Reload,
        Request::Version,
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
    assert_eq!(e.req, Request::Zero { service: None });
    let e = parse_request_line(br#"{"v":1,"id":1,"req":{"op":"ports"}}"#).unwrap();
    assert_eq!(e.req, Request::Ports { xstats: false });
    // A service spec without the optional fields gets ipvsadm's defaults.
    let e = parse_request_line(
        br#"{"v":1,"id":2,"req":{"op":"add_service","service":{"key":{"proto":"udp","vip":"1.2.3.4","port":53},"sched":"rr"}}}"#,
    )
    .unwrap();
    match e.req {
        Request::AddService { service } => {
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
