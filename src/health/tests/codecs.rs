//! The DNS, SMTP and file codecs on literal bytes and on garbage.

use super::super::{dns, file, smtp};
use proptest::prelude::*;

/// A reply to query 0x1234 for up.test A: one answer by a compression
/// pointer to the question's name, 192.0.2.7.
const A_REPLY: &[u8] = &[
    0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, // header: QR RD RA, NOERROR
    2, b'u', b'p', 4, b't', b'e', b's', b't', 0, 0, 1, 0, 1, // question
    0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 7, // answer
];

#[test]
fn the_query_is_what_a_resolver_sends() {
    assert_eq!(
        dns::query(0x1234, "up.test", 1),
        [
            0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 2, b'u', b'p', 4, b't', b'e', b's', b't', 0,
            0, 1, 0, 1
        ]
    );
    // the root, SOA
    assert_eq!(
        dns::query(1, "", 6),
        [0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 1]
    );
}

#[test]
fn a_reply_is_read_with_its_answers() {
    assert_eq!(
        dns::reply(A_REPLY, 0x1234, 1),
        dns::Reply::Answer {
            rcode: 0,
            answers: Ok(vec!["192.0.2.7".into()])
        }
    );
    assert_eq!(
        dns::judge(A_REPLY, 0x1234, 1, Some("192.0.2.7")),
        Some(Ok("NOERROR, answer 192.0.2.7".into()))
    );
    assert_eq!(
        dns::judge(A_REPLY, 0x1234, 1, Some("192.0.2.8")),
        Some(Err("answer 192.0.2.7 (want 192.0.2.8)".into()))
    );
    // an answer of another type is not one of the asked type's
    assert_eq!(
        dns::judge(A_REPLY, 0x1234, 28, Some("::1")),
        Some(Err("NOERROR without an answer (want ::1)".into()))
    );
    assert_eq!(
        dns::judge(A_REPLY, 0x1234, 1, None),
        Some(Ok("NOERROR, 1 answer(s)".into()))
    );
}

#[test]
fn other_ids_queries_and_runts_are_ignored_and_errors_fail() {
    assert_eq!(dns::judge(A_REPLY, 0x1235, 1, None), None);
    assert_eq!(dns::judge(&A_REPLY[..11], 0x1234, 1, None), None);
    let mut query = A_REPLY.to_vec();
    query[2] &= 0x7f;
    assert_eq!(dns::judge(&query, 0x1234, 1, None), None);
    let mut nx = A_REPLY.to_vec();
    nx[3] = 0x83;
    assert_eq!(
        dns::judge(&nx, 0x1234, 1, None),
        Some(Err("NXDOMAIN".into()))
    );
    // a header alone with a NOERROR is up without an expected answer
    assert_eq!(
        dns::judge(&A_REPLY[..12], 0x1234, 1, None),
        Some(Ok("NOERROR".into()))
    );
    // but its answers cannot be read when one is expected
    assert!(matches!(
        dns::judge(&A_REPLY[..30], 0x1234, 1, Some("192.0.2.7")),
        Some(Err(e)) if e.contains("cannot be read")
    ));
}

#[test]
fn names_txt_and_mx_answers_and_compression_loops() {
    // MX 10 mail.test (the exchange's "test" a pointer to the question's)
    let mut mx = vec![0, 9, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0];
    mx.extend_from_slice(&[2, b'm', b'x', 4, b't', b'e', b's', b't', 0, 0, 15, 0, 1]);
    mx.extend_from_slice(&[0xc0, 12, 0, 15, 0, 1, 0, 0, 0, 60, 0, 9, 0, 10]);
    mx.extend_from_slice(&[4, b'M', b'a', b'i', b'l', 0xc0, 15]);
    assert_eq!(
        dns::judge(&mx, 9, 15, Some("mail.test.")),
        Some(Ok("NOERROR, answer mail.test.".into()))
    );
    // TXT "hel" "lo"
    let mut txt = vec![0, 9, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0];
    txt.extend_from_slice(&[1, b't', 0, 0, 16, 0, 1]);
    txt.extend_from_slice(&[0xc0, 12, 0, 16, 0, 1, 0, 0, 0, 60, 0, 7]);
    txt.extend_from_slice(&[3, b'h', b'e', b'l', 2, b'l', b'o']);
    assert_eq!(
        dns::reply(&txt, 9, 16),
        dns::Reply::Answer {
            rcode: 0,
            answers: Ok(vec!["hello".into()])
        }
    );
    // a pointer to itself
    let mut looped = vec![0, 9, 0x81, 0x80, 0, 1, 0, 0, 0, 0, 0, 0];
    looped.extend_from_slice(&[0xc0, 12, 0, 1, 0, 1]);
    assert_eq!(
        dns::reply(&looped, 9, 1),
        dns::Reply::Answer {
            rcode: 0,
            answers: Err("a compression loop".into())
        }
    );
}

proptest! {
    #[test]
    fn garbage_never_panics_the_dns_reader(
        bytes in proptest::collection::vec(any::<u8>(), 0..600),
        qtype in prop_oneof![Just(1u16), Just(2), Just(5), Just(6), Just(15), Just(16), Just(28)],
    ) {
        let id = bytes.get(..2).map_or(0, |b| u16::from_be_bytes([b[0], b[1]]));
        let _ = dns::judge(&bytes, id, qtype, Some("192.0.2.1"));
        let _ = dns::judge(&bytes, id, qtype, None);
    }

    #[test]
    fn a_mangled_reply_never_panics_the_dns_reader(
        at in 0usize..A_REPLY.len(),
        byte in any::<u8>(),
        cut in 0usize..=A_REPLY.len(),
    ) {
        let mut b = A_REPLY.to_vec();
        b[at] = byte;
        b.truncate(cut.max(2));
        let _ = dns::judge(&b, u16::from_be_bytes([b[0], b[1]]), 1, Some("192.0.2.7"));
    }

    #[test]
    fn garbage_never_panics_the_smtp_reader(
        bytes in proptest::collection::vec(any::<u8>(), 0..5000),
    ) {
        if let Some(Ok((code, _, used))) = smtp::reply(&bytes) {
            prop_assert!(code < 1000 && used <= bytes.len());
        }
    }

    #[test]
    fn any_text_is_judged_by_the_file_check(
        text in ".{0,40}",
        factor in -(i32::MAX as i64)..=(i32::MAX as i64),
        reverse in any::<bool>(),
    ) {
        let _ = file::judge(&text, factor, reverse);
    }
}

#[test]
fn smtp_replies_single_and_multi_line() {
    assert_eq!(
        smtp::reply(b"220 mx.test ESMTP\r\n"),
        Some(Ok((220, "mx.test ESMTP".into(), 19)))
    );
    assert_eq!(smtp::reply(b"220 mx.test ESM"), None);
    let multi = b"250-mx.test hello\r\n250-SIZE 100\r\n250 HELP\r\nnext";
    assert_eq!(
        smtp::reply(multi),
        Some(Ok((250, "mx.test hello".into(), multi.len() - 4)))
    );
    assert_eq!(smtp::reply(b"250\n"), Some(Ok((250, String::new(), 4))));
    assert!(matches!(smtp::reply(b"HTTP/1.1 400 Bad\r\n"), Some(Err(_))));
    assert!(matches!(smtp::reply(b"250-a\r\n220 b\r\n"), Some(Err(_))));
    assert!(matches!(smtp::reply(b"250xa\r\n"), Some(Err(_))));
    let long = vec![b'2'; smtp::REPLY_MAX];
    assert!(matches!(smtp::reply(&long), Some(Err(e)) if e.contains("longer")));
}

#[test]
fn the_file_check_follows_keepalived_weights() {
    // factor 0: 0 up, anything else down; reverse turns it round
    assert_eq!(file::judge("0\n", 0, false), Ok(("value 0".into(), None)));
    assert_eq!(file::judge(" 3 ", 0, false), Err("value 3".into()));
    assert_eq!(file::judge("0", 0, true), Err("value 0".into()));
    assert_eq!(file::judge("7", 0, true), Ok(("value 7".into(), None)));
    // a factor: the change to the weight, negated by reverse
    assert_eq!(
        file::judge("5", 2, false),
        Ok(("value 5: weight +10".into(), Some(10)))
    );
    assert_eq!(
        file::judge("5", 2, true),
        Ok(("value 5: weight -10".into(), Some(-10)))
    );
    assert_eq!(
        file::judge("-3", 1, false),
        Ok(("value -3: weight -3".into(), Some(-3)))
    );
    // keepalived's fault: a change at or below -2^31
    assert!(file::judge("-2147483648", 1, false).is_err());
    assert!(file::judge("1073741824", -2, false).is_err());
    // not an integer
    assert_eq!(file::judge("", 1, false), Err("empty file".into()));
    assert!(file::judge("up", 1, false).is_err());
    assert!(file::judge("4294967296", 1, false).is_err());
}
