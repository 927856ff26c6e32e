use super::*;

fn parse(d: &Dict) -> serde_json::Value {
    let s = d.to_json();
    assert_eq!(s.len(), d.json_len(), "json_len is exact: {s}");
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

#[test]
fn names_are_made_valid_for_the_library() {
    assert_eq!(clean_name("10.0.0.1:80"), "10_0_0_1_80");
    assert_eq!(clean_name("TCP/10_0_0_1/80"), "TCP/10_0_0_1/80");
    assert_eq!(clean_name(""), "_");
    assert_eq!(clean_name("wän-port"), "w_n_port");
    let long = "x".repeat(300);
    assert_eq!(clean_name(&long).len(), MAX_STRING_LEN);
}

#[test]
fn strings_are_printable_ascii_and_cut_visibly() {
    assert_eq!(clean_str("TCP 10.0.0.1:80"), "TCP 10.0.0.1:80");
    assert_eq!(clean_str("a\nb\u{e9}\"c"), "a?b?\"c");
    let long = "y".repeat(200);
    let c = clean_str(&long);
    assert_eq!(c.len(), MAX_STRING_LEN);
    assert!(c.ends_with("..."), "{c}");
    // exactly at the limit: kept whole
    let edge = "z".repeat(MAX_STRING_LEN);
    assert_eq!(clean_str(&edge), edge);
}

#[test]
fn a_dict_holds_at_most_256_entries() {
    let mut d = Dict::new();
    for i in 0..MAX_DICT_ENTRIES {
        d.insert(&format!("k{i}"), i as u64).unwrap();
    }
    assert!(d.is_full());
    assert_eq!(d.insert("one_more", 1u64), Err(Full));
    assert_eq!(d.len(), MAX_DICT_ENTRIES);
    let v = parse(&d);
    assert_eq!(v.as_object().unwrap().len(), MAX_DICT_ENTRIES);
    assert_eq!(v["k255"], 255);
}

#[test]
fn names_stay_unique_after_cleaning_and_cutting() {
    let mut d = Dict::new();
    d.insert("10.0.0.1:80", 1u64).unwrap();
    d.insert("10_0_0_1_80", 2u64).unwrap();
    d.insert("10-0-0-1-80", 3u64).unwrap();
    let long_a = format!("{}a", "n".repeat(200));
    let long_b = format!("{}b", "n".repeat(200));
    d.insert(&long_a, 4u64).unwrap();
    d.insert(&long_b, 5u64).unwrap();
    let keys: Vec<&str> = d.entries().map(|(k, _)| k).collect();
    assert_eq!(
        &keys[..3],
        ["10_0_0_1_80", "10_0_0_1_80_2", "10_0_0_1_80_3"]
    );
    assert_eq!(keys[3].len(), MAX_STRING_LEN);
    assert_eq!(keys[4].len(), MAX_STRING_LEN);
    assert!(keys[4].ends_with("_2"), "{}", keys[4]);
    let v = parse(&d);
    assert_eq!(v.as_object().unwrap().len(), 5, "no key lost: {v}");
}

#[test]
fn json_length_is_exact_for_every_kind() {
    let mut inner = Dict::new();
    inner.insert("q", "say \"hi\" \\ there").unwrap();
    inner.insert("neg", Value::int(-42)).unwrap();
    inner.insert("zero", 0u64).unwrap();
    inner.insert("max", u64::MAX).unwrap();
    inner.insert("empty", Dict::new()).unwrap();
    let mut d = Dict::new();
    d.insert("inner", inner).unwrap();
    d.insert("strs", Value::strs(["a", "b\"", ""])).unwrap();
    d.insert("nums", Value::u64s([1, 22, 333])).unwrap();
    d.insert("none", Value::strs(Vec::<String>::new())).unwrap();
    d.insert("nonums", Value::u64s([])).unwrap();
    d.insert("min", Value::int(i32::MIN)).unwrap();
    let v = parse(&d);
    assert_eq!(v["inner"]["q"], "say \"hi\" \\ there");
    assert_eq!(v["inner"]["neg"], -42);
    assert_eq!(v["inner"]["max"], u64::MAX);
    assert_eq!(v["strs"][1], "b\"");
    assert_eq!(v["nums"][2], 333);
    assert_eq!(v["min"], i32::MIN);
    assert_eq!(Dict::new().json_len(), 2);
    assert_eq!(Dict::default().to_json(), "{}");
}

#[test]
fn len_with_predicts_the_length_after_insert() {
    let mut d = Dict::new();
    for i in 0..20u64 {
        let v = Value::str(&"s".repeat(i as usize * 7));
        let name = if i % 3 == 0 { "dup" } else { "k" };
        let want = d.len_with(name, &v);
        d.insert(name, v).unwrap();
        assert_eq!(d.json_len(), want);
        assert_eq!(d.to_json().len(), want);
    }
}

#[test]
fn arrays_are_cut_at_the_library_limit() {
    let many: Vec<String> = (0..600).map(|i| format!("s{i}")).collect();
    let mut d = Dict::new();
    d.insert("s", Value::strs(&many)).unwrap();
    d.insert("n", Value::u64s(0..600)).unwrap();
    let v = parse(&d);
    assert_eq!(v["s"].as_array().unwrap().len(), MAX_ARRAY_ENTRIES);
    assert_eq!(v["n"].as_array().unwrap().len(), MAX_ARRAY_ENTRIES);
}

#[test]
fn the_budget_leaves_room_for_the_command_name() {
    let b = output_budget("/dirigo/services");
    assert!(b + "{\"/dirigo/services\":}".len() < MAX_OUTPUT_LEN);
    assert!(b > MAX_OUTPUT_LEN - 100);
}

#[test]
fn command_names_follow_the_library_rules() {
    assert!(valid_command("/dirigo/services"));
    assert!(!valid_command("dirigo/services"));
    assert!(!valid_command("/dirigo/serv-ices"));
    assert!(!valid_command(&format!("/{}", "a".repeat(MAX_CMD_LEN))));
}

fn reg() -> Vec<Command> {
    vec![
        Command {
            name: "/t/ok",
            help: "ok",
            handler: Box::new(|p| {
                let mut d = Dict::new();
                d.insert("param", p.unwrap_or("none")).unwrap();
                Ok(d)
            }),
        },
        Command {
            name: "/t/err",
            help: "err",
            handler: Box::new(|_| Err("not now".into())),
        },
        Command {
            name: "/t/panic",
            help: "panic",
            handler: Box::new(|_| panic!("handler bug")),
        },
    ]
}

#[test]
fn answers_errors_and_panics_as_an_error_entry() {
    let r = reg();
    assert_eq!(
        answer(&r, "/t/ok", Some(" 40 ")).to_json(),
        r#"{"param":"40"}"#
    );
    assert_eq!(
        answer(&r, "/t/ok", Some("  ")).to_json(),
        r#"{"param":"none"}"#
    );
    assert_eq!(
        answer(&r, "/t/err", None).to_json(),
        r#"{"error":"not now"}"#
    );
    let p = parse(&answer(&r, "/t/panic", None));
    assert!(p["error"].as_str().unwrap().contains("failed"), "{p}");
    let u = parse(&answer(&r, "/t/none", None));
    assert!(
        u["error"].as_str().unwrap().contains("unknown command"),
        "{u}"
    );
}

/// The library itself (no EAL needed): it takes everything a full Dict
/// holds, and refuses the names the Dict cleans.
#[test]
fn the_library_takes_what_a_dict_holds() {
    let mut d = Dict::new();
    let mut nested = Dict::new();
    nested.insert("list", Value::strs(["x"; 600])).unwrap();
    nested.insert("deep", Dict::new()).unwrap();
    d.insert("nested", nested).unwrap();
    d.insert("nums", Value::u64s(0..600)).unwrap();
    d.insert("long", "v".repeat(500)).unwrap();
    d.insert("neg", Value::int(-1)).unwrap();
    for i in 0..300 {
        let _ = d.insert(&format!("10.0.0.{i}:80"), i as u64);
    }
    // SAFETY: plain allocation in the library; no EAL needed.
    let raw = unsafe { dpdk_sys::rte_tel_data_alloc() };
    assert!(!raw.is_null());
    assert_eq!(fill_dict(raw, &d), 0, "the library refused an entry");
    // what cleaning protects from: the library refuses a raw address name
    let bad = CString::new("10.0.0.1:80").unwrap();
    // SAFETY: raw is a dict (filled above); the name is a valid C string.
    let rc = unsafe { dpdk_sys::rte_tel_data_add_dict_u64(raw, bad.as_ptr(), 1) };
    assert!(rc < 0, "a full dict or a bad name is refused: {rc}");
    let mut small = Dict::new();
    small.insert("a", 1u64).unwrap();
    // SAFETY: as above.
    let fresh = unsafe { dpdk_sys::rte_tel_data_alloc() };
    assert_eq!(fill_dict(fresh, &small), 0);
    // SAFETY: fresh is a started dict with one entry; the name is bad.
    let rc = unsafe { dpdk_sys::rte_tel_data_add_dict_u64(fresh, bad.as_ptr(), 1) };
    assert_eq!(
        rc,
        -libc::EINVAL,
        "the library refuses '.' and ':' in names"
    );
    // SAFETY: both were allocated above; their nested containers stay
    // allocated (the library frees them only when it writes an answer).
    unsafe {
        dpdk_sys::rte_tel_data_free(raw);
        dpdk_sys::rte_tel_data_free(fresh);
    }
}
