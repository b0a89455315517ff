//! String keys (`--keys file:`, `strings:`) reach an exec program as text lines, in batches,
//! as docs/PROTOCOL.md says; a key a text line cannot carry is refused before work.

use std::path::Path;
use std::process::Output;

use crate::common;

use common::{bloomlab, text};

/// A set of keys as the filter, which logs every command line it reads (not the keys) to
/// the file named by its argument, and every inserted key line to that name plus `.keys`.
const LOGGING_SET: &str = r#"
import json, sys
read, out = sys.stdin.buffer.readline, sys.stdout
log = open(sys.argv[1], "w")
keys_log = open(sys.argv[1] + ".keys", "wb")
header = json.loads(read())
keys = set()
def reply(text):
    out.write(text + "\n")
    out.flush()
reply(json.dumps({"name": "logging set"}))
while True:
    line = read()
    log.write(line.decode())
    log.flush()
    command = line.split()
    if not command or command[0] == b"end":
        break
    if command[0] == b"stats":
        reply("{}")
        continue
    batch = [read() for _ in range(int(command[1]))]
    if command[0] == b"insert":
        keys.update(batch)
        keys_log.writelines(batch)
        keys_log.flush()
        reply("ok")
    else:
        reply("".join("1" if key in keys else "0" for key in batch))
"#;

fn sweep(filter: &str, keys: &str) -> Output {
    bloomlab(&[
        "sweep-size",
        "--filter",
        filter,
        "--keys",
        keys,
        "--bits-per-key",
        "10",
        "--queries",
        "5000",
        "--quiet",
    ])
}

fn logging_filter(dir: &Path) -> (String, std::path::PathBuf) {
    let (script, log) = (dir.join("set.py"), dir.join("log"));
    std::fs::write(&script, LOGGING_SET).unwrap();
    (
        format!("exec:python3 {} {}", script.display(), log.display()),
        log,
    )
}

#[test]
fn string_keys_are_sent_as_text_lines_in_batches() {
    let dir = tempfile::tempdir().unwrap();
    let (filter, log) = logging_filter(dir.path());
    let file = dir.path().join("keys.txt");
    let lines: Vec<String> = (0..10_000).map(|i| format!("user:{i:05} é")).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = sweep(&filter, &format!("file:{}", file.display()));
    assert!(out.status.success(), "{}", text(&out.stderr));
    let commands = std::fs::read_to_string(&log).unwrap();
    let inserts: Vec<&str> = commands
        .lines()
        .filter(|l| l.starts_with("insert"))
        .collect();
    // 10,000 keys in batches (of 4096), not one request per key.
    assert_eq!(
        inserts,
        ["insert 4096", "insert 4096", "insert 1808"],
        "{commands}"
    );
    assert!(commands.lines().filter(|l| l.starts_with("query")).count() <= 3);
    // The lines are the file's own, as text: not xxh3 integers.
    let sent = std::fs::read_to_string(log.with_extension("keys")).unwrap();
    assert_eq!(sent.lines().collect::<Vec<_>>(), lines);
    // `strings:` keys go the same way.
    let out = sweep(&filter, "strings:k{:04}");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = std::fs::read_to_string(log.with_extension("keys")).unwrap();
    assert!(sent.starts_with("k0000\nk0001\n"), "{}", &sent[..40]);
}

#[test]
fn a_key_a_text_line_cannot_carry_is_refused_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let (filter, log) = logging_filter(dir.path());
    let file = dir.path().join("keys.txt");
    std::fs::write(&file, b"alpha\nbeta\ncaf\xe9\ndelta\n").unwrap();
    let out = sweep(&filter, &format!("file:{}", file.display()));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("--keys") && said.contains("line 3"), "{said}");
    assert!(
        said.contains("caf\\\\xe9") && said.contains("UTF-8"),
        "{said}"
    );
    assert!(out.stdout.is_empty());
    // Before work: the program was sent no key (sweep-size's probe of its sizing may run).
    let sent = || std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!sent().contains("insert"), "{}", sent());
    // An LF inside a `strings:` template: refused the same way, naming the key.
    let out = sweep(&filter, "strings:a\n{}");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    assert!(said.contains("--keys") && said.contains("LF"), "{said}");
    assert!(!sent().contains("insert"), "{}", sent());
}
