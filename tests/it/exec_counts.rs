//! Counts an exec program reports that cannot be (issue 43): a negative, textual, fractional,
//! huge or null `addressed_bits`, a k of 0, and `set_bits` above the bits addressed are
//! protocol errors naming the field, never fills above 1 or an m of 0 in the table; `conform`
//! does not pass such a program. A `name` with control characters reaches no output raw.

#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::BIN;

/// A protocol speaker in bash whose hello reply is its first argument and whose `stats`
/// reply its second; it answers every query key absent.
const SPEAKER: &str = r#"hello=$1; stats=$2
read -r header
echo "$hello"
while read -r cmd count; do
  case $cmd in
    insert) for ((i = 0; i < count; i++)); do read -r k; done; echo ok;;
    query) for ((i = 0; i < count; i++)); do read -r k; done
           printf '0%.0s' $(seq "$count"); echo;;
    stats) echo "$stats";;
    end) exit 0;;
  esac
done
"#;

fn run(dir: &Path, command: &str, hello: &str, stats: &str) -> Output {
    let script = dir.join("speaker.sh");
    fs::write(&script, SPEAKER).unwrap();
    let filter = format!("exec:bash {} '{hello}' '{stats}'", script.display());
    let args: Vec<&str> = match command {
        "conform" => vec!["conform", "--filter", &filter, "--n", "200"],
        _ => vec![
            "sweep-size",
            "--filter",
            &filter,
            "--n",
            "200",
            "--m",
            "2000",
            "--queries",
            "1000",
            "--format",
            "csv",
            "--quiet",
        ],
    };
    Command::new(BIN)
        .args(args)
        .env("BLOOMLAB_EXEC_TIMEOUT", "60")
        .output()
        .unwrap()
}

fn fails_naming(out: &Output, field: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("`{field}` is")),
        "{field}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn counts_that_cannot_be_are_protocol_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good_stats = r#"{"addressed_bits":2000,"set_bits":500}"#;
    for bad in [
        "-5",
        "\"20000\"",
        "1e300",
        "1180591620717411303424",
        "null",
        "0",
    ] {
        let hello = format!(r#"{{"name":"counts","addressed_bits":{bad},"k":3}}"#);
        fails_naming(
            &run(dir.path(), "sweep", &hello, good_stats),
            "addressed_bits",
        );
    }
    let hello = r#"{"name":"counts","addressed_bits":2000,"k":0}"#;
    fails_naming(&run(dir.path(), "sweep", hello, good_stats), "k");
    let hello = r#"{"name":"counts","addressed_bits":1,"k":3}"#;
    let above = r#"{"set_bits":5000}"#;
    fails_naming(&run(dir.path(), "sweep", hello, above), "set_bits");
    fails_naming(&run(dir.path(), "conform", hello, above), "set_bits");
    // The same program with counts that can be is measured.
    let hello = r#"{"name":"counts","addressed_bits":2000,"k":3}"#;
    let out = run(dir.path(), "sweep", hello, good_stats);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_name_with_control_characters_reaches_no_output_raw() {
    let dir = tempfile::tempdir().unwrap();
    let hello = r#"{"name":"evil\nname\u001b[31m|x","addressed_bits":2000,"k":3}"#;
    let stats = r#"{"addressed_bits":2000}"#;
    let script = dir.path().join("speaker.sh");
    fs::write(&script, SPEAKER).unwrap();
    let filter = format!("exec:bash {} '{hello}' '{stats}'", script.display());
    for format in ["markdown", "table", "csv"] {
        let out = Command::new(BIN)
            .args([
                "sweep-size",
                "--filter",
                &filter,
                "--n",
                "200",
                "--m",
                "2000",
            ])
            .args(["--queries", "1000", "--quiet", "--format", format])
            .env("BLOOMLAB_EXEC_TIMEOUT", "60")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!stdout.contains('\u{1b}'), "{format}: {stdout}");
        if format == "csv" {
            assert!(stdout.contains("evil\\nname"), "{stdout}");
        }
    }
}
