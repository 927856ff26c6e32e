//! Connections through each forwarding method: DR's lifecycle and counters,
//! NAT both ways, UDP NAT and its timeout, TUN (fragmentation-needed, a
//! VLAN tag), a SYN reusing a closed connection, and the established
//! shortcut writing what the general path writes.

use super::*;
use crate::lb::balancer::established::{
    direct_established, direct_mask, direct_word, segment_keeps,
};
use crate::lb::conn::F_SYNPROXY;

#[test]
fn dr_connection_lifecycle_and_counters() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Dr, 1)]);
    });
    let syn = tcp(SYN, 40000);
    let (v, out) = e.send(&s, &syn, 10 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(out, with_eth(syn, mac_of(RIP), OUR_MAC));
    verify(&out);
    assert_eq!(e.states(10 * S), [("SYN_RECV", 60)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    let (v, _) = e.send(&s, &tcp(ACK, 40000), 11 * S);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(e.states(11 * S), [("ESTABLISHED", 900)]);
    assert_eq!(e.load(&s, 0, 0), (1, 0));
    e.send(&s, &tcp(FIN | ACK, 40000), 12 * S);
    assert_eq!(e.states(12 * S), [("FIN_WAIT", 120)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    let st = e.w.stats();
    let t = sum_dest(&[&st], s.services()[0].dests[0].id);
    assert_eq!((t.conns, t.pkts_in, t.bytes_in, t.pkts_out), (1, 3, 120, 0));
    assert_eq!(st.epoch_seen.load(Relaxed), 1);
}

#[test]
fn nat_full_table_both_directions() {
    let mut e = env(1024);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    let (v, out) = e.send(&s, &tcp(SYN, 40000), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let want = with_eth(
        tcp_frame(CLIENT, 40000, RIP, 8080, SYN, b"", 63, true),
        mac_of(RIP),
        OUR_MAC,
    );
    assert_eq!(out, want);
    // SYN-ACK from the real server, translated back to the VIP
    let synack = tcp_frame(RIP, 8080, CLIENT, 40000, SYN | ACK, b"", 64, true);
    let (v, out) = e.send(&s, &synack, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    let want = with_eth(
        tcp_frame(VIP, 80, CLIENT, 40000, SYN | ACK, b"", 63, true),
        GW_MAC,
        OUR_MAC,
    );
    assert_eq!(out, want);
    verify(&out);
    assert_eq!(e.states(S), [("SYN_RECV", 60)]);
    e.send(&s, &tcp(ACK, 40000), 2 * S);
    assert_eq!(e.states(2 * S), [("ESTABLISHED", 900)]);
    // server closes first: output FIN -> FIN_WAIT, then input ACK keeps it
    let fin = tcp_frame(RIP, 8080, CLIENT, 40000, FIN | ACK, b"", 64, true);
    e.send(&s, &fin, 3 * S);
    assert_eq!(e.states(3 * S), [("FIN_WAIT", 120)]);
    e.send(&s, &tcp(FIN | ACK, 40000), 4 * S);
    assert_eq!(e.states(4 * S), [("TIME_WAIT", 120)]);
    let st = e.w.stats();
    let t = sum_dest(&[&st], s.services()[0].dests[0].id);
    assert_eq!((t.pkts_in, t.pkts_out), (3, 2));
}

#[test]
fn udp_nat_and_timeout() {
    let mut e = env(64);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Udp, 53), vec![dest(RIP, 0, Method::Nat, 1)]);
    });
    let q = udp_frame(CLIENT, 5353, VIP, 53, b"q");
    let (v, out) = e.send(&s, &q, 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    verify(&out);
    assert_eq!(&out[30..34], &RIP);
    assert_eq!(e.states(0), [("UDP", 300)]);
    assert_eq!(e.load(&s, 0, 0), (0, 1));
    assert_eq!(e.w.expire(300 * S - 1, 1000), 0);
    assert_eq!(e.w.expire(300 * S, 1000), 1);
    assert_eq!(e.load(&s, 0, 0), (0, 0));
    assert_eq!(e.w.table().len(), 0);
}

#[test]
fn tun_forward_and_frag_needed_rate_limited() {
    let mut e = env(64);
    e.eg.mtu = 1500;
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
    });
    let (v, out) = e.send(&s, &tcp(SYN, 40000), 0);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    assert_eq!(out.len(), 54 + 20);
    assert_eq!(out[23], 4);
    verify(&out);
    e.send(&s, &tcp(ACK, 40000), 0);
    let big = tcp_frame(CLIENT, 40000, VIP, 80, ACK, &[7u8; 1460], 64, true);
    let (v, out) = e.send(&s, &big, S);
    assert_eq!(v, LbVerdict::Tx { port: 0 });
    assert_eq!(&out[23], &1, "ICMP");
    assert_eq!((out[34], out[35]), (3, 4));
    assert_eq!(&out[40..42], &1480u16.to_be_bytes());
    assert_eq!(&out[26..30], &VIP);
    assert_eq!(&out[30..34], &CLIENT);
    verify(&out);
    e.send(&s, &big, S);
    let (v, _) = e.send(&s, &big, S);
    assert_eq!(v, LbVerdict::Drop(LbDrop::IcmpRateLimited));
    assert_eq!(e.w.stats().icmp_frag_sent.load(Relaxed), 2);
    // still established: the packets counted as input, state unchanged
    assert_eq!(e.states(S)[0].0, "ESTABLISHED");
}

#[test]
fn syn_reuses_time_wait_connection() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(
            svc(Proto::Tcp, 80),
            vec![dest(RIP, 0, Method::Dr, 1), dest(RIP2, 0, Method::Dr, 1)],
        );
    });
    e.send(&s, &tcp(SYN, 1), 0);
    e.send(&s, &tcp(ACK, 1), 0);
    e.send(&s, &tcp(FIN | ACK, 1), 0);
    e.send(&s, &tcp(FIN | ACK, 1), 0); // FIN_WAIT stays; RST closes
    e.send(&s, &tcp(RST, 1), 0);
    assert_eq!(e.states(0)[0].0, "CLOSE");
    let before = e.w.conns(0).next().map(|c| c.rs);
    e.send(&s, &tcp(SYN, 1), S);
    let after: Vec<_> = e.w.conns(S).collect();
    assert_eq!(after.len(), 1);
    assert_eq!(after[0].state, "SYN_RECV");
    assert_ne!(Some(after[0].rs), before, "rescheduled (rr moves on)");
}

#[test]
fn vlan_tagged_tun_keeps_tag() {
    let mut e = env(16);
    let s = e.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 0, Method::Tun, 1)]);
    });
    let plain = tcp(SYN, 7);
    let mut tagged = plain[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&plain[12..]);
    let mut m = meta_of(&plain);
    m.vlan = Some(5);
    m.l3_off += 4;
    m.l4_off += 4;
    let mut b = VecBuf::new(&tagged);
    let v = e.w.process(&BurstCtx::new(&s, &e.eg, 0), &mut b, &m);
    assert_eq!(v, LbVerdict::Tx { port: 1 });
    let out = b.to_vec();
    assert_eq!(&out[12..18], &[0x81, 0x00, 0x00, 0x05, 0x08, 0x00]);
    assert_eq!(out[18], 0x45);
    assert_eq!(&out[38..], &plain[14..]);
}

/// The established shortcut (DR and TUN requests) writes what the general
/// path writes: the same frames, verdicts, states, timers and counters as a
/// balancer whose snapshot sends every packet the general way
/// (`expire_nodest_conn` on, with its real server present, changes nothing
/// else).
#[test]
fn established_shortcut_writes_what_the_general_path_writes() {
    for method in [Method::Dr, Method::Tun, Method::Nat] {
        let rport = if method == Method::Nat { 8080 } else { 0 };
        let mut short = env(64);
        let mut general = env(64);
        let s1 = short.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, rport, method, 1)]);
        });
        let s2 = general.snap(1, |b| {
            b.service(svc(Proto::Tcp, 80), vec![dest(RIP, rport, method, 1)]);
            b.expire_nodest_conn(true);
        });
        let frames = [
            (tcp(SYN, 5), 0),
            (tcp(ACK, 5), S),
            (
                tcp_frame(CLIENT, 5, VIP, 80, ACK | PSH, b"GET /", 64, true),
                2 * S,
            ),
            (tcp(ACK, 5), 3 * S),
            (tcp(SYN | ACK, 5), 4 * S),
            (tcp(ACK, 6), 5 * S),
            (tcp(FIN | ACK, 5), 6 * S),
            (tcp(ACK, 5), 7 * S),
        ];
        shortcut_agrees(
            method,
            &mut short,
            &s1,
            &mut general,
            &s2,
            &frames,
            Env::send,
        );
    }
}

/// NAT's established shortcut in both directions writes what the general
/// path writes: the real server's replies and the client's segments,
/// interleaved, through the same comparison as above, then the closing
/// segments (which take the general path) from both.
#[test]
fn nat_shortcut_in_both_directions_writes_what_the_general_path_writes() {
    let mut short = env(64);
    let mut general = env(64);
    let s1 = short.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
    });
    let s2 = general.snap(1, |b| {
        b.service(svc(Proto::Tcp, 80), vec![dest(RIP, 8080, Method::Nat, 1)]);
        b.expire_nodest_conn(true);
    });
    let reply = |flags: u8, data: &[u8]| tcp_frame(RIP, 8080, CLIENT, 5, flags, data, 64, true);
    let frames = [
        (tcp(SYN, 5), 0),
        (tcp(ACK, 5), S),
        (reply(ACK | PSH, b"first reply"), 2 * S),
        (tcp(ACK, 5), 3 * S),
        (reply(ACK, b""), 4 * S),
        (reply(ACK | PSH, b"more"), 5 * S),
        (
            tcp_frame(CLIENT, 5, VIP, 80, ACK | PSH, b"GET /", 64, true),
            6 * S,
        ),
    ];
    shortcut_agrees(
        Method::Nat,
        &mut short,
        &s1,
        &mut general,
        &s2,
        &frames,
        Env::send,
    );
    // the records' flags too (a NAT connection starts with replies
    // expected: no F_NOOUTPUT, which only a synced one may carry)
    let flags = |e: &Env| e.w.table().iter().map(|c| c.flags).collect::<Vec<_>>();
    assert_eq!(flags(&short), flags(&general));
    assert_eq!(flags(&short)[0] & F_NOOUTPUT, 0);
    for (f, now) in [
        (reply(FIN | ACK, b""), 7 * S),
        (tcp(ACK, 5), 8 * S),
        (tcp(FIN | ACK, 5), 9 * S),
    ] {
        let (a, b) = (short.send(&s1, &f, now), general.send(&s2, &f, now));
        assert_eq!(a, b);
        assert_eq!(short.states(now), general.states(now));
    }
    let t = sum_dest(&[&short.w.stats()], s1.services()[0].dests[0].id);
    assert_eq!((t.pkts_in, t.pkts_out), (6, 4));
}

/// The shortcut's one-word test of a record ([`direct_word`] under
/// [`direct_mask`] against [`direct_established`]) with the segment test
/// answers exactly what [`keeps_established`] answers, for the record's
/// method, with no SYN proxy translation: over every protocol byte of note,
/// state, flag combination, method, direction and TCP flag set.
#[test]
fn shortcut_word_is_keeps_established_of_the_method() {
    let methods = [Method::Dr, Method::Tun, Method::Nat];
    for proto in [PROTO_TCP, PROTO_UDP, 1] {
        for state in 0..=TcpState::ALL.len() as u8 {
            for flags in 0..=u8::MAX {
                for (mi, &method) in methods.iter().enumerate() {
                    let c = Conn {
                        proto,
                        state,
                        flags,
                        method,
                        ..Conn::default()
                    };
                    for reply in [false, true] {
                        // FIN, SYN, RST, PSH and ACK
                        for tcp in 0..32u8 {
                            for &want in &methods[..] {
                                let word = direct_word(&c) & direct_mask(reply)
                                    == direct_established(want)
                                    && segment_keeps(tcp);
                                let model = methods[mi] == want
                                    && flags & F_SYNPROXY == 0
                                    && keeps_established(proto, state, flags, tcp, reply);
                                assert_eq!(
                                    word, model,
                                    "proto {proto} state {state} flags {flags:#x} {method:?} as {want:?} reply {reply} tcp {tcp:#x}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
