//! Drawing a [`Frame`]: the screen as styled lines of fixed columns,
//! fitted to any width (columns on the right are left out when the first
//! one would get too narrow, long names are cut) and any height (the
//! services get what the workers and drops leave, and scroll). The same
//! lines make the terminal view ([`render`]) and the plain text of
//! `--once` ([`text`]).

use super::rates::{service_name, Frame, Rates};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use std::time::Duration;

/// The connection's state, shown on the second line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Status {
    /// No answer yet.
    Connecting,
    /// The last poll worked.
    Connected,
    /// The last poll failed: why (the poller keeps trying).
    Disconnected(String),
}

/// What one screen shows.
#[derive(Clone, Debug)]
pub struct View<'a> {
    /// The numbers (`None` before the first sample).
    pub frame: Option<&'a Frame>,
    /// The connection's state.
    pub status: Status,
    /// Refresh interval.
    pub delay: Duration,
    /// Wall-clock time shown in the title (`12:34:56 UTC`).
    pub clock: String,
    /// The first service line shown (scrolling).
    pub scroll: usize,
    /// Colours allowed (`NO_COLOR` unset); without, only bold and reverse.
    pub color: bool,
    /// Show the keys in the title (the live view).
    pub keys: bool,
}

/// A number in at most 5 characters: `950`, `9.5K`, `950K`, `9.5M`, ...
pub fn human(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        return "?".into();
    }
    for (d, u) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "K")] {
        if v >= d {
            let x = v / d;
            return if x < 9.95 {
                format!("{x:.1}{u}")
            } else {
                format!("{x:.0}{u}")
            };
        }
    }
    if v > 0.0 && v < 9.95 && v.fract() != 0.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

fn opt(v: Option<f64>) -> String {
    v.map(human).unwrap_or_else(|| "-".into())
}

fn pct(v: Option<f64>) -> String {
    v.map(|x| format!("{:.0}%", x * 100.0))
        .unwrap_or_else(|| "-".into())
}

/// A table's columns after the first (left-aligned, flexible) one: title
/// and width; they are right-aligned.
type Cols = &'static [(&'static str, usize)];

const SVC_COLS: Cols = &[
    ("Active", 6),
    ("Inact", 6),
    ("CPS", 5),
    ("InPPS", 6),
    ("OutPPS", 6),
    ("InBPS", 6),
    ("OutBPS", 6),
];
/// The extra columns of a wide screen (real servers' method and weight).
const SVC_WIDE: usize = 110;
const WRK_COLS: Cols = &[
    ("Conns", 9),
    ("Size", 9),
    ("Fill", 6),
    ("RxPPS", 6),
    ("TxPPS", 6),
    ("Drop/s", 6),
    ("CPS", 5),
    ("Busy", 5),
];
const DROP_COLS: Cols = &[("Count", 14), ("/s", 6)];
/// The first column never gets narrower than this while columns on its
/// right can be left out.
const FIRST_MIN: usize = 22;

/// How many of `cols` fit in `width` beside a first column of at least
/// `FIRST_MIN` (or `first_max`, if smaller); the first column's width (at
/// most `first_max`: on a wide screen the numbers stay near the names).
fn fit(width: usize, cols: Cols, first_max: usize) -> (usize, usize) {
    let min = first_max.min(FIRST_MIN);
    let mut n = cols.len();
    loop {
        let used: usize = cols[..n].iter().map(|c| c.1 + 1).sum();
        if n == 0 || width >= used + min {
            return (width.saturating_sub(used).min(first_max), n);
        }
        n -= 1;
    }
}

/// `s` cut or padded to exactly `w` characters.
fn cell(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n > w {
        s.chars().take(w).collect()
    } else {
        format!("{s}{}", " ".repeat(w - n))
    }
}

/// One table line: the first cell, then `cells` right-aligned in `cols`.
fn row(first: &str, w0: usize, cols: Cols, n: usize, cells: &[String]) -> String {
    let mut out = cell(first, w0);
    for (i, (_, w)) in cols[..n].iter().enumerate() {
        let c = cells.get(i).map(String::as_str).unwrap_or("");
        out.push(' ');
        let len = c.chars().count();
        if len >= *w {
            out.extend(c.chars().take(*w));
        } else {
            out += &" ".repeat(w - len);
            out += c;
        }
    }
    out
}

fn titles(first: &str, w0: usize, cols: Cols, n: usize) -> String {
    let t: Vec<String> = cols.iter().map(|c| c.0.to_string()).collect();
    row(first, w0, cols, n, &t)
}

fn rate_cells(r: Option<&Rates>) -> [String; 5] {
    match r {
        Some(r) => [
            human(r.cps),
            human(r.inpps),
            human(r.outpps),
            human(r.inbps),
            human(r.outbps),
        ],
        None => std::array::from_fn(|_| "-".to_string()),
    }
}

struct Styles {
    title: Style,
    head: Style,
    service: Style,
    plain: Style,
    alert: Style,
    warn: Style,
}

impl Styles {
    fn new(color: bool) -> Styles {
        let head = Style::default().add_modifier(Modifier::REVERSED);
        let bold = Style::default().add_modifier(Modifier::BOLD);
        if color {
            Styles {
                title: bold,
                head,
                service: bold.fg(Color::Cyan),
                plain: Style::default(),
                alert: head.add_modifier(Modifier::BOLD).fg(Color::Red),
                warn: Style::default().fg(Color::Yellow),
            }
        } else {
            Styles {
                title: bold,
                head,
                service: bold,
                plain: Style::default(),
                alert: head.add_modifier(Modifier::BOLD),
                warn: Style::default(),
            }
        }
    }
}

/// Where the services' columns go at a width.
struct SvcLayout {
    /// Width of the first column (name and scheduler).
    w0: usize,
    /// How many of [`SVC_COLS`] fit.
    n: usize,
    /// Whether the real servers' method and weight have columns of their own.
    wide: bool,
}

const SVC_FIRST: &str = "Prot LocalAddress:Port Sched";

impl SvcLayout {
    fn new(width: usize) -> SvcLayout {
        let wide = width >= SVC_WIDE;
        let (w0, n) = fit(width - if wide { 14 } else { 0 }, SVC_COLS, 40);
        SvcLayout { w0, n, wide }
    }

    /// A line: `first` (and in a wide layout the method and weight), then
    /// the numbers.
    fn line(&self, first: &str, fwd: &str, weight: &str, cells: &[String]) -> String {
        if self.wide {
            let first = format!("{} {fwd:<6} {weight:>6}", cell(first, self.w0));
            row(&first, self.w0 + 14, SVC_COLS, self.n, cells)
        } else {
            row(first, self.w0, SVC_COLS, self.n, cells)
        }
    }

    /// The title line, `first` in the first column.
    fn head(&self, first: &str) -> String {
        let t: Vec<String> = SVC_COLS.iter().map(|c| c.0.to_string()).collect();
        if self.wide {
            self.line(first, "Fwd", "Weight", &t)
        } else {
            self.line(first, "", "", &t)
        }
    }
}

/// The services' lines (each service, then its real servers).
fn service_lines(f: &Frame, lay: &SvcLayout, st: &Styles) -> Vec<(String, Style)> {
    let mut out = Vec::new();
    for s in &f.services {
        let first = format!("{} {}", service_name(&s.key), s.sched);
        let [cps, inpps, outpps, inbps, outbps] = rate_cells(s.rate.as_ref());
        let cells = [
            s.active.to_string(),
            s.inactive.to_string(),
            cps,
            inpps,
            outpps,
            inbps,
            outbps,
        ];
        out.push((lay.line(&first, "", "", &cells), st.service));
        for d in &s.dests {
            let [cps, inpps, outpps, inbps, outbps] = rate_cells(d.rate.as_ref());
            let cells = [
                d.active.to_string(),
                d.inactive.to_string(),
                cps,
                inpps,
                outpps,
                inbps,
                outbps,
            ];
            let addr = format!("  -> {}", d.addr);
            let line = if lay.wide {
                lay.line(&addr, d.method, &d.weight.to_string(), &cells)
            } else {
                // method and weight when they fit beside the address
                let extra = format!("{} {}", d.method, d.weight);
                let len = addr.chars().count();
                let first = if len + 1 + extra.len() <= lay.w0 {
                    format!("{addr}{}{extra}", " ".repeat(lay.w0 - len - extra.len()))
                } else {
                    addr
                };
                lay.line(&first, "", "", &cells)
            };
            out.push((line, st.plain));
        }
    }
    out
}

fn worker_lines(f: &Frame, width: usize, st: &Styles) -> Vec<(String, Style)> {
    if f.workers.is_empty() {
        return Vec::new();
    }
    let (w0, n) = fit(width, WRK_COLS, 12);
    let mut out = vec![(titles("Worker lcore", w0, WRK_COLS, n), st.head)];
    for w in &f.workers {
        let cells = [
            w.conns.to_string(),
            w.size.to_string(),
            format!("{:.1}%", w.fill() * 100.0),
            opt(w.rx_pps),
            opt(w.tx_pps),
            opt(w.drop_pps),
            opt(w.cps),
            pct(w.busy),
        ];
        let style = if w.fill() >= 0.9 { st.warn } else { st.plain };
        out.push((
            row(&format!("lcore {}", w.lcore), w0, WRK_COLS, n, &cells),
            style,
        ));
    }
    out
}

fn drop_lines(f: &Frame, width: usize, st: &Styles) -> Vec<(String, Style)> {
    let (w0, n) = fit(width, DROP_COLS, 40);
    let mut out = vec![(titles("Drop reason", w0, DROP_COLS, n), st.head)];
    if f.drops.is_empty() {
        out.push(("(no drops)".to_string(), st.plain));
    }
    for d in &f.drops {
        let cells = [d.count.to_string(), opt(d.rate)];
        let style = if d.rate.is_some_and(|r| r > 0.0) {
            st.warn
        } else {
            st.plain
        };
        out.push((row(&d.reason, w0, DROP_COLS, n, &cells), style));
    }
    out
}

fn title_line(v: &View) -> String {
    let (ns, nw) = v
        .frame
        .map(|f| (f.services.len(), f.workers.len()))
        .unwrap_or_default();
    let keys = if v.keys { "  q:quit" } else { "" };
    format!(
        "dirigoctl top  {}  every {}s  {ns} services  {nw} workers{keys}",
        v.clock,
        human(v.delay.as_secs_f64()),
    )
}

fn status_line(v: &View) -> String {
    match (&v.status, v.frame) {
        (Status::Disconnected(e), _) => format!("disconnected, retrying: {e}"),
        (Status::Connecting, _) | (Status::Connected, None) => "connecting...".into(),
        (Status::Connected, Some(f)) => {
            let t = &f.totals;
            let [cps, inpps, outpps, inbps, outbps] = rate_cells(t.rate.as_ref());
            format!(
                "act {} inact {}  in {inpps}pps {inbps}B/s  out {outpps}pps {outbps}B/s  {cps} conn/s  {} drop/s",
                t.active,
                t.inactive,
                opt(t.drop_pps)
            )
        }
    }
}

/// The screen's lines for `width` columns and, when given, at most
/// `height` lines; the largest useful scroll offset is the second value.
pub fn lines(v: &View, width: u16, height: Option<u16>) -> (Vec<(String, Style)>, usize) {
    let width = usize::from(width);
    let st = Styles::new(v.color);
    let status_style = match v.status {
        Status::Disconnected(_) => st.alert,
        _ => st.plain,
    };
    let mut out = vec![(title_line(v), st.title), (status_line(v), status_style)];
    let Some(f) = v.frame else {
        if let Some(h) = height {
            out.truncate(usize::from(h));
        }
        return (out, 0);
    };
    let lay = SvcLayout::new(width);
    let svc = service_lines(f, &lay, &st);
    let wrk = worker_lines(f, width, &st);
    let drp = drop_lines(f, width, &st);
    // lines for each section: the services keep a few, then the workers
    // and the drops take what they need, then the services the rest
    let avail = height
        .map_or(usize::MAX, usize::from)
        .saturating_sub(out.len());
    let svc_want = svc.len() + 1;
    let mut s_h = svc_want.min(6).min(avail);
    let mut left = avail - s_h;
    let w_h = wrk.len().min(left);
    left -= w_h;
    let d_h = drp.len().min(left);
    left -= d_h;
    s_h += left.min(svc_want - s_h);
    // the services, scrolled
    let body = s_h.saturating_sub(1);
    let max_scroll = svc.len().saturating_sub(body);
    let scroll = v.scroll.min(max_scroll);
    if s_h > 0 {
        let head = if body < svc.len() {
            // say which part is shown, at the end of the first column
            let mark = format!(
                " [{}-{}/{}]",
                scroll + 1,
                (scroll + body).min(svc.len()),
                svc.len()
            );
            let m = mark.len().min(lay.w0);
            lay.head(&format!(
                "{}{}",
                cell("Prot LocalAddress:Port", lay.w0 - m),
                &mark[..m]
            ))
        } else {
            lay.head(SVC_FIRST)
        };
        out.push((head, st.head));
        out.extend(svc.into_iter().skip(scroll).take(body));
    }
    out.extend(wrk.into_iter().take(w_h));
    out.extend(drp.into_iter().take(d_h));
    (out, max_scroll)
}

/// Draw `v` into `area` of `buf`; returns the largest useful scroll
/// offset (for the caller to clamp its own).
pub fn render(v: &View, area: Rect, buf: &mut Buffer) -> usize {
    let (ls, max_scroll) = lines(v, area.width, Some(area.height));
    for (i, (text, style)) in ls.iter().enumerate() {
        let Ok(dy) = u16::try_from(i) else { break };
        if dy >= area.height {
            break;
        }
        let y = area.y + dy;
        // header rows are styled across the whole width
        buf.set_style(Rect::new(area.x, y, area.width, 1), *style);
        buf.set_stringn(area.x, y, text, usize::from(area.width), *style);
    }
    max_scroll
}

/// The plain text of one frame `width` columns wide, every line shown
/// (`--once`).
pub fn text(v: &View, width: u16) -> String {
    let (ls, _) = lines(v, width, None);
    let mut out = String::new();
    for (l, _) in ls {
        let l: String = l.chars().take(usize::from(width)).collect();
        out += l.trim_end();
        out.push('\n');
    }
    out
}
