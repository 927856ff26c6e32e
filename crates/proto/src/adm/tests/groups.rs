//! Service groups in dirigoadm's output: `-L` shows each member as a
//! service line with the group's real servers (as ipvsadm shows the
//! services keepalived makes of a `virtual_server_group`), `-L -t
//! MEMBER` that one line, `-S` the `#member` comments.

use super::{dest, svc, tkey};
use crate::adm::*;
use crate::view::{DestInfo, ServiceInfo, ServiceList};
use dirigo_core::lb::sched::SchedKind;
use dirigo_core::lb::spec::{Method, ServiceKey};

fn group() -> ServiceList {
    let mut s = svc(tkey([10, 0, 0, 100], 80), SchedKind::Rr, None);
    s.members = vec![
        tkey([10, 0, 0, 102], 80),
        tkey([10, 0, 0, 101], 80),
        ServiceKey::fwmark(3, false),
    ];
    let d = |a| DestInfo {
        spec: dest(a, 80, Method::Nat, 1),
        active: 1,
        inactive: 0,
        persist: 0,
        stats: Default::default(),
        rate: Default::default(),
    };
    ServiceList {
        conn_tab_size: 4096,
        services: vec![ServiceInfo {
            spec: s,
            stats: Default::default(),
            rate: Default::default(),
            dests: vec![d([172, 16, 0, 11]), d([172, 16, 0, 12])],
        }],
    }
}

#[test]
fn members_list_as_services_with_the_groups_servers() {
    let o = ListCmd {
        numeric: true,
        ..Default::default()
    };
    let servers = concat!(
        "  -> 172.16.0.11:80               Masq    1      1          0         \n",
        "  -> 172.16.0.12:80               Masq    1      1          0         \n",
    );
    let want = format!(
        "IP Virtual Server version 1.2.1 (size=4096)\n\
         Prot LocalAddress:Port Scheduler Flags\n  \
         -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n\
         TCP  10.0.0.100:80 rr\n{servers}\
         TCP  10.0.0.101:80 rr\n{servers}\
         TCP  10.0.0.102:80 rr\n{servers}\
         FWM  3 rr\n{servers}"
    );
    assert_eq!(format::list(&group(), &o), want);
    // one member: its line alone (the daemon answers with the group)
    let one = ListCmd {
        service: Some(tkey([10, 0, 0, 101], 80)),
        ..o
    };
    assert_eq!(
        format::list(&group(), &one),
        format!(
            "Prot LocalAddress:Port Scheduler Flags\n  \
             -> RemoteAddress:Port           Forward Weight ActiveConn InActConn\n\
             TCP  10.0.0.101:80 rr\n{servers}"
        )
    );
}

#[test]
fn save_writes_members_as_comments_after_the_service() {
    let text = format::save(&group());
    assert_eq!(
        text,
        "-A -t 10.0.0.100:80 -s rr\n\
         -a -t 10.0.0.100:80 -r 172.16.0.11:80 -m -w 1\n\
         -a -t 10.0.0.100:80 -r 172.16.0.12:80 -m -w 1\n\
         #member -t 10.0.0.100:80 10.0.0.102:80\n\
         #member -t 10.0.0.100:80 10.0.0.101:80\n\
         #member -t 10.0.0.100:80 fwmark 3\n"
    );
    // -R takes the rules, the comments are no commands
    assert_eq!(parse_restore(&text).unwrap().len(), 3);
}
