//! The screen: ratatui's TestBackend at 80x24 (an ssh session), tiny and
//! huge sizes, scrolling, NO_COLOR, the disconnected line, the plain text
//! of `--once`, the keys.

use super::*;
use crate::top::draw::{human, render, text, Status, View};
use crate::top::rates::Frame;
use crate::top::{action, parse_delay, Action};
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::style::Color;
use ratatui::Terminal;

fn lab_frame() -> Frame {
    let (t0, t1) = instants(1);
    Frame::between(Some(&lab(t0, 100)), &lab(t1, 250))
}

fn view(f: Option<&Frame>) -> View<'_> {
    View {
        frame: f,
        status: Status::Connected,
        delay: Duration::from_secs(1),
        clock: "12:34:56 UTC".into(),
        scroll: 0,
        color: true,
        keys: true,
    }
}

/// Draw `v` on a `w`x`h` TestBackend; the buffer and the largest scroll.
fn draw(v: &View, w: u16, h: u16) -> (Buffer, usize) {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    let mut max = 0;
    t.draw(|f| max = render(v, f.area(), f.buffer_mut()))
        .unwrap();
    (t.backend().buffer().clone(), max)
}

/// The buffer's rows as text (trailing blanks removed).
fn rows(b: &Buffer) -> Vec<String> {
    let a = b.area;
    (0..a.height)
        .map(|y| {
            let s: String = (0..a.width).map(|x| b[(x, y)].symbol()).collect();
            s.trim_end().to_string()
        })
        .collect()
}

fn find<'a>(rows: &'a [String], needle: &str) -> &'a str {
    rows.iter()
        .find(|r| r.contains(needle))
        .unwrap_or_else(|| panic!("no line with {needle:?} in\n{}", rows.join("\n")))
}

#[test]
fn the_lab_at_80x24() {
    let f = lab_frame();
    let (b, max) = draw(&view(Some(&f)), 80, 24);
    let r = rows(&b);
    eprintln!("{}", r.join("\n"));
    assert_eq!(max, 0, "everything fits: no scrolling");
    assert!(r[0].starts_with("dirigoctl top  12:34:56 UTC  every 1s  2 services  1 workers"));
    // totals: 6 conns/real server unit, 150 units in 1 s per service
    assert_eq!(
        r[1],
        "act 12 inact 6  in 18Kpps 1.8MB/s  out 9.0Kpps 900KB/s  1.8K conn/s  150 drop/s"
    );
    // the service line: name, scheduler, active, inactive, then rates
    // (150 * 6 = 900 conns/s, 9000 pkts/s, 900 KB/s in)
    let tcp = find(&r, "TCP  10.99.0.100:80 rr");
    let cols: Vec<&str> = tcp.split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "TCP",
            "10.99.0.100:80",
            "rr",
            "6",
            "3",
            "900",
            "9.0K",
            "4.5K",
            "900K",
            "450K"
        ]
    );
    // its real servers, with method and weight
    let rs3 = find(&r, "  -> 10.98.0.13:80");
    let cols: Vec<&str> = rs3.split_whitespace().collect();
    assert_eq!(
        cols,
        [
            "->",
            "10.98.0.13:80",
            "Route",
            "1",
            "3",
            "1",
            "450",
            "4.5K",
            "2.2K",
            "450K",
            "225K"
        ]
    );
    assert!(find(&r, "UDP  10.99.0.100:5353 rr").contains("900"));
    // the worker: conns, size, fill, rx, tx, drops, new conns, busy
    let w = find(&r, "lcore 1");
    let cols: Vec<&str> = w.split_whitespace().collect();
    assert_eq!(
        cols,
        ["lcore", "1", "12", "65536", "0.0%", "15K", "7.5K", "150", "1.5K", "15%"]
    );
    let d = find(&r, "no_service");
    assert_eq!(
        d.split_whitespace().collect::<Vec<_>>(),
        ["no_service", "250", "150"]
    );
    assert!(
        !r.iter().any(|l| l.contains("bad_checksum")),
        "a zero drop is shown"
    );
    // the titles
    find(&r, "Prot LocalAddress:Port Sched");
    find(&r, "Worker lcore");
    find(&r, "Drop reason");
}

#[test]
fn tiny_and_huge_terminals_do_not_panic() {
    let f = lab_frame();
    for (w, h) in [
        (20, 5),
        (300, 100),
        (1, 1),
        (0, 0),
        (80, 1),
        (80, 3),
        (5, 24),
    ] {
        let (b, _) = draw(&view(Some(&f)), w, h);
        assert_eq!((b.area.width, b.area.height), (w, h));
    }
    // 20x5: the title and the first lines, cut
    let (b, _) = draw(&view(Some(&f)), 20, 5);
    let r = rows(&b);
    assert_eq!(r[0], "dirigoctl top  12:34");
    assert!(r.iter().all(|l| l.chars().count() <= 20));
    // 300x100: everything, with the method and weight in columns
    let (b, _) = draw(&view(Some(&f)), 300, 100);
    let r = rows(&b);
    let rs1 = find(&r, "  -> 10.98.0.11:80");
    assert!(rs1.contains("Route"), "{rs1}");
    find(&r, "Fwd");
    find(&r, "no_service");
    // before the first sample
    let (b, _) = draw(&view(None), 80, 24);
    assert_eq!(rows(&b)[1], "connecting...");
}

#[test]
fn many_services_scroll_and_keep_workers_and_drops_visible() {
    let (t0, t1) = instants(1);
    let many = |at, n| {
        let mut s = lab(at, n);
        s.list.services = (0..40u8)
            .map(|i| {
                service(
                    key(Proto::Tcp, [10, 99, 1, i], 80),
                    SchedKind::Wlc,
                    vec![dest([10, 98, 1, i], 80, n, 1, 0)],
                )
            })
            .collect();
        s
    };
    let f = Frame::between(Some(&many(t0, 1)), &many(t1, 2));
    let mut v = view(Some(&f));
    let (b, max) = draw(&v, 80, 24);
    let r = rows(&b);
    // 80 service lines, 24 rows: 2 title, 2 worker, 2 drop lines, the
    // services' title: 17 service lines shown
    assert_eq!(max, 80 - 17, "{}", r.join("\n"));
    find(&r, "[1-17/80]");
    find(&r, "TCP  10.99.1.0:80 wlc");
    find(&r, "lcore 1");
    find(&r, "no_service");
    // scrolled to the end: the last service's real server is the last line
    v.scroll = usize::MAX;
    let (b, _) = draw(&v, 80, 24);
    let r = rows(&b);
    find(&r, "[64-80/80]");
    find(&r, "  -> 10.98.1.39:80");
    assert!(!r.iter().any(|l| l.contains("10.99.1.0:80")));
    find(&r, "lcore 1");
}

#[test]
fn no_color_means_no_colour() {
    let f = lab_frame();
    let mut v = view(Some(&f));
    v.status = Status::Disconnected("connection refused".into());
    let coloured = |b: &Buffer| {
        b.content()
            .iter()
            .any(|c| c.fg != Color::Reset || c.bg != Color::Reset)
    };
    let (b, _) = draw(&v, 80, 24);
    assert!(coloured(&b), "colours when allowed");
    v.color = false;
    let (b, _) = draw(&v, 80, 24);
    assert!(!coloured(&b), "NO_COLOR: a coloured cell");
    // still readable: the disconnected line is reversed
    let r = rows(&b);
    assert_eq!(r[1], "disconnected, retrying: connection refused");
    assert!(b[(0, 1)]
        .modifier
        .contains(ratatui::style::Modifier::REVERSED));
}

#[test]
fn once_prints_plain_text() {
    let f = lab_frame();
    let mut v = view(Some(&f));
    v.color = false;
    let t = text(&v, 80);
    let lines: Vec<&str> = t.lines().collect();
    // title, status, services' title + 2 services + 6 real servers,
    // workers' title + 1, drops' title + 1
    assert_eq!(lines.len(), 2 + 9 + 2 + 2, "{t}");
    assert!(lines.iter().all(|l| l.len() <= 80 && !l.ends_with(' ')));
    assert!(t.contains("TCP  10.99.0.100:80 rr"));
    assert!(!t.contains('\u{1b}'), "no escape sequences");
    // without drops
    let mut f2 = f.clone();
    f2.drops.clear();
    assert!(text(&view(Some(&f2)), 80).contains("(no drops)"));
}

#[test]
fn numbers_fit_five_characters() {
    let cases = [
        (0.0, "0"),
        (0.5, "0.5"),
        (7.0, "7"),
        (950.0, "950"),
        (999.4, "999"),
        (1000.0, "1.0K"),
        (9_949.0, "9.9K"),
        (9_960.0, "10K"),
        (450_000.0, "450K"),
        (999_999.0, "1000K"),
        (2_500_000.0, "2.5M"),
        (3.2e9, "3.2G"),
        (4.0e12, "4.0T"),
        (f64::NAN, "?"),
        (-1.0, "?"),
    ];
    for (v, want) in cases {
        assert_eq!(human(v), want, "{v}");
        assert!(human(v).len() <= 5);
    }
}

#[test]
fn keys() {
    let k = |c, m| action(&KeyEvent::new(c, m));
    assert_eq!(k(KeyCode::Char('q'), KeyModifiers::NONE), Action::Quit);
    assert_eq!(k(KeyCode::Esc, KeyModifiers::NONE), Action::Quit);
    assert_eq!(k(KeyCode::Char('c'), KeyModifiers::CONTROL), Action::Quit);
    assert_eq!(k(KeyCode::Char('c'), KeyModifiers::NONE), Action::None);
    assert_eq!(k(KeyCode::Char(' '), KeyModifiers::NONE), Action::Refresh);
    assert_eq!(k(KeyCode::Down, KeyModifiers::NONE), Action::Scroll(1));
    assert_eq!(k(KeyCode::PageUp, KeyModifiers::NONE), Action::Scroll(-10));
    assert_eq!(k(KeyCode::End, KeyModifiers::NONE), Action::Jump(true));
}

#[test]
fn delays() {
    assert_eq!(parse_delay("1"), Ok(Duration::from_secs(1)));
    assert_eq!(parse_delay("0.5"), Ok(Duration::from_millis(500)));
    for bad in ["0", "0.01", "-1", "abc", "", "nan", "inf", "3601"] {
        let e = parse_delay(bad).unwrap_err();
        assert!(e.contains("bad delay"), "{bad}: {e}");
    }
}
