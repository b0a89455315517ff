//! `results/index.html`: every table and plate of a `reproduce` run on one self-contained
//! page, each with a command that really regenerates its table; rendered in a headless
//! Chromium where one is installed (`.ci/run` installs Debian's), driven through the DevTools
//! protocol at 1280x800: no console message (the page's Content-Security-Policy turns any
//! request it would make into one), no sideways scroll, every verdict within the width,
//! every plate drawn, and on the committed page the findings in the first screen.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Two small definitions: a sweep with a plate, and seed-check with its verdicts.
const DEFINITIONS: [(&str, &str); 2] = [
    (
        "small-sweep",
        "command = \"sweep-size\"\ndescription = \"A <small> sweep & its plate\"\n[params]\nn = 500\nk = [4, 6]\nbits_per_key = \"4..12:4\"\nqueries = 5000\n",
    ),
    (
        "small-seeds",
        "command = \"seed-check\"\n[params]\nn = 500\nseeds = 4\nscales = [0.5, 1.0]\nqueries = 5000\n",
    ),
];

/// Writes the definitions, runs `reproduce`, and returns the folder and the page.
fn reproduce_small() -> (tempfile::TempDir, PathBuf, String) {
    let dir = tempfile::tempdir().unwrap();
    let experiments = dir.path().join("experiments");
    let results = dir.path().join("results");
    std::fs::create_dir(&experiments).unwrap();
    for (name, text) in DEFINITIONS {
        std::fs::write(experiments.join(format!("{name}.toml")), text).unwrap();
    }
    crate::common::command()
        .arg("reproduce")
        .arg("--experiments")
        .arg(&experiments)
        .arg("--results")
        .arg(&results)
        .arg("--quiet")
        .assert()
        .success();
    let page = std::fs::read_to_string(results.join("index.html")).unwrap();
    (dir, results, page)
}

#[test]
fn the_page_holds_every_table_and_plate_and_makes_no_request() {
    let (_dir, _results, page) = reproduce_small();
    for (name, _) in DEFINITIONS {
        assert!(
            page.contains(&format!("<table data-table=\"{name}\">")),
            "{name}"
        );
        assert!(
            page.contains(&format!("<figure data-plate=\"{name}\">")),
            "{name}"
        );
    }
    assert_eq!(page.matches("<svg").count(), DEFINITIONS.len());
    assert!(page.contains("A &lt;small&gt; sweep &amp; its plate"));
    let identity = format!(
        "bloomlab {} · key seed 1 · hash seeds 2-5",
        env!("CARGO_PKG_VERSION")
    );
    assert!(page.contains(&identity), "the run's identity");
    assert!(!page.contains("<small>"), "text is escaped");
    for request in ["src=", "<link", "<script", "url(", "@import"] {
        assert!(!page.contains(request), "the page must not load {request}");
    }
    assert!(page.contains("default-src 'none'"));
}

/// The shell words of a command line (single quotes only, as `command_line` writes them).
fn shell_words(line: &str) -> Vec<String> {
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!("for w in {line}; do printf '%s\\0' \"$w\"; done"))
        .output()
        .unwrap();
    String::from_utf8(output.stdout)
        .unwrap()
        .split('\0')
        .filter(|w| !w.is_empty())
        .map(String::from)
        .collect()
}

#[test]
fn each_sections_command_regenerates_its_table() {
    let (_dir, results, page) = reproduce_small();
    for (name, _) in DEFINITIONS {
        let section = &page[page.find(&format!("id=\"experiment-{name}\"")).unwrap()..];
        let start = section.find("Regenerate: <code>").unwrap() + "Regenerate: <code>".len();
        let line = &section[start..start + section[start..].find("</code>").unwrap()];
        let line = line.replace("&#39;", "'").replace("&quot;", "\"");
        let words = shell_words(&line);
        assert_eq!(words[0], "bloomlab", "{line}");
        let output = crate::common::command()
            .args(&words[1..])
            .args(["--format", "csv", "--quiet"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{line}");
        let committed = std::fs::read(results.join(format!("{name}.csv"))).unwrap();
        assert_eq!(output.stdout, committed, "{line} regenerates {name}.csv");
    }
}

/// A Chromium or Chrome on the PATH (or named by `BLOOMLAB_BROWSER`).
fn browser() -> Option<PathBuf> {
    if let Some(named) = std::env::var_os("BLOOMLAB_BROWSER") {
        return Some(PathBuf::from(named));
    }
    let path = std::env::var_os("PATH")?;
    let names = ["chromium", "chromium-browser", "google-chrome", "chrome"];
    std::env::split_paths(&path)
        .flat_map(|dir| names.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

/// The viewport the reader is assumed to have.
const VIEWPORT: (u32, u32) = (1280, 800);

/// What the page measures of itself once laid out, read through the DevTools protocol.
const LAYOUT: &str = r#"JSON.stringify((() => {
  const width = window.innerWidth, height = window.innerHeight;
  const shown = e => e.getClientRects().length > 0 && !e.closest('details:not([open])');
  const verdicts = [...document.querySelectorAll('td.verdict')].filter(shown);
  const outside = verdicts.filter(e => {
    const r = e.getBoundingClientRect();
    return r.left < 0 || r.right > width;
  });
  const plates = [...document.querySelectorAll('figure[data-plate] svg')];
  const undrawn = plates.filter(svg => {
    const r = svg.getBoundingClientRect();
    const marks = svg.querySelectorAll('circle, rect, polygon, polyline').length;
    return !(r.width > 0 && r.height > 0 && r.right <= width && marks > 1);
  });
  const findings = document.getElementById('findings');
  const below = e => e.getBoundingClientRect().bottom > height;
  const attention = [...document.querySelectorAll('table.ledger tr.flagged')];
  return {
    width, height,
    overflow: document.documentElement.scrollWidth - width,
    verdicts: verdicts.length,
    outside: outside.map(e => e.textContent),
    plates: plates.length,
    undrawn: undrawn.map(svg => svg.closest('figure').dataset.plate),
    findings_in_first_screen: findings !== null && !below(findings),
    found_in_first_screen: [...document.querySelectorAll('[data-found]')]
      .filter(e => !below(e)).map(e => e.textContent),
    attention: attention.length,
    attention_below_first_screen: attention.filter(below).map(e => e.textContent.slice(0, 60)),
  };
})())"#;

/// A browser driven through the DevTools protocol over a pipe (`--remote-debugging-pipe`:
/// JSON messages, each ended by a NUL byte, read on its fd 3 and written on its fd 4), with
/// one page target attached; the console messages heard so far.
struct DevTools {
    child: std::process::Child,
    to: std::process::ChildStdin,
    from: std::io::BufReader<std::process::ChildStdout>,
    session: Option<String>,
    next_id: u64,
    messages: Vec<String>,
}

impl DevTools {
    /// Starts `browser` headless at [`VIEWPORT`] with a fresh profile in `profile`, and opens
    /// a page target. A shell gives the browser its stdin and stdout as fds 3 and 4.
    fn start(browser: &Path, profile: &Path) -> Self {
        use std::process::Stdio;
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(r#"exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>&2"#)
            .arg(browser)
            .args([
                "--headless",
                "--remote-debugging-pipe",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-dev-shm-usage",
                "--disable-extensions",
                "--disable-sync",
                "--no-first-run",
                "--hide-scrollbars",
                "--mute-audio",
                &format!("--window-size={},{}", VIEWPORT.0, VIEWPORT.1),
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("the browser starts");
        let to = child.stdin.take().unwrap();
        let from = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut tools = DevTools {
            child,
            to,
            from,
            session: None,
            next_id: 0,
            messages: Vec::new(),
        };
        let target = tools.call(
            "Target.createTarget",
            serde_json::json!({"url": "about:blank"}),
        );
        let attached = tools.call(
            "Target.attachToTarget",
            serde_json::json!({"targetId": target["targetId"], "flatten": true}),
        );
        tools.session = Some(attached["sessionId"].as_str().unwrap().to_string());
        tools
    }

    /// The next message from the browser; a console message of the page is kept on the way.
    fn receive(&mut self) -> serde_json::Value {
        use std::io::BufRead;
        let mut bytes = Vec::new();
        self.from.read_until(0, &mut bytes).unwrap();
        assert_eq!(bytes.pop(), Some(0), "the browser closed its pipe");
        let message: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let params = &message["params"];
        let heard = match message["method"].as_str() {
            Some("Log.entryAdded") => format!("log: {}", params["entry"]["text"]),
            Some("Runtime.consoleAPICalled") => format!("console: {}", params["args"]),
            Some("Runtime.exceptionThrown") => {
                format!("exception: {}", params["exceptionDetails"]["text"])
            }
            _ => return message,
        };
        self.messages.push(heard);
        message
    }

    /// Sends a command (to the page once one is attached) and returns its result.
    fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        use std::io::Write;
        self.next_id += 1;
        let id = self.next_id;
        let mut command = serde_json::json!({"id": id, "method": method, "params": params});
        if let Some(session) = &self.session {
            command["sessionId"] = session.clone().into();
        }
        let mut bytes = serde_json::to_vec(&command).unwrap();
        bytes.push(0);
        self.to.write_all(&bytes).unwrap();
        loop {
            let message = self.receive();
            if message["id"] == id {
                assert!(message["error"].is_null(), "{method}: {message}");
                return message["result"].clone();
            }
        }
    }

    /// Waits for the event `method` of the page.
    fn wait_for(&mut self, method: &str) {
        while self.receive()["method"] != method {}
    }
}

impl Drop for DevTools {
    /// Closes the browser and waits for it, so that no process outlives the test.
    fn drop(&mut self) {
        use std::io::Write;
        let close = br#"{"id":0,"method":"Browser.close","params":{}}"#;
        if self
            .to
            .write_all(close)
            .and_then(|()| self.to.write_all(&[0]))
            .is_err()
        {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// The bytes of standard base64 text (the screenshot the protocol sends).
fn base64_decode(text: &str) -> Vec<u8> {
    let digit = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(digit).collect();
    let mut bytes = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let word = chunk
            .iter()
            .enumerate()
            .fold(0u32, |word, (i, &d)| word | (u32::from(d) << (18 - 6 * i)));
        bytes.extend(&word.to_be_bytes()[1..chunk.len()]);
    }
    bytes
}

/// The page's layout at [`VIEWPORT`] with every fold closed, and every console message
/// (log entries, console calls, exceptions: a request the Content-Security-Policy refuses
/// is one). Writes a screenshot of the first screen to `screenshot`.
fn render(browser: &Path, page: &Path, screenshot: &Path) -> (serde_json::Value, Vec<String>) {
    use serde_json::json;
    let profile = tempfile::tempdir().unwrap();
    let mut tools = DevTools::start(browser, profile.path());
    tools.call(
        "Emulation.setDeviceMetricsOverride",
        json!({"width": VIEWPORT.0, "height": VIEWPORT.1, "deviceScaleFactor": 1.0, "mobile": false}),
    );
    tools.call("Log.enable", json!({}));
    tools.call("Runtime.enable", json!({}));
    tools.call("Page.enable", json!({}));
    let url = format!("file://{}", page.display());
    let navigated = tools.call("Page.navigate", json!({"url": url}));
    assert!(navigated["errorText"].is_null(), "{navigated}");
    tools.wait_for("Page.loadEventFired");
    let evaluated = tools.call(
        "Runtime.evaluate",
        json!({"expression": LAYOUT, "returnByValue": true}),
    );
    let layout = evaluated["result"]["value"].as_str().expect("the layout");
    let layout: serde_json::Value = serde_json::from_str(layout).unwrap();
    let png = tools.call(
        "Page.captureScreenshot",
        json!({"format": "png", "fromSurface": true}),
    );
    std::fs::write(screenshot, base64_decode(png["data"].as_str().unwrap())).unwrap();
    let messages = std::mem::take(&mut tools.messages);
    (layout, messages)
}

/// Asserts what every page must show at [`VIEWPORT`] with its folds closed: no console
/// message, no horizontal scroll, every verdict cell within the width, every plate drawn.
fn assert_reads_at_a_glance(layout: &serde_json::Value, messages: &[String], plates: usize) {
    assert!(
        messages.is_empty(),
        "console messages:\n{}",
        messages.join("\n")
    );
    assert_eq!(layout["width"], VIEWPORT.0, "{layout}");
    assert_eq!(layout["height"], VIEWPORT.1, "{layout}");
    assert!(
        layout["overflow"].as_i64().unwrap() <= 0,
        "the page scrolls sideways: {layout}"
    );
    assert!(layout["verdicts"].as_u64().unwrap() > 0, "{layout}");
    assert_eq!(
        layout["outside"],
        serde_json::json!([]),
        "verdicts past the edge: {layout}"
    );
    assert_eq!(layout["plates"], plates, "{layout}");
    assert_eq!(
        layout["undrawn"],
        serde_json::json!([]),
        "plates not drawn: {layout}"
    );
    assert_eq!(layout["findings_in_first_screen"], true, "{layout}");
}

/// The browser, or `None` after saying why the test is skipped.
fn browser_or_skip() -> Option<PathBuf> {
    let found = browser();
    if found.is_none() {
        println!(
            "SKIPPED: no chromium, chromium-browser or google-chrome on the PATH (set \
             BLOOMLAB_BROWSER, or run .ci/run, which installs Debian's chromium)"
        );
    }
    found
}

#[test]
fn a_headless_browser_renders_every_table_and_plate_without_console_messages() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let (_dir, results, _page) = reproduce_small();
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-small.png");
    let (layout, messages) = render(&browser, &results.join("index.html"), &screenshot);
    assert_reads_at_a_glance(&layout, &messages, DEFINITIONS.len());
}

/// The committed page, as a reader opens it: the counts of verdicts and every claim that is
/// not supported or undetermined, and the count of failures from the wild reproduced, in the first screen. Its screenshot,
/// `target/tmp/html-first-screen.png`, is for a person to look at.
#[test]
fn the_committed_page_shows_its_findings_in_the_first_screen() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let page = Path::new(env!("CARGO_MANIFEST_DIR")).join("results/index.html");
    let committed = std::fs::read_to_string(&page).unwrap();
    let screenshot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-first-screen.png");
    let (layout, messages) = render(&browser, &page, &screenshot);
    assert_reads_at_a_glance(&layout, &messages, committed.matches("<figure").count());
    assert!(layout["attention"].as_u64().unwrap() > 0, "{layout}");
    assert_eq!(
        layout["attention_below_first_screen"],
        serde_json::json!([]),
        "claims to look at below the first screen: {layout}"
    );
    let wild = std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments/wild"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension() == Some("toml".as_ref()))
        .count();
    let count = format!(" of {wild} failures from the wild suite reproduced");
    let found = layout["found_in_first_screen"].as_array().unwrap();
    assert!(
        found.iter().any(|f| f.as_str().unwrap().contains(&count)),
        "the count of wild failures reproduced (\"{count}\") is not in the first screen: {layout}"
    );
    println!("screenshot: {}", screenshot.display());
}

/// The console check hears what it must: a page under the same policy that asks for an
/// image logs the refusal.
#[test]
fn the_console_check_hears_a_refused_request() {
    let Some(browser) = browser_or_skip() else {
        return;
    };
    let (_dir, _results, page) = reproduce_small();
    let dir = tempfile::tempdir().unwrap();
    let refused = dir.path().join("refused.html");
    let asks = page.replacen("</body>", "<img src=\"plate.png\" alt=\"\"></body>", 1);
    std::fs::write(&refused, asks).unwrap();
    let screenshot = dir.path().join("refused.png");
    let (_layout, messages) = render(&browser, &refused, &screenshot);
    assert!(
        messages
            .iter()
            .any(|m| m.contains("Content Security Policy")),
        "{messages:?}"
    );
}

/// Markup in text is escaped.
mod escaping {
    use bloomlab::report::escape;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            escape("<b>\"a\" & 'b'</b>"),
            "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;"
        );
    }
}
