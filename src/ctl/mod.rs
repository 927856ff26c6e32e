//! Control plane: protocol, socket server, ipvsadm-compatible client logic.
