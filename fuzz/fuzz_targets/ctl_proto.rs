//! Fuzz the control protocol's decoders: a request line as the server
//! parses it (`parse_request_line`) and a response line as the client
//! does. Neither may panic; a request that parses must come back the same
//! after being written out again (what `dirigoadm` sends is what the
//! server reads), and a refused line must say why.
#![no_main]

use dirigo_proto::proto::{parse_request_line, ResponseEnvelope, PROTO_VERSION};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match parse_request_line(data) {
        Ok(env) => {
            assert_eq!(env.v, PROTO_VERSION);
            let line = serde_json::to_vec(&env).expect("a parsed request serializes");
            let again = parse_request_line(&line)
                .unwrap_or_else(|(_, e)| panic!("re-encoded request refused: {e:?}"));
            assert_eq!(again, env, "request changed by a round trip");
            let _ = env.req.op_name();
        }
        Err((_, e)) => assert!(!e.msg.is_empty(), "an error without a message"),
    }
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(r) = serde_json::from_str::<ResponseEnvelope>(s) {
            let _ = r.into_result();
        }
    }
});
