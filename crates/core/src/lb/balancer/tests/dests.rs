//! Real servers changing under live traffic: weight 0 quiesces, thresholds
//! overload and clear, and a removed real server (`expire_nodest_conn`).

use super::*;

#[test]
fn weight_zero_quiesces() {
    let mut e = env(256);
    let a = dest(RIP, 0, Method::Dr, 1);
    let b2 = dest(RIP2, 0, Method::Dr, 1);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![a.clone(), b2.clone()]);
    });
    e.send(&s, &tcp(SYN, 1), 0);
    e.send(&s, &tcp(SYN, 2), 0);
    let mut a0 = a.clone();
    a0.weight = 0;
    let s2 = e.snap(2, |b| {
        b.service(svc(Proto::Tcp, 80), vec![a0, b2]);
    });
    assert_eq!(
        s2.services()[0].dests[0].id,
        s.services()[0].dests[0].id,
        "stable slot"
    );
    for p in 10..20 {
        let (_, out) = e.send(&s2, &tcp(SYN, p), S);
        assert_eq!(
            &out[0..6],
            &mac_of(RIP2),
            "no new connection to a weight-0 server"
        );
    }
    // the existing connection to RIP continues
    let which: Vec<_> = e.w.conns(S).filter(|c| c.client.port() == 1).collect();
    let (v, out) = e.send(&s2, &tcp(ACK, which[0].client.port()), 2 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(
        &out[0..6],
        &mac_of(u32::from(which[0].rs.ip().v4()).to_be_bytes())
    );
    assert_eq!(
        e.load(&s2, 0, 0).0 + e.load(&s2, 0, 1).0,
        1,
        "the ACKed one is active"
    );
    let total: u64 = (0..2)
        .map(|i| {
            let (x, y) = e.load(&s2, 0, i);
            x + y
        })
        .sum();
    assert_eq!(total, 12);
    // all weights 0: no destination
    let s3 = e.snap(3, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 0)]);
    });
    let (v, _) = e.send(&s3, &tcp(SYN, 99), S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::NoDest));
}

#[test]
fn thresholds_overload_and_clear() {
    let mut e = env(256);
    let mut a = dest(RIP, 0, Method::Dr, 1);
    a.upper = 2;
    a.lower = 1;
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![a]);
    });
    assert_eq!(e.send(&s, &tcp(SYN, 1), 0).0, LbVerdict::Tx { port: 1 });
    assert_eq!(e.send(&s, &tcp(SYN, 2), 0).0, LbVerdict::Tx { port: 1 });
    assert_eq!(
        e.send(&s, &tcp(SYN, 3), 0).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
    e.send(&s, &tcp(ACK, 1), 0);
    e.send(&s, &tcp(ACK, 2), 0);
    assert_eq!(e.load(&s, 0, 0), (2, 0));
    // one connection reset: total 1, not below lower (1): still overloaded
    e.send(&s, &tcp(RST, 1), S);
    e.w.expire(20 * S, 1000); // CLOSE lasts 10 s
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    assert_eq!(
        e.send(&s, &tcp(SYN, 4), 20 * S).0,
        LbVerdict::Drop(LbDrop::NoDest)
    );
    e.send(&s, &tcp(RST, 2), 21 * S);
    e.w.expire(40 * S, 1000);
    assert_eq!(
        e.send(&s, &tcp(SYN, 5), 40 * S).0,
        LbVerdict::Tx { port: 1 }
    );
}

#[test]
fn removed_real_server_and_expire_nodest_conn() {
    for expire in [false, true] {
        let mut e = env(16);
        let s = e.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
        });
        e.send(&s, &tcp(SYN, 1), 0);
        let s2 = e.snap(2, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP2, 0, Method::Dr, 1)]);
            b.expire_nodest_conn(expire);
        });
        let (v, out) = e.send(&s2, &tcp(ACK, 1), S);
        if expire {
            assert_eq!(v, LbVerdict::Drop(LbDrop::DestRemoved));
            assert_eq!(e.w.table().len(), 0);
        } else {
            assert_eq!(v, LbVerdict::Tx { port: 1 });
            assert_eq!(&out[0..6], &mac_of(RIP));
        }
        // the old slot is retired, not reusable while the connection lives
        let st = e.w.stats();
        let live = crate::lb::stats::dest_in_use(&[&st], 0);
        assert_eq!(live, !expire);
        assert_eq!(
            e.ids
                .dests
                .reclaim(2, |slot| crate::lb::stats::dest_in_use(&[&st], slot)),
            usize::from(expire)
        );
    }
}
