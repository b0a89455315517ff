//! Every bloomlab command that README.md and docs/*.md show in a code block runs, and exits
//! as the page says: a line of a fenced block that begins (after any indentation and a `$ `
//! prompt) with `bloomlab ` or `cargo run --release -- `, joined with the lines a trailing
//! `\` continues. It exits 0 unless its trailing comment says `exit N`. It runs under bash
//! (for `<(seq 1000)`) with `bloomlab` this build's binary. The commands of one block run in
//! order in one scratch folder (a block is what a reader runs in one go) holding what the
//! checkout would give them: copies of `experiments/` and `results/` when one names them or
//! is `check`, the exec fixture when one names `target/release/examples/exec_fixture`.
//! Skipped: a command whose comment says `# needs a cluster`, and the main job (`reproduce`,
//! minutes) when its comment names `.ci/run`, where it runs as `check`. A command quoted in
//! prose as the provenance of a figure (minutes of benchmarks) is not in a code block and
//! not run. Also: the README is a page a newcomer reads in five minutes, at most 250 lines,
//! and every link between the pages finds its file and heading.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::{BIN, copy_dir, exec_fixture, text};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The fixture's path as the pages name it, relative to the checkout.
const FIXTURE: &str = "target/release/examples/exec_fixture";

/// A command a page shows in a code block.
#[derive(Debug)]
struct Shown {
    /// The page and the line the command starts on, `docs/GUIDE.md:96`.
    place: String,
    /// Which code block of all the pages it is in.
    block: usize,
    /// The command line, `cargo run --release --` written as `bloomlab`, its comment removed.
    command: String,
    /// Its trailing comment (after ` # `), empty if none.
    comment: String,
}

impl Shown {
    /// The exit status the comment states (`exit N`), 0 when it states none.
    fn status(&self) -> i32 {
        let words: Vec<&str> = self.comment.split_whitespace().collect();
        words
            .windows(2)
            .find(|pair| pair[0] == "exit")
            .map(|pair| {
                pair[1]
                    .trim_end_matches([',', ';', ':', ')'])
                    .parse()
                    .unwrap()
            })
            .unwrap_or(0)
    }

    /// Why the test does not run it, if it does not: marked as needing a cluster, or the main
    /// job with a comment naming where CI runs it.
    fn exempt(&self) -> Option<&'static str> {
        if self.comment.contains("needs a cluster") {
            Some("needs a cluster")
        } else if self.subcommand() == "reproduce" && self.comment.contains(".ci/run") {
            Some("the main job, run by .ci/run")
        } else {
            None
        }
    }

    fn subcommand(&self) -> &str {
        self.command.split_whitespace().nth(1).unwrap_or("")
    }
}

/// README.md and every docs/*.md, in order.
fn pages() -> Vec<PathBuf> {
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    std::iter::once(Path::new(ROOT).join("README.md"))
        .chain(docs)
        .collect()
}

/// The line split at its comment: the first `#` outside quotes that follows white space.
fn split_comment(line: &str) -> (&str, &str) {
    let (mut quote, mut previous) = (None, ' ');
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (None, '\'' | '"') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            (None, '#') if previous.is_whitespace() => {
                return (line[..at].trim_end(), line[at + 1..].trim());
            }
            _ => {}
        }
        previous = c;
    }
    (line.trim_end(), "")
}

/// The commands of one page's code blocks, blocks numbered from `first_block`.
fn shown_in(page: &str, markdown: &str, first_block: usize) -> Vec<Shown> {
    let (mut shown, mut in_block, mut block) = (Vec::new(), false, first_block);
    let mut lines = markdown.lines().enumerate();
    while let Some((at, line)) = lines.next() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            block += 1;
            continue;
        }
        let line = line.trim_start();
        let line = line.strip_prefix("$ ").unwrap_or(line);
        let rest = match (
            line.strip_prefix("bloomlab "),
            line.strip_prefix("cargo run --release -- "),
        ) {
            (Some(rest), _) | (_, Some(rest)) if in_block => rest,
            _ => continue,
        };
        let mut full = format!("bloomlab {rest}");
        while full.ends_with('\\') {
            full.pop();
            full.push_str(lines.next().map_or("", |(_, next)| next.trim()));
        }
        let (command, comment) = split_comment(&full);
        shown.push(Shown {
            place: format!("{page}:{}", at + 1),
            block,
            command: command.to_string(),
            comment: comment.to_string(),
        });
    }
    shown
}

/// Every command the pages show.
fn shown() -> Vec<Shown> {
    let mut shown = Vec::new();
    for (at, path) in pages().iter().enumerate() {
        let page = path.strip_prefix(ROOT).unwrap().display().to_string();
        let markdown = std::fs::read_to_string(path).unwrap();
        shown.extend(shown_in(&page, &markdown, at << 16));
    }
    shown
}

/// A scratch folder holding what the commands of one block need of the checkout.
fn scratch_for(block: &[&Shown]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let names = |text: &str| block.iter().any(|shown| shown.command.contains(text));
    let checks = block.iter().any(|shown| shown.subcommand() == "check");
    for folder in ["experiments", "results"] {
        if checks || names(folder) {
            copy_dir(&Path::new(ROOT).join(folder), &dir.path().join(folder), &[]);
        }
    }
    if names(FIXTURE) {
        let path = dir.path().join(FIXTURE);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(exec_fixture(), path).unwrap();
    }
    dir
}

/// Runs `shown` in `dir` as a reader would; a line saying how it ended when not as the page
/// says.
fn failure(shown: &Shown, dir: &Path) -> Option<String> {
    let script = format!("bloomlab() {{ \"$BLOOMLAB\" \"$@\"; }}\n{}", shown.command);
    let out = Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir)
        .env("BLOOMLAB", BIN)
        .env("BLOOMLAB_EXEC_TIMEOUT", "60")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let (want, got) = (shown.status(), out.status.code());
    (got != Some(want)).then(|| {
        let stderr = text(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
        format!(
            "{}: `{}` exited {got:?}, the page says {want}: {}",
            shown.place,
            shown.command,
            tail.into_iter().rev().collect::<Vec<_>>().join(" / ")
        )
    })
}

#[test]
fn every_command_the_readme_and_docs_show_runs_as_they_say() {
    let shown = shown();
    let run: Vec<&Shown> = shown.iter().filter(|s| s.exempt().is_none()).collect();
    let in_readme = run
        .iter()
        .filter(|s| s.place.starts_with("README.md:"))
        .count();
    assert!(
        in_readme >= 6 && run.len() >= 20,
        "too few commands found ({in_readme} in the README, {} in all): is the parser broken?",
        run.len()
    );
    // Two blocks at a time: the slowest (advise, 10 s of wall time) beside the others.
    let blocks: Vec<&[&Shown]> = run.chunk_by(|a, b| a.block == b.block).collect();
    let (next, failures) = (AtomicUsize::new(0), Mutex::new(Vec::new()));
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some(block) = blocks.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let dir = scratch_for(block);
                    let failed = block.iter().filter_map(|shown| failure(shown, dir.path()));
                    failures.lock().unwrap().extend(failed);
                }
            });
        }
    });
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_readme_is_a_page_of_at_most_250_lines() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: the reference belongs in docs/"
    );
}

#[test]
fn the_parser_reads_prompts_continuations_comments_and_exemptions() {
    let page = "text\n```sh\n$ bloomlab size --n 10 \\\n  --fpr 0.1   # exit 2\n\
                bloomlab seed-check --seeds 3 # needs a cluster\n\
                cargo run --release -- reproduce   # .ci/run runs it\n\
                cargo run --release -- check   # .ci/run runs it\n\
                bloomlab audit --filter exec:'a # b' --loads 1\n```\nbloomlab outside a block\n";
    let shown = shown_in("page.md", page, 0);
    let summary: Vec<(&str, &str, i32, Option<&str>)> = shown
        .iter()
        .map(|s| (s.place.as_str(), s.command.as_str(), s.status(), s.exempt()))
        .collect();
    assert_eq!(
        summary,
        [
            ("page.md:3", "bloomlab size --n 10 --fpr 0.1", 2, None),
            (
                "page.md:5",
                "bloomlab seed-check --seeds 3",
                0,
                Some("needs a cluster")
            ),
            (
                "page.md:6",
                "bloomlab reproduce",
                0,
                Some("the main job, run by .ci/run")
            ),
            ("page.md:7", "bloomlab check", 0, None),
            (
                "page.md:8",
                "bloomlab audit --filter exec:'a # b' --loads 1",
                0,
                None
            ),
        ]
    );
}

/// GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(markdown: &str) -> Vec<String> {
    let mut in_block = false;
    let mut found = Vec::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
        } else if !in_block && line.starts_with('#') {
            found.push(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

#[test]
fn every_link_between_the_pages_finds_its_file_and_heading() {
    let mut broken = Vec::new();
    for page in pages()
        .into_iter()
        .chain([Path::new(ROOT).join("adapters/README.md")])
    {
        let markdown = std::fs::read_to_string(&page).unwrap();
        for link in markdown.split("](").skip(1) {
            let target = link.split([')', ' ']).next().unwrap();
            if target.contains("://") {
                continue;
            }
            let (file, heading) = target.split_once('#').unwrap_or((target, ""));
            let path = match file {
                "" => page.clone(),
                file => page.parent().unwrap().join(file),
            };
            let found = path.exists()
                && (heading.is_empty()
                    || anchors(&std::fs::read_to_string(&path).unwrap())
                        .iter()
                        .any(|a| a == heading));
            if !found {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

#[test]
fn anchors_are_github_s() {
    assert_eq!(
        anchor(" Any filter, in any language (`exec:`, the adapters, your own Rust type)"),
        "any-filter-in-any-language-exec-the-adapters-your-own-rust-type"
    );
    assert_eq!(
        anchor(" Which filter should I use?"),
        "which-filter-should-i-use"
    );
}
