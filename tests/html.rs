//! `results/index.html`: every table and plate of a `reproduce` run on one self-contained
//! page, each with a command that really regenerates its table; rendered in a headless
//! Chromium where one is installed (`.ci/run` installs Debian's), which must log no console
//! message (the page's Content-Security-Policy turns any request it would make into one).

use std::path::{Path, PathBuf};
use std::process::Command;

use assert_cmd::prelude::*;

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
    Command::cargo_bin("bloomlab")
        .unwrap()
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
        let output = Command::cargo_bin("bloomlab")
            .unwrap()
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

/// The DOM Chromium builds from the page, and its log (console messages included).
fn render(browser: &Path, page: &Path) -> (String, String) {
    let profile = tempfile::tempdir().unwrap();
    let output = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{browser:?} failed on the page");
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_headless_browser_renders_every_table_and_plate_without_console_messages() {
    let Some(browser) = browser() else {
        println!(
            "SKIPPED: no chromium, chromium-browser or google-chrome on the PATH (set \
             BLOOMLAB_BROWSER, or run .ci/run, which installs Debian's chromium)"
        );
        return;
    };
    let (_dir, results, _page) = reproduce_small();
    let (dom, log) = render(&browser, &results.join("index.html"));
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(
        console.is_empty(),
        "console messages:\n{}",
        console.join("\n")
    );
    for (name, _) in DEFINITIONS {
        assert!(
            dom.contains(&format!("<table data-table=\"{name}\">")),
            "{name}"
        );
        assert!(
            dom.contains(&format!("<figure data-plate=\"{name}\">")),
            "{name}"
        );
    }
    assert_eq!(dom.matches("<svg").count(), DEFINITIONS.len());
}
