#!/usr/bin/env bash
# TEST ONLY: a stand-in for dirigo so the lab can be proved without it.
# Sourced by lab.sh (`lab.sh standin`) and selftest.sh; needs lab.sh loaded.
#
# Creates, in THIS namespace, two veth ends named like dirigo's taps
# ($LAB_WAN_IF / $LAB_LAN_IF, default P-wan / P-lan) whose peers (wan0, lan0)
# live in a "director" namespace P-dir holding dirigo's addresses
# (<client net>.1 on wan0, <server net>.1 on lan0). Then `lab_attach` moves
# P-wan/P-lan into the lab exactly as it would move dirigo's taps.
#
# The director, per the lab mode (state dir):
#   dr : kernel forwarding, route VIP/32 via RS1 on lan0 (= a DR MAC rewrite
#        to RS1), proxy ARP for the VIP on wan0
#   tun: route VIP/32 into TUN enc0; ipip_encap.py sends each packet IPIP
#        to an RS picked by flow hash; proxy ARP for the VIP on wan0
#   nat: plain routing only (no NAT in this kernel/userland): the client gets
#        a route to the server net via the director so tests can reach RIPs
#        directly and prove RS replies come back through the director.

lab_standin() {
    lab_config
    [[ -f $LAB_STATE_DIR/mode ]] || lab__die "lab '$LAB_PREFIX' is not up"
    local mode dir=$LAB_NS_DIR i rips=()
    mode=$(<"$LAB_STATE_DIR/mode")
    lab__add_ns "$dir"
    lab__x ip link add "$LAB_WAN_IF" type veth peer name wan0 netns "$dir"
    lab__x ip link add "$LAB_LAN_IF" type veth peer name lan0 netns "$dir"
    lab__x ip -n "$dir" addr add "$LAB_DIRIGO_WAN_IP/24" dev wan0
    lab__x ip -n "$dir" addr add "$LAB_DIRIGO_LAN_IP/24" dev lan0
    lab__x ip -n "$dir" link set wan0 up
    lab__x ip -n "$dir" link set lan0 up
    lab__sysctl "$dir" net.ipv4.ip_forward 1
    lab__sysctl "$dir" net.ipv4.conf.wan0.proxy_arp 1
    lab__sysctl "$dir" net.ipv4.neigh.wan0.proxy_delay 0
    lab__sysctl "$dir" net.ipv4.conf.all.send_redirects 0
    case $mode in
    dr)
        lab__x ip -n "$dir" route add "$LAB_VIP/32" via "${LAB_RS_IPS[0]}" dev lan0
        ;;
    tun)
        for ((i = 0; i < LAB_NRS; i++)); do rips+=(--rip "${LAB_RS_IPS[i]}"); done
        lab__spawn "$dir" standin-encap ipip_encap.py --tun enc0 "${rips[@]}"
        lab__x ip -n "$dir" route add "$LAB_VIP/32" dev enc0
        ;;
    nat) ;; # client route added after attach (lab_standin_post_attach)
    *) lab__die "stand-in supports dr, tun, nat (lab mode is $mode)" ;;
    esac
    echo "$mode" >"$LAB_STATE_DIR/standin"
    lab__log "stand-in director up in $dir (mode $mode); now: lab_attach $LAB_WAN_IF $LAB_LAN_IF"
}

# The nat stand-in route lives in the client namespace, which exists only after
# attach moved the WAN end in; lab_standin_post_attach adds it then.
lab_standin_post_attach() {
    lab_config
    [[ $(<"$LAB_STATE_DIR/standin") == nat ]] || return 0
    lab__x ip -n "$LAB_NS_CLIENT" route add "$LAB_SERVER_PLEN" via "$LAB_DIRIGO_WAN_IP"
}
