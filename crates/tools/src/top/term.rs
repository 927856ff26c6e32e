//! The live view: the terminal in raw mode on the alternate screen (given
//! back on every way out: a key, a signal, an error, a panic), a poller
//! thread that samples the daemon every `delay` and never blocks the keys,
//! and the loop that draws.

use super::clock::clock;
use super::draw::{render, Status, View};
use super::options::Options;
use super::rates::Frame;
use super::sample::{Poller, Sample};
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::crossterm::{cursor, execute, terminal};
use ratatui::Terminal;
use std::io::{self, IsTerminal, Stdout};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Once};
use std::time::Duration;

/// What a key asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Leave (`q`, `Q`, Esc, Ctrl-C).
    Quit,
    /// Poll now (space).
    Refresh,
    /// Scroll the services by this many lines (arrows, j/k, PgUp/PgDn).
    Scroll(isize),
    /// To the first (Home, `g`) or last (End, `G`) service line.
    Jump(bool),
    /// Nothing.
    None,
}

/// The action of a key press.
pub fn action(k: &KeyEvent) -> Action {
    if k.kind == KeyEventKind::Release {
        return Action::None;
    }
    let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
    match k.code {
        KeyCode::Char('c') | KeyCode::Char('C') if ctrl => Action::Quit,
        KeyCode::Char('q') | KeyCode::Char('Q') | KeyCode::Esc => Action::Quit,
        KeyCode::Char(' ') => Action::Refresh,
        KeyCode::Up | KeyCode::Char('k') => Action::Scroll(-1),
        KeyCode::Down | KeyCode::Char('j') => Action::Scroll(1),
        KeyCode::PageUp => Action::Scroll(-10),
        KeyCode::PageDown => Action::Scroll(10),
        KeyCode::Home | KeyCode::Char('g') => Action::Jump(false),
        KeyCode::End | KeyCode::Char('G') => Action::Jump(true),
        _ => Action::None,
    }
}

/// Give the terminal back: cooked mode, the main screen, the cursor.
/// Harmless when it was never taken.
fn restore() {
    let _ = terminal::disable_raw_mode();
    let _ = execute!(io::stdout(), terminal::LeaveAlternateScreen, cursor::Show);
}

/// The terminal, raw and on the alternate screen while this lives.
struct Term {
    t: Terminal<CrosstermBackend<Stdout>>,
}

impl Term {
    fn enter() -> io::Result<Term> {
        static HOOK: Once = Once::new();
        HOOK.call_once(|| {
            // a panic gives the terminal back before its message is printed
            let prev = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                restore();
                prev(info);
            }));
        });
        terminal::enable_raw_mode()?;
        // from here on, every way out (`?` included) restores
        let mut guard = Term {
            t: Terminal::new(CrosstermBackend::new(io::stdout()))?,
        };
        execute!(io::stdout(), terminal::EnterAlternateScreen, cursor::Hide)?;
        guard.t.clear()?;
        Ok(guard)
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        restore();
    }
}

/// The screen's state between two draws.
struct Ui {
    prev: Option<Sample>,
    frame: Option<Frame>,
    status: Status,
    scroll: usize,
    max_scroll: usize,
}

impl Ui {
    /// Before the first sample.
    fn new() -> Ui {
        Ui {
            prev: None,
            frame: None,
            status: Status::Connecting,
            scroll: 0,
            max_scroll: 0,
        }
    }

    fn update(&mut self, r: Result<Sample, String>) {
        match r {
            Ok(s) => {
                self.frame = Some(Frame::between(self.prev.as_ref(), &s));
                self.prev = Some(s);
                self.status = Status::Connected;
            }
            Err(e) => {
                // the last frame stays; rates start again after reconnecting
                self.prev = None;
                self.status = Status::Disconnected(e);
            }
        }
    }

    /// Take the poller's waiting samples: whether there were any.
    fn drain(&mut self, rx: &mpsc::Receiver<Result<Sample, String>>) -> Result<bool, String> {
        let mut got = false;
        loop {
            match rx.try_recv() {
                Ok(r) => {
                    self.update(r);
                    got = true;
                }
                Err(TryRecvError::Empty) => return Ok(got),
                Err(TryRecvError::Disconnected) => return Err("the poller stopped".into()),
            }
        }
    }

    /// Draw the screen, and keep the scroll within what it holds.
    fn draw(&mut self, term: &mut Term, o: &Options) -> Result<(), String> {
        let view = View {
            frame: self.frame.as_ref(),
            status: self.status.clone(),
            delay: o.delay,
            clock: clock(),
            scroll: self.scroll,
            color: o.color,
            keys: true,
        };
        let mut max = 0;
        term.t
            .draw(|f| max = render(&view, f.area(), f.buffer_mut()))
            .map_err(|e| format!("terminal: {e}"))?;
        self.max_scroll = max;
        self.scroll = self.scroll.min(max);
        Ok(())
    }

    /// Do what a key asks but quitting: whether the screen changed.
    fn act(&mut self, a: Action, wake: &mpsc::Sender<()>) -> bool {
        match a {
            Action::Refresh => {
                let _ = wake.send(());
                false
            }
            Action::Scroll(d) => {
                self.scroll = self.scroll.saturating_add_signed(d).min(self.max_scroll);
                true
            }
            Action::Jump(end) => {
                self.scroll = if end { self.max_scroll } else { 0 };
                true
            }
            Action::Quit | Action::None => false,
        }
    }
}

/// The poller thread: a sample every `delay` (or at once when woken),
/// until the screen goes away.
fn poll_loop(
    path: PathBuf,
    delay: Duration,
    tx: mpsc::Sender<Result<Sample, String>>,
    wake: mpsc::Receiver<()>,
) {
    let mut p = Poller::new(path, Duration::from_secs(5));
    loop {
        if tx.send(p.poll()).is_err() {
            return;
        }
        match wake.recv_timeout(delay) {
            Ok(()) | Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// A flag raised by SIGINT, SIGTERM or SIGHUP.
fn on_signals() -> Result<Arc<AtomicBool>, String> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        signal_hook::flag::register(sig, Arc::clone(&stop))
            .map_err(|e| format!("cannot install a signal handler: {e}"))?;
    }
    Ok(stop)
}

/// The poller thread's samples, and the way to wake it.
type Poll = (mpsc::Receiver<Result<Sample, String>>, mpsc::Sender<()>);

/// Start the poller thread on `o`'s socket: its samples, and the way to
/// wake it.
fn start_poller(o: &Options) -> Result<Poll, String> {
    let (tx, rx) = mpsc::channel();
    let (wake_tx, wake_rx) = mpsc::channel();
    let (path, delay) = (o.socket.clone(), o.delay);
    std::thread::Builder::new()
        .name("top-poll".into())
        .spawn(move || poll_loop(path, delay, tx, wake_rx))
        .map_err(|e| format!("cannot start the poller: {e}"))?;
    Ok((rx, wake_tx))
}

/// Run the live view until a quit key or a signal (SIGINT, SIGTERM,
/// SIGHUP).
pub fn interactive(o: &Options) -> Result<(), String> {
    if !io::stdout().is_terminal() {
        return Err("top needs a terminal on stdout; use --once (-b) for plain text".into());
    }
    let stop = on_signals()?;
    let (rx, wake_tx) = start_poller(o)?;
    let mut term = Term::enter().map_err(|e| format!("terminal: {e}"))?;
    let mut ui = Ui::new();
    let mut dirty = true;
    while !stop.load(Ordering::Relaxed) {
        dirty |= ui.drain(&rx)?;
        if dirty {
            ui.draw(&mut term, o)?;
            dirty = false;
        }
        if !event::poll(Duration::from_millis(100)).map_err(|e| format!("terminal: {e}"))? {
            continue;
        }
        match event::read().map_err(|e| format!("terminal: {e}"))? {
            Event::Key(k) => match action(&k) {
                Action::Quit => break,
                a => dirty |= ui.act(a, &wake_tx),
            },
            Event::Resize(..) => dirty = true,
            _ => {}
        }
    }
    drop(term);
    Ok(())
}
